/* Writing a model as a Perfetto protobuf trace (docs/format-perfetto.md).
 *
 * The file is one packet sequence: a first packet that clears incremental
 * state and sets the clock, the track descriptors, then the events as
 * TrackEvents in time order (io/perfetto_order.h). Spans become a
 * SLICE_BEGIN and, once every event that starts before their end is
 * written, a SLICE_END, so the file is chronological and a reader can take
 * it as a stream. Names, annotation keys and string values are interned: the
 * packet that first uses one carries it in its InternedData, every later one
 * refers to it by iid (the model's string id + 1).
 *
 * Like the Chrome writer it is built for throughput: before each packet the
 * writer reserves the most bytes the packet can take in a large buffer and
 * encodes into it without further checks (io/pb.h). */
#include <stdlib.h>
#include <string.h>

#include "model/ann_table.h"
#include "core/grow.h"
#include "io/chrome_arg_keys.h"
#include "io/perfetto_writer.h"
#include "pipeprof/io.h"

#define CHUNK_BYTES (1u << 20)
#define ANNOTATION_MAX 96 /* one annotation and its interned entries, but their text */

#define SEQUENCE_ID 1
#define CLOCK_BOOTTIME 6 /* ClockSnapshot.Clock.BuiltinClocks: the trace clock */

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };

static const uint32_t table_fields[TABLE_COUNT] = {
    INTERNED_EVENT_NAMES, INTERNED_ANNOTATION_NAMES, INTERNED_STRING_VALUES};

/* Strings the writer adds to the model's: id = string count + index. */
enum {
    FX_STAGE, FX_BATCH, FX_HW_NS, FX_TRANSFER_NS, FX_ROLE, FX_REGION_ID, FX_RANGE_ID,
    FX_TRACE_INFO, FX_VERSION, FX_LEVEL, FX_PROCESS_NAME, FX_DROPPED_RECORDS,
    FX_TRUNCATED_BYTES, FX_IGNORED_EVENTS, FX_UNMATCHED_ENDS,
    FX_CLOCK, FX_HOST, FX_BOOT_ID, FX_ALIGNMENT, FX_ALIGNMENT_ERROR_NS,
    FX_RECORDING_THREAD, FX_TID, FX_NAME, FX_RECORDED, FX_DROPPED,
    FX_ROLES /* + pp_role */
};
static const char *const fixed_strings[] = {
    "stage", "batch", "hw_ns", "transfer_ns", "role", "region_id", "range_id",
    "trace info", "pipeprof_version", "level", "process_name", "dropped_records",
    "truncated_bytes", "ignored_events", "unmatched_ends",
    "clock", "host", "boot_id", "alignment", "alignment_error_ns",
    "recording thread", "tid", "name", "recorded", "dropped",
    "span", "exec", "partition", "merge", "stage", "op", "user"};
#define FIXED_COUNT (sizeof fixed_strings / sizeof *fixed_strings)

static void flush(pf_writer *w) {
    pp_outfile_write(&w->out, w->buf, (size_t)(w->p - w->buf));
    w->p = w->buf;
}

int pf_reserve(pf_writer *w, size_t need) {
    if ((size_t)(w->end - w->p) >= need)
        return PP_OK;
    flush(w);
    if ((size_t)(w->end - w->buf) >= need)
        return PP_OK;
    uint8_t *b = realloc(w->buf, need);
    if (!b)
        return PP_ENOMEM;
    w->buf = w->p = b;
    w->end = b + need;
    return PP_OK;
}

/* Whether an annotation key is written as "annotation.KEY": the keys the
 * Chrome writer namespaces (io/chrome_arg_keys.h: its fields and keys with
 * the prefix), so both formats name an annotation alike, and the names of
 * this writer's own pipeline fields (FX_STAGE .. FX_RANGE_ID), which a span
 * would otherwise carry twice. */
static int key_collides(const char *key, size_t n) {
    for (unsigned k = FX_STAGE; k <= FX_RANGE_ID; k++)
        if (chrome_key_is(key, n, fixed_strings[k]))
            return 1;
    return chrome_key_needs_prefix(key, n);
}

/* The model's strings, the writer's fixed ones, then a slot per model
 * string for its "annotation." twin, made for the keys that collide. */
static int make_strings(pf_writer *w) {
    size_t n = pp_model_string_count(w->m), total = 2 * n + FIXED_COUNT, nanns;
    w->nstrings = (uint32_t)n;
    w->text = calloc(total, sizeof *w->text);
    w->len = calloc(total, sizeof *w->len);
    if (!w->text || !w->len)
        return PP_ENOMEM;
    for (size_t id = 0; id < n + FIXED_COUNT; id++) {
        w->text[id] = id < n ? pp_model_string(w->m, (uint32_t)id) : fixed_strings[id - n];
        w->len[id] = strlen(w->text[id]);
    }
    const pp_ann *a = pp_model_anns(w->m, &nanns);
    for (size_t i = 0; i < nanns; i++) {
        uint32_t key = pp_ann_key(&a[i]), twin = (uint32_t)(n + FIXED_COUNT + key);
        if (w->text[twin] || !key_collides(w->text[key], w->len[key]))
            continue;
        char *t = malloc(ANNOTATION_PREFIX_LEN + w->len[key] + 1);
        if (!t)
            return PP_ENOMEM;
        memcpy(t, ANNOTATION_PREFIX, ANNOTATION_PREFIX_LEN);
        memcpy(t + ANNOTATION_PREFIX_LEN, w->text[key], w->len[key] + 1);
        w->text[twin] = t;
        w->len[twin] = ANNOTATION_PREFIX_LEN + w->len[key];
    }
    for (int t = 0; t < TABLE_COUNT; t++)
        if (!(w->interned[t] = calloc(total, 1)))
            return PP_ENOMEM;
    return PP_OK;
}

/* The string an annotation key is written as (its twin when it collides). */
static uint32_t annotation_key(const pf_writer *w, uint32_t key) {
    uint32_t twin = w->nstrings + (uint32_t)FIXED_COUNT + key;
    return w->text[twin] ? twin : key;
}

static uint32_t fixed(const pf_writer *w, unsigned k) {
    return w->nstrings + k;
}

/* The iid of string `id` in `table` (id + 1: iid 0 means none), remembered
 * for the packet's InternedData when the sequence has not seen it yet. The
 * refs array has room for every string of the packet (reserve_refs). */
static uint64_t intern(pf_writer *w, int table, uint32_t id) {
    if (!w->interned[table][id]) {
        w->interned[table][id] = 1;
        w->refs[w->nrefs++] = (intern_ref){(uint8_t)table, id};
    }
    return (uint64_t)id + 1;
}

static int reserve_refs(pf_writer *w, size_t n) {
    while (w->refs_cap < n)
        if (pp_grow((void **)&w->refs, &w->refs_cap, w->refs_cap, sizeof *w->refs))
            return PP_ENOMEM;
    return PP_OK;
}

/* The packet's InternedData: every entry intern() collected for it. */
static uint8_t *put_interned(pf_writer *w, uint8_t *p) {
    if (!w->nrefs)
        return p;
    uint8_t *data, *entry;
    p = pb_open(p, PACKET_INTERNED_DATA, &data);
    for (size_t k = 0; k < w->nrefs; k++) {
        uint32_t id = w->refs[k].id;
        p = pb_open(p, table_fields[w->refs[k].table], &entry);
        p = pb_uint(p, ENTRY_IID, (uint64_t)id + 1);
        p = pb_bytes(p, ENTRY_TEXT, w->text[id], w->len[id]);
        p = pb_close(entry, p);
    }
    w->nrefs = 0;
    return pb_close(data, p);
}

uint8_t *pf_open_packet(uint8_t *p, uint8_t **mark, int64_t ts, uint32_t flags) {
    p = pb_open(p, TRACE_PACKET, mark);
    if (ts >= 0)
        p = pb_uint(p, PACKET_TIMESTAMP, (uint64_t)ts);
    p = pb_uint(p, PACKET_SEQUENCE_ID, SEQUENCE_ID);
    return flags ? pb_uint(p, PACKET_SEQUENCE_FLAGS, flags) : p;
}

/* The first packet: clears the sequence's incremental state and sets the
 * clock of every later timestamp. */
static int write_first_packet(pf_writer *w) {
    int rc = pf_reserve(w, PACKET_FIXED_MAX);
    if (rc)
        return rc;
    uint8_t *pkt, *defaults;
    uint8_t *p = pf_open_packet(w->p, &pkt, -1, SEQ_INCREMENTAL_STATE_CLEARED);
    p = pb_open(p, PACKET_DEFAULTS, &defaults);
    p = pb_uint(p, DEFAULTS_CLOCK_ID, CLOCK_BOOTTIME);
    w->p = pb_close(pkt, pb_close(defaults, p));
    return PP_OK;
}

/* Writes every pending end at or before `ts` (all of them for INT64_MAX). */
static int write_ends(pf_writer *w, int64_t ts) {
    while (pf_ends_due(&w->ends, ts)) {
        pf_end e = pf_ends_pop(&w->ends);
        int rc = pf_reserve(w, PACKET_FIXED_MAX);
        if (rc)
            return rc;
        uint8_t *pkt, *ev;
        uint8_t *p = pf_open_packet(w->p, &pkt, e.end_ns, SEQ_NEEDS_INCREMENTAL_STATE);
        p = pb_open(p, PACKET_TRACK_EVENT, &ev);
        p = pb_uint(p, EVENT_TYPE, TYPE_SLICE_END);
        p = pb_uint(p, EVENT_TRACK_UUID, e.uuid);
        w->p = pb_close(pkt, pb_close(ev, p));
    }
    return PP_OK;
}

/* --- events --- */

static uint8_t *open_annotation(pf_writer *w, uint8_t *p, uint8_t **mark, uint32_t key) {
    p = pb_open(p, EVENT_ANNOTATIONS, mark);
    return pb_uint(p, ANNOTATION_NAME_IID, intern(w, TABLE_ANNOTATION_NAMES, key));
}

static uint8_t *put_uint_annotation(pf_writer *w, uint8_t *p, uint32_t key, uint64_t v) {
    uint8_t *a;
    p = open_annotation(w, p, &a, key);
    return pb_close(a, pb_uint(p, ANNOTATION_UINT, v));
}

static uint8_t *put_int_annotation(pf_writer *w, uint8_t *p, uint32_t key, int64_t v) {
    uint8_t *a;
    p = open_annotation(w, p, &a, key);
    return pb_close(a, pb_int(p, ANNOTATION_INT, v));
}

static uint8_t *put_string_annotation(pf_writer *w, uint8_t *p, uint32_t key, uint32_t value) {
    uint8_t *a;
    p = open_annotation(w, p, &a, key);
    p = pb_uint(p, ANNOTATION_STRING_IID, intern(w, TABLE_STRING_VALUES, value));
    return pb_close(a, p);
}

/* The pipeline fields that are set, then the model annotations [a, a_end). */
static uint8_t *put_annotations(pf_writer *w, uint8_t *p, size_t i, const pp_ann *a,
                                const pp_ann *a_end) {
    const pp_cols *c = &w->c;
    if (pp_cols_stage(c, i))
        p = put_string_annotation(w, p, fixed(w, FX_STAGE), pp_cols_stage(c, i));
    int64_t batch = pp_cols_batch(c, i);
    uint64_t hw = pp_cols_hw(c, i), xfer = pp_cols_xfer(c, i);
    if (batch != -1)
        p = put_int_annotation(w, p, fixed(w, FX_BATCH), batch);
    if (hw)
        p = put_uint_annotation(w, p, fixed(w, FX_HW_NS), hw);
    if (xfer)
        p = put_uint_annotation(w, p, fixed(w, FX_TRANSFER_NS), xfer);
    if (c->role[i] != PP_ROLE_NONE)
        p = put_string_annotation(w, p, fixed(w, FX_ROLE), fixed(w, FX_ROLES + c->role[i]));
    if (c->kind[i] == PP_EV_REGION)
        p = put_uint_annotation(w, p, fixed(w, FX_REGION_ID), c->id[i]);
    if (c->kind[i] == PP_EV_RANGE)
        p = put_uint_annotation(w, p, fixed(w, FX_RANGE_ID), c->id[i]);
    for (; a < a_end; a++) {
        uint32_t key = annotation_key(w, pp_ann_key(a));
        if (pp_ann_type(a) == PP_VALUE_INT) {
            p = put_int_annotation(w, p, key, a->v.i);
        } else if (pp_ann_type(a) == PP_VALUE_DOUBLE) {
            uint8_t *mark;
            p = open_annotation(w, p, &mark, key);
            p = pb_close(mark, pb_double(p, ANNOTATION_DOUBLE, a->v.d));
        } else {
            p = put_string_annotation(w, p, key, a->v.s);
        }
    }
    return p;
}

/* The most bytes event i's packet takes, and room for its interning refs. */
static int reserve_event(pf_writer *w, size_t i, const pp_ann *a, const pp_ann *a_end) {
    size_t need = PACKET_FIXED_MAX + 8 * ANNOTATION_MAX + w->len[pp_cols_name(&w->c, i)] +
                  w->len[pp_cols_stage(&w->c, i)] + 2 * FIXED_COUNT * 24;
    /* refs: the name, six pipeline keys, the stage and role values; then a
     * key and a value per annotation */
    int rc = reserve_refs(w, 9 + 2 * (size_t)(a_end - a));
    for (; a < a_end; a++)
        need += ANNOTATION_MAX + w->len[annotation_key(w, pp_ann_key(a))] +
                (pp_ann_type(a) == PP_VALUE_STR ? w->len[a->v.s] : 0);
    return rc ? rc : pf_reserve(w, need);
}

static int write_event(pf_writer *w, size_t i, const pp_ann *a, const pp_ann *a_end) {
    const pp_cols *c = &w->c;
    int kind = c->kind[i];
    uint64_t uuid = pf_track_uuid(pp_cols_track(c, i));
    int rc = PP_OK;
    if (kind == PP_EV_COUNTER)
        rc = pf_counter_track(w, pp_cols_track(c, i), pp_cols_name(c, i), &uuid);
    if (!rc)
        rc = reserve_event(w, i, a, a_end);
    if (rc)
        return rc;
    uint8_t *pkt, *ev;
    uint8_t *p = pf_open_packet(w->p, &pkt, pp_cols_ts(c, i), SEQ_NEEDS_INCREMENTAL_STATE);
    p = pb_open(p, PACKET_TRACK_EVENT, &ev);
    p = pb_uint(p, EVENT_TRACK_UUID, uuid);
    switch (kind) {
    case PP_EV_COUNTER:
        p = pb_uint(p, EVENT_TYPE, TYPE_COUNTER);
        p = pb_double(p, EVENT_DOUBLE_COUNTER, c->value[i]);
        break;
    case PP_EV_FLOW:
        p = pb_uint(p, EVENT_TYPE, TYPE_INSTANT);
        p = pb_uint(p, EVENT_NAME_IID, intern(w, TABLE_EVENT_NAMES, pp_cols_name(c, i)));
        p = pb_fixed64(p, c->phase[i] == PP_FLOW_END ? EVENT_TERMINATING_FLOW_IDS : EVENT_FLOW_IDS,
                       c->id[i]);
        break;
    case PP_EV_INSTANT:
        p = pb_uint(p, EVENT_TYPE, TYPE_INSTANT);
        p = pb_uint(p, EVENT_NAME_IID, intern(w, TABLE_EVENT_NAMES, pp_cols_name(c, i)));
        p = put_annotations(w, p, i, a, a_end);
        break;
    default: /* spans, ranges and regions */
        p = pb_uint(p, EVENT_TYPE, TYPE_SLICE_BEGIN);
        p = pb_uint(p, EVENT_NAME_IID, intern(w, TABLE_EVENT_NAMES, pp_cols_name(c, i)));
        p = put_annotations(w, p, i, a, a_end);
        rc = pf_ends_push(&w->ends, pp_cols_end(c, i), uuid);
        break;
    }
    p = pb_close(ev, p);
    w->p = pb_close(pkt, put_interned(w, p));
    return rc;
}

/* "trace info" and one "recording thread" instant per thread on the info
 * track, at the first event's time: the model's metadata, drops included. */
static int write_info(pf_writer *w, int64_t ts) {
    const pp_model_meta *meta = pp_model_meta_get(w->m);
    const char *version = pp_version();
    size_t vlen = strlen(version);
    int rc = reserve_refs(w, 2 * FIXED_COUNT);
    if (!rc)
        rc = pf_reserve(w, PACKET_FIXED_MAX + 13 * ANNOTATION_MAX + vlen + w->len[meta->process_name] +
                            w->len[meta->clock] + w->len[meta->host] + w->len[meta->boot_id] +
                            w->len[meta->alignment] + 2 * FIXED_COUNT * 24);
    if (rc)
        return rc;
    uint8_t *pkt, *ev, *a;
    uint8_t *p = pf_open_packet(w->p, &pkt, ts, SEQ_NEEDS_INCREMENTAL_STATE);
    p = pb_open(p, PACKET_TRACK_EVENT, &ev);
    p = pb_uint(p, EVENT_TRACK_UUID, w->info_uuid);
    p = pb_uint(p, EVENT_TYPE, TYPE_INSTANT);
    p = pb_uint(p, EVENT_NAME_IID, intern(w, TABLE_EVENT_NAMES, fixed(w, FX_TRACE_INFO)));
    p = open_annotation(w, p, &a, fixed(w, FX_VERSION));
    p = pb_close(a, pb_bytes(p, ANNOTATION_STRING, version, vlen));
    p = put_int_annotation(w, p, fixed(w, FX_LEVEL), meta->level);
    p = put_string_annotation(w, p, fixed(w, FX_PROCESS_NAME), meta->process_name);
    p = put_uint_annotation(w, p, fixed(w, FX_DROPPED_RECORDS), meta->dropped_records);
    p = put_uint_annotation(w, p, fixed(w, FX_TRUNCATED_BYTES), meta->truncated_bytes);
    p = put_uint_annotation(w, p, fixed(w, FX_IGNORED_EVENTS), meta->ignored_events);
    p = put_uint_annotation(w, p, fixed(w, FX_UNMATCHED_ENDS), meta->unmatched_ends);
    if (meta->clock || meta->host || meta->boot_id) {
        p = put_string_annotation(w, p, fixed(w, FX_CLOCK), meta->clock);
        p = put_string_annotation(w, p, fixed(w, FX_HOST), meta->host);
        p = put_string_annotation(w, p, fixed(w, FX_BOOT_ID), meta->boot_id);
    }
    if (meta->alignment || meta->alignment_error_ns) {
        p = put_string_annotation(w, p, fixed(w, FX_ALIGNMENT), meta->alignment);
        p = put_int_annotation(w, p, fixed(w, FX_ALIGNMENT_ERROR_NS), meta->alignment_error_ns);
    }
    p = pb_close(ev, p);
    w->p = pb_close(pkt, put_interned(w, p));
    for (size_t k = 0; k < pp_model_thread_count(w->m); k++) {
        const pp_thread_info *t = pp_model_thread(w->m, k);
        if ((rc = pf_reserve(w, PACKET_FIXED_MAX + 4 * ANNOTATION_MAX + w->len[t->name] +
                                 2 * FIXED_COUNT * 24)) != 0)
            return rc;
        p = pf_open_packet(w->p, &pkt, ts, SEQ_NEEDS_INCREMENTAL_STATE);
        p = pb_open(p, PACKET_TRACK_EVENT, &ev);
        p = pb_uint(p, EVENT_TRACK_UUID, w->info_uuid);
        p = pb_uint(p, EVENT_TYPE, TYPE_INSTANT);
        p = pb_uint(p, EVENT_NAME_IID, intern(w, TABLE_EVENT_NAMES, fixed(w, FX_RECORDING_THREAD)));
        p = put_int_annotation(w, p, fixed(w, FX_TID), t->tid);
        p = put_string_annotation(w, p, fixed(w, FX_NAME), t->name);
        p = put_uint_annotation(w, p, fixed(w, FX_RECORDED), t->recorded);
        p = put_uint_annotation(w, p, fixed(w, FX_DROPPED), t->dropped);
        p = pb_close(ev, p);
        w->p = pb_close(pkt, put_interned(w, p));
    }
    return PP_OK;
}

static int write_events(pf_writer *w, const pf_event_ref *order) {
    size_t nanns;
    const pp_ann *ann = pp_model_anns(w->m, &nanns);
    int rc = write_info(w, w->c.count ? pp_cols_ts(&w->c, order[0].event) : 0);
    for (size_t k = 0; !rc && k < w->c.count; k++) {
        const pf_event_ref *r = &order[k];
        const pp_ann *a = ann + r->ann_first;
        rc = write_ends(w, pp_cols_ts(&w->c, r->event));
        if (!rc)
            rc = write_event(w, r->event, a, a + r->ann_count);
    }
    return rc ? rc : write_ends(w, INT64_MAX);
}

/* Perfetto timestamps are unsigned: a model that starts before 0 cannot be
 * written (foreign traces may have negative times). */
static int check_times(const pf_writer *w, const char *path, pp_error *err) {
    for (size_t i = 0; i < w->c.count; i++)
        if (pp_cols_ts(&w->c, i) < 0)
            return pp_set_error(err, PP_EINVAL,
                                "%s: event %zu starts at %lld ns; Perfetto timestamps cannot be "
                                "negative", path, i, (long long)pp_cols_ts(&w->c, i));
    return PP_OK;
}

static void free_writer(pf_writer *w) {
    free(w->buf);
    if (w->text)
        for (size_t id = (size_t)w->nstrings + FIXED_COUNT; id < 2 * (size_t)w->nstrings + FIXED_COUNT; id++)
            free((void *)w->text[id]); /* the "annotation." twins made */
    free((void *)w->text);
    free(w->len);
    for (int t = 0; t < TABLE_COUNT; t++)
        free(w->interned[t]);
    free(w->refs);
    free(w->group_of);
    free(w->counters);
    pf_ends_free(&w->ends);
}

int pp_perfetto_write(const pp_model *m, const char *path, pp_error *err) {
    if (!m || !path)
        return pp_set_error(err, PP_EINVAL, "pp_perfetto_write: model and path are required");
    pf_writer w;
    memset(&w, 0, sizeof w);
    w.m = m;
    pp_model_cols(m, &w.c);
    int rc = check_times(&w, path, err);
    if (rc)
        return rc;
    pf_event_ref *order = NULL;
    rc = pp_outfile_open(&w.out, path, err);
    if (rc)
        return rc;
    w.buf = w.p = malloc(CHUNK_BYTES);
    w.end = w.buf ? w.buf + CHUNK_BYTES : NULL;
    rc = w.buf ? make_strings(&w) : PP_ENOMEM;
    if (!rc)
        rc = pf_order_events(m, &order);
    if (!rc)
        rc = write_first_packet(&w);
    if (!rc)
        rc = pf_write_descriptors(&w);
    if (!rc)
        rc = write_events(&w, order);
    if (rc) {
        pp_outfile_abort(&w.out);
        pp_set_error(err, rc, rc == PP_ENOMEM ? "%s: out of memory"
                                              : "%s: more than 2^32 - 1 events or annotations "
                                                "of one event", path);
    } else {
        flush(&w);
        rc = pp_outfile_commit(&w.out, err);
    }
    free(order);
    free_writer(&w);
    return rc;
}
