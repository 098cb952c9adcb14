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

#include "core/grow.h"
#include "io/outfile.h"
#include "io/pb.h"
#include "io/perfetto_order.h"
#include "pipeprof/io.h"

#define CHUNK_BYTES (1u << 20)
/* Everything of one packet but its strings and annotations, with the slack
 * pb_close may need at each level of nesting. */
#define PACKET_FIXED_MAX 256
#define ANNOTATION_MAX 96 /* one annotation and its interned entries, but their text */

#define SEQUENCE_ID 1
#define CLOCK_BOOTTIME 6 /* ClockSnapshot.Clock.BuiltinClocks: the trace clock */

/* Field numbers of Perfetto's trace proto (tests/io/perfetto_subset.proto). */
enum {
    TRACE_PACKET = 1,
    PACKET_TIMESTAMP = 8, PACKET_SEQUENCE_ID = 10, PACKET_TRACK_EVENT = 11,
    PACKET_INTERNED_DATA = 12, PACKET_SEQUENCE_FLAGS = 13, PACKET_DEFAULTS = 59,
    PACKET_TRACK_DESCRIPTOR = 60,
    DEFAULTS_CLOCK_ID = 58,
    TRACK_UUID = 1, TRACK_NAME = 2, TRACK_PROCESS = 3, TRACK_THREAD = 4, TRACK_PARENT = 5,
    TRACK_COUNTER = 8,
    PROCESS_PID = 1, PROCESS_NAME = 6,
    THREAD_PID = 1, THREAD_TID = 2, THREAD_NAME = 5,
    EVENT_ANNOTATIONS = 4, EVENT_TYPE = 9, EVENT_NAME_IID = 10, EVENT_TRACK_UUID = 11,
    EVENT_DOUBLE_COUNTER = 44, EVENT_FLOW_IDS = 47, EVENT_TERMINATING_FLOW_IDS = 48,
    ANNOTATION_NAME_IID = 1, ANNOTATION_UINT = 3, ANNOTATION_INT = 4, ANNOTATION_DOUBLE = 5,
    ANNOTATION_STRING = 6, ANNOTATION_STRING_IID = 17,
    INTERNED_EVENT_NAMES = 2, INTERNED_ANNOTATION_NAMES = 3, INTERNED_STRING_VALUES = 29,
    ENTRY_IID = 1, ENTRY_TEXT = 2 /* EventName.name, DebugAnnotationName.name, InternedString.str */
};

enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };

/* The three interning tables a packet can add to. */
enum { TABLE_EVENT_NAMES, TABLE_ANNOTATION_NAMES, TABLE_STRING_VALUES, TABLE_COUNT };
static const uint32_t table_fields[TABLE_COUNT] = {
    INTERNED_EVENT_NAMES, INTERNED_ANNOTATION_NAMES, INTERNED_STRING_VALUES};

/* Strings the writer adds to the model's: id = string count + index. */
enum {
    FX_STAGE, FX_BATCH, FX_HW_NS, FX_TRANSFER_NS, FX_ROLE, FX_REGION_ID, FX_RANGE_ID,
    FX_TRACE_INFO, FX_VERSION, FX_LEVEL, FX_PROCESS_NAME, FX_DROPPED_RECORDS,
    FX_TRUNCATED_BYTES, FX_IGNORED_EVENTS, FX_UNMATCHED_ENDS,
    FX_RECORDING_THREAD, FX_TID, FX_NAME, FX_RECORDED, FX_DROPPED,
    FX_ROLES /* + pp_role */
};
static const char *const fixed_strings[] = {
    "stage", "batch", "hw_ns", "transfer_ns", "role", "region_id", "range_id",
    "trace info", "pipeprof_version", "level", "process_name", "dropped_records",
    "truncated_bytes", "ignored_events", "unmatched_ends",
    "recording thread", "tid", "name", "recorded", "dropped",
    "span", "exec", "partition", "merge", "stage", "op", "user"};
#define FIXED_COUNT (sizeof fixed_strings / sizeof *fixed_strings)

typedef struct counter_slot {
    uint64_t key; /* (track << 32 | name) + 1; 0 = empty */
    uint64_t uuid;
} counter_slot;

typedef struct intern_ref {
    uint8_t table;
    uint32_t id;
} intern_ref;

typedef struct writer {
    pp_outfile out;
    const pp_model *m;
    pp_event_columns c;
    uint8_t *buf, *p, *end;      /* chunk being filled: [buf, p) written */
    uint32_t nstrings;           /* model strings; fixed strings follow */
    const char **text;           /* string id -> text */
    size_t *len;                 /* string id -> length */
    uint8_t *interned[TABLE_COUNT]; /* string id -> already in the sequence's table */
    intern_ref *refs;            /* new entries of the packet being written */
    size_t nrefs, refs_cap;
    uint32_t *group_of;          /* track -> group (distinct process, pid) */
    uint32_t ngroups;
    uint64_t group_uuid0, info_uuid, counter_uuid0;
    counter_slot *counters;      /* (track, name) -> counter track uuid */
    size_t counters_cap, ncounters;
    pf_ends ends;                /* slice ends not yet written */
} writer;

static uint64_t track_uuid(uint32_t track) {
    return (uint64_t)track + 1;
}

static void flush(writer *w) {
    pp_outfile_write(&w->out, w->buf, (size_t)(w->p - w->buf));
    w->p = w->buf;
}

/* Makes room for `need` bytes; 0 or PP_ENOMEM. */
static int reserve(writer *w, size_t need) {
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

static int make_strings(writer *w) {
    size_t n = pp_model_string_count(w->m), total = n + FIXED_COUNT;
    w->nstrings = (uint32_t)n;
    w->text = malloc(total * sizeof *w->text);
    w->len = malloc(total * sizeof *w->len);
    if (!w->text || !w->len)
        return PP_ENOMEM;
    for (size_t id = 0; id < total; id++) {
        w->text[id] = id < n ? pp_model_string(w->m, (uint32_t)id) : fixed_strings[id - n];
        w->len[id] = strlen(w->text[id]);
    }
    for (int t = 0; t < TABLE_COUNT; t++)
        if (!(w->interned[t] = calloc(total, 1)))
            return PP_ENOMEM;
    return PP_OK;
}

static uint32_t fixed(const writer *w, unsigned k) {
    return w->nstrings + k;
}

/* The iid of string `id` in `table` (id + 1: iid 0 means none), remembered
 * for the packet's InternedData when the sequence has not seen it yet. The
 * refs array has room for every string of the packet (reserve_refs). */
static uint64_t intern(writer *w, int table, uint32_t id) {
    if (!w->interned[table][id]) {
        w->interned[table][id] = 1;
        w->refs[w->nrefs++] = (intern_ref){(uint8_t)table, id};
    }
    return (uint64_t)id + 1;
}

static int reserve_refs(writer *w, size_t n) {
    while (w->refs_cap < n)
        if (pp_grow((void **)&w->refs, &w->refs_cap, w->refs_cap, sizeof *w->refs))
            return PP_ENOMEM;
    return PP_OK;
}

/* The packet's InternedData: every entry intern() collected for it. */
static uint8_t *put_interned(writer *w, uint8_t *p) {
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

/* Opens a TracePacket (as Trace.packet) with its timestamp when `ts` >= 0,
 * the sequence id and `flags`. */
static uint8_t *open_packet(uint8_t *p, uint8_t **mark, int64_t ts, uint32_t flags) {
    p = pb_open(p, TRACE_PACKET, mark);
    if (ts >= 0)
        p = pb_uint(p, PACKET_TIMESTAMP, (uint64_t)ts);
    p = pb_uint(p, PACKET_SEQUENCE_ID, SEQUENCE_ID);
    return flags ? pb_uint(p, PACKET_SEQUENCE_FLAGS, flags) : p;
}

/* --- groups and track descriptors --- */

static uint64_t mix(uint64_t x) {
    x *= 0x9E3779B97F4A7C15u;
    return x ^ x >> 29;
}

/* One group per distinct (process string, pid) of the track table, numbered
 * in order of first appearance, as the Chrome writer numbers its processes. */
static int map_groups(writer *w, uint32_t **first_out, uint8_t **has_thread_out,
                      uint8_t **simulated_out) {
    size_t n = pp_model_track_count(w->m), nslots = 16, rows = n ? n : 1;
    while (nslots < 2 * n)
        nslots *= 2;
    uint32_t *slots = calloc(nslots, sizeof *slots); /* group + 1, 0 = empty */
    uint32_t *first = malloc(rows * sizeof *first);
    uint8_t *has_thread = calloc(rows, 1), *simulated = calloc(rows, 1);
    w->group_of = malloc(rows * sizeof *w->group_of);
    *first_out = first, *has_thread_out = has_thread, *simulated_out = simulated;
    if (!slots || !first || !has_thread || !simulated || !w->group_of) {
        free(slots);
        return PP_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        const pp_track_info *t = pp_model_track(w->m, i);
        size_t h = mix((uint64_t)t->process << 32 ^ (uint64_t)t->pid) & (nslots - 1);
        for (; slots[h]; h = (h + 1) & (nslots - 1)) {
            const pp_track_info *f = pp_model_track(w->m, first[slots[h] - 1]);
            if (f->process == t->process && f->pid == t->pid)
                break;
        }
        if (!slots[h]) {
            first[w->ngroups++] = i;
            slots[h] = w->ngroups;
        }
        uint32_t g = slots[h] - 1;
        w->group_of[i] = g;
        has_thread[g] |= t->kind == PP_TRACK_KIND_THREAD;
        simulated[g] |= (t->flags & PP_TRACK_SIMULATED) != 0;
    }
    free(slots);
    return PP_OK;
}

#define SIMULATED_SUFFIX " (simulated)"

/* A name field: the string, with " (simulated)" appended when asked. */
static uint8_t *put_name(const writer *w, uint8_t *p, uint32_t field, uint32_t id, int simulated) {
    size_t n = w->len[id], k = simulated ? sizeof SIMULATED_SUFFIX - 1 : 0;
    p = pb_varint(pb_tag(p, field, PB_WIRE_LEN), n + k);
    memcpy(p, w->text[id], n);
    memcpy(p + n, SIMULATED_SUFFIX, k);
    return p + n + k;
}

static int write_group(writer *w, uint32_t g, const pp_track_info *first, int has_thread,
                       int simulated) {
    int rc = reserve(w, PACKET_FIXED_MAX + w->len[first->process] + sizeof SIMULATED_SUFFIX);
    if (rc)
        return rc;
    uint8_t *pkt, *desc, *proc;
    uint8_t *p = open_packet(w->p, &pkt, -1, 0);
    p = pb_open(p, PACKET_TRACK_DESCRIPTOR, &desc);
    p = pb_uint(p, TRACK_UUID, w->group_uuid0 + g);
    if (has_thread) { /* a process: its threads find it by pid */
        p = pb_open(p, TRACK_PROCESS, &proc);
        p = pb_int(p, PROCESS_PID, (int64_t)g + 1);
        p = put_name(w, p, PROCESS_NAME, first->process, simulated);
        p = pb_close(proc, p);
    } else {
        p = put_name(w, p, TRACK_NAME, first->process, simulated);
    }
    w->p = pb_close(pkt, pb_close(desc, p));
    return PP_OK;
}

static int write_track(writer *w, uint32_t i) {
    const pp_track_info *t = pp_model_track(w->m, i);
    uint32_t g = w->group_of[i];
    int rc = reserve(w, PACKET_FIXED_MAX + w->len[t->name] + sizeof SIMULATED_SUFFIX);
    if (rc)
        return rc;
    uint8_t *pkt, *desc, *thread;
    uint8_t *p = open_packet(w->p, &pkt, -1, 0);
    p = pb_open(p, PACKET_TRACK_DESCRIPTOR, &desc);
    p = pb_uint(p, TRACK_UUID, track_uuid(i));
    if (t->kind == PP_TRACK_KIND_THREAD) {
        p = pb_open(p, TRACK_THREAD, &thread);
        p = pb_int(p, THREAD_PID, (int64_t)g + 1);
        p = pb_int(p, THREAD_TID, (int64_t)w->ngroups + 1 + i);
        p = put_name(w, p, THREAD_NAME, t->name, 0);
        p = pb_close(thread, p);
    } else {
        p = pb_uint(p, TRACK_PARENT, w->group_uuid0 + g);
        p = put_name(w, p, TRACK_NAME, t->name, (t->flags & PP_TRACK_SIMULATED) != 0);
    }
    w->p = pb_close(pkt, pb_close(desc, p));
    return PP_OK;
}

/* The trace-info track: named "pipeprof", plus how many records were lost. */
static int write_info_track(writer *w) {
    char name[96];
    uint64_t dropped = pp_model_meta_get(w->m)->dropped_records;
    int n = dropped ? snprintf(name, sizeof name, "pipeprof (%llu records dropped)",
                               (unsigned long long)dropped)
                    : snprintf(name, sizeof name, "pipeprof");
    int rc = reserve(w, PACKET_FIXED_MAX + (size_t)n);
    if (rc)
        return rc;
    uint8_t *pkt, *desc;
    uint8_t *p = open_packet(w->p, &pkt, -1, 0);
    p = pb_open(p, PACKET_TRACK_DESCRIPTOR, &desc);
    p = pb_uint(p, TRACK_UUID, w->info_uuid);
    p = pb_bytes(p, TRACK_NAME, name, (size_t)n);
    w->p = pb_close(pkt, pb_close(desc, p));
    return PP_OK;
}

static int write_descriptors(writer *w) {
    uint32_t *first = NULL;
    uint8_t *has_thread = NULL, *simulated = NULL;
    size_t ntracks = pp_model_track_count(w->m);
    int rc = map_groups(w, &first, &has_thread, &simulated);
    w->group_uuid0 = (uint64_t)ntracks + 1;
    w->info_uuid = w->group_uuid0 + w->ngroups;
    w->counter_uuid0 = w->info_uuid + 1;
    if (!rc)
        rc = write_info_track(w);
    for (uint32_t g = 0; !rc && g < w->ngroups; g++)
        rc = write_group(w, g, pp_model_track(w->m, first[g]), has_thread[g], simulated[g]);
    for (uint32_t i = 0; !rc && i < ntracks; i++)
        rc = write_track(w, i);
    free(first);
    free(has_thread);
    free(simulated);
    return rc;
}

/* The first packet: clears the sequence's incremental state and sets the
 * clock of every later timestamp. */
static int write_first_packet(writer *w) {
    int rc = reserve(w, PACKET_FIXED_MAX);
    if (rc)
        return rc;
    uint8_t *pkt, *defaults;
    uint8_t *p = open_packet(w->p, &pkt, -1, SEQ_INCREMENTAL_STATE_CLEARED);
    p = pb_open(p, PACKET_DEFAULTS, &defaults);
    p = pb_uint(p, DEFAULTS_CLOCK_ID, CLOCK_BOOTTIME);
    w->p = pb_close(pkt, pb_close(defaults, p));
    return PP_OK;
}

/* --- counter tracks --- */

static int grow_counters(writer *w) {
    size_t cap = w->counters_cap ? 2 * w->counters_cap : 64;
    counter_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return PP_ENOMEM;
    for (size_t k = 0; k < w->counters_cap; k++) {
        if (!w->counters[k].key)
            continue;
        size_t h = mix(w->counters[k].key) & (cap - 1);
        while (slots[h].key)
            h = (h + 1) & (cap - 1);
        slots[h] = w->counters[k];
    }
    free(w->counters);
    w->counters = slots;
    w->counters_cap = cap;
    return PP_OK;
}

/* The uuid of the counter track of (track, name); a new one gets its
 * descriptor written first, under the track's group. */
static int counter_track(writer *w, uint32_t track, uint32_t name, uint64_t *uuid) {
    if (2 * (w->ncounters + 1) > w->counters_cap && grow_counters(w))
        return PP_ENOMEM;
    uint64_t key = ((uint64_t)track << 32 | name) + 1;
    size_t h = mix(key) & (w->counters_cap - 1);
    for (; w->counters[h].key; h = (h + 1) & (w->counters_cap - 1))
        if (w->counters[h].key == key) {
            *uuid = w->counters[h].uuid;
            return PP_OK;
        }
    *uuid = w->counter_uuid0 + w->ncounters++;
    w->counters[h] = (counter_slot){key, *uuid};
    int rc = reserve(w, PACKET_FIXED_MAX + w->len[name]);
    if (rc)
        return rc;
    uint8_t *pkt, *desc, *counter;
    uint8_t *p = open_packet(w->p, &pkt, -1, 0);
    p = pb_open(p, PACKET_TRACK_DESCRIPTOR, &desc);
    p = pb_uint(p, TRACK_UUID, *uuid);
    p = pb_uint(p, TRACK_PARENT, w->group_uuid0 + w->group_of[track]);
    p = put_name(w, p, TRACK_NAME, name, 0);
    p = pb_open(p, TRACK_COUNTER, &counter);
    w->p = pb_close(pkt, pb_close(desc, pb_close(counter, p)));
    return PP_OK;
}

/* Writes every pending end at or before `ts` (all of them for INT64_MAX). */
static int write_ends(writer *w, int64_t ts) {
    while (pf_ends_due(&w->ends, ts)) {
        pf_end e = pf_ends_pop(&w->ends);
        int rc = reserve(w, PACKET_FIXED_MAX);
        if (rc)
            return rc;
        uint8_t *pkt, *ev;
        uint8_t *p = open_packet(w->p, &pkt, e.end_ns, SEQ_NEEDS_INCREMENTAL_STATE);
        p = pb_open(p, PACKET_TRACK_EVENT, &ev);
        p = pb_uint(p, EVENT_TYPE, TYPE_SLICE_END);
        p = pb_uint(p, EVENT_TRACK_UUID, e.uuid);
        w->p = pb_close(pkt, pb_close(ev, p));
    }
    return PP_OK;
}

/* --- events --- */

static uint8_t *open_annotation(writer *w, uint8_t *p, uint8_t **mark, uint32_t key) {
    p = pb_open(p, EVENT_ANNOTATIONS, mark);
    return pb_uint(p, ANNOTATION_NAME_IID, intern(w, TABLE_ANNOTATION_NAMES, key));
}

static uint8_t *put_uint_annotation(writer *w, uint8_t *p, uint32_t key, uint64_t v) {
    uint8_t *a;
    p = open_annotation(w, p, &a, key);
    return pb_close(a, pb_uint(p, ANNOTATION_UINT, v));
}

static uint8_t *put_int_annotation(writer *w, uint8_t *p, uint32_t key, int64_t v) {
    uint8_t *a;
    p = open_annotation(w, p, &a, key);
    return pb_close(a, pb_int(p, ANNOTATION_INT, v));
}

static uint8_t *put_string_annotation(writer *w, uint8_t *p, uint32_t key, uint32_t value) {
    uint8_t *a;
    p = open_annotation(w, p, &a, key);
    p = pb_uint(p, ANNOTATION_STRING_IID, intern(w, TABLE_STRING_VALUES, value));
    return pb_close(a, p);
}

/* The pipeline fields that are set, then the model annotations [a, a_end). */
static uint8_t *put_annotations(writer *w, uint8_t *p, size_t i, const pp_annotation *a,
                                const pp_annotation *a_end) {
    const pp_event_columns *c = &w->c;
    if (c->stage[i])
        p = put_string_annotation(w, p, fixed(w, FX_STAGE), c->stage[i]);
    if (c->batch[i] != -1)
        p = put_int_annotation(w, p, fixed(w, FX_BATCH), c->batch[i]);
    if (c->hw_ns[i])
        p = put_uint_annotation(w, p, fixed(w, FX_HW_NS), c->hw_ns[i]);
    if (c->xfer_ns[i])
        p = put_uint_annotation(w, p, fixed(w, FX_TRANSFER_NS), c->xfer_ns[i]);
    if (c->role[i] != PP_ROLE_NONE)
        p = put_string_annotation(w, p, fixed(w, FX_ROLE), fixed(w, FX_ROLES + c->role[i]));
    if (c->kind[i] == PP_EV_REGION)
        p = put_uint_annotation(w, p, fixed(w, FX_REGION_ID), c->id[i]);
    if (c->kind[i] == PP_EV_RANGE)
        p = put_uint_annotation(w, p, fixed(w, FX_RANGE_ID), c->id[i]);
    for (; a < a_end; a++) {
        if (a->type == PP_VALUE_INT) {
            p = put_int_annotation(w, p, a->key, a->v.i);
        } else if (a->type == PP_VALUE_DOUBLE) {
            uint8_t *mark;
            p = open_annotation(w, p, &mark, a->key);
            p = pb_close(mark, pb_double(p, ANNOTATION_DOUBLE, a->v.d));
        } else {
            p = put_string_annotation(w, p, a->key, a->v.s);
        }
    }
    return p;
}

/* The most bytes event i's packet takes, and room for its interning refs. */
static int reserve_event(writer *w, size_t i, const pp_annotation *a, const pp_annotation *a_end) {
    size_t need = PACKET_FIXED_MAX + 8 * ANNOTATION_MAX + w->len[w->c.name[i]] +
                  w->len[w->c.stage[i]] + 2 * FIXED_COUNT * 24;
    /* refs: the name, six pipeline keys, the stage and role values; then a
     * key and a value per annotation */
    int rc = reserve_refs(w, 9 + 2 * (size_t)(a_end - a));
    for (; a < a_end; a++)
        need += ANNOTATION_MAX + w->len[a->key] + (a->type == PP_VALUE_STR ? w->len[a->v.s] : 0);
    return rc ? rc : reserve(w, need);
}

static int write_event(writer *w, size_t i, const pp_annotation *a, const pp_annotation *a_end) {
    const pp_event_columns *c = &w->c;
    int kind = c->kind[i];
    uint64_t uuid = track_uuid(c->track[i]);
    int rc = PP_OK;
    if (kind == PP_EV_COUNTER)
        rc = counter_track(w, c->track[i], c->name[i], &uuid);
    if (!rc)
        rc = reserve_event(w, i, a, a_end);
    if (rc)
        return rc;
    uint8_t *pkt, *ev;
    uint8_t *p = open_packet(w->p, &pkt, c->ts_ns[i], SEQ_NEEDS_INCREMENTAL_STATE);
    p = pb_open(p, PACKET_TRACK_EVENT, &ev);
    p = pb_uint(p, EVENT_TRACK_UUID, uuid);
    switch (kind) {
    case PP_EV_COUNTER:
        p = pb_uint(p, EVENT_TYPE, TYPE_COUNTER);
        p = pb_double(p, EVENT_DOUBLE_COUNTER, c->value[i]);
        break;
    case PP_EV_FLOW:
        p = pb_uint(p, EVENT_TYPE, TYPE_INSTANT);
        p = pb_uint(p, EVENT_NAME_IID, intern(w, TABLE_EVENT_NAMES, c->name[i]));
        p = pb_fixed64(p, c->phase[i] == PP_FLOW_END ? EVENT_TERMINATING_FLOW_IDS : EVENT_FLOW_IDS,
                       c->id[i]);
        break;
    case PP_EV_INSTANT:
        p = pb_uint(p, EVENT_TYPE, TYPE_INSTANT);
        p = pb_uint(p, EVENT_NAME_IID, intern(w, TABLE_EVENT_NAMES, c->name[i]));
        p = put_annotations(w, p, i, a, a_end);
        break;
    default: /* spans, ranges and regions */
        p = pb_uint(p, EVENT_TYPE, TYPE_SLICE_BEGIN);
        p = pb_uint(p, EVENT_NAME_IID, intern(w, TABLE_EVENT_NAMES, c->name[i]));
        p = put_annotations(w, p, i, a, a_end);
        rc = pf_ends_push(&w->ends, c->ts_ns[i] + c->dur_ns[i], uuid);
        break;
    }
    p = pb_close(ev, p);
    w->p = pb_close(pkt, put_interned(w, p));
    return rc;
}

/* "trace info" and one "recording thread" instant per thread on the info
 * track, at the first event's time: the model's metadata, drops included. */
static int write_info(writer *w, int64_t ts) {
    const pp_model_meta *meta = pp_model_meta_get(w->m);
    const char *version = pp_version();
    size_t vlen = strlen(version);
    int rc = reserve_refs(w, 2 * FIXED_COUNT);
    if (!rc)
        rc = reserve(w, PACKET_FIXED_MAX + 8 * ANNOTATION_MAX + vlen + w->len[meta->process_name] +
                            2 * FIXED_COUNT * 24);
    if (rc)
        return rc;
    uint8_t *pkt, *ev, *a;
    uint8_t *p = open_packet(w->p, &pkt, ts, SEQ_NEEDS_INCREMENTAL_STATE);
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
    p = pb_close(ev, p);
    w->p = pb_close(pkt, put_interned(w, p));
    for (size_t k = 0; k < pp_model_thread_count(w->m); k++) {
        const pp_thread_info *t = pp_model_thread(w->m, k);
        if ((rc = reserve(w, PACKET_FIXED_MAX + 4 * ANNOTATION_MAX + w->len[t->name] +
                                 2 * FIXED_COUNT * 24)) != 0)
            return rc;
        p = open_packet(w->p, &pkt, ts, SEQ_NEEDS_INCREMENTAL_STATE);
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

static int write_events(writer *w, const pf_event_ref *order) {
    size_t nanns;
    const pp_annotation *ann = pp_model_annotations(w->m, &nanns);
    int rc = write_info(w, w->c.count ? w->c.ts_ns[order[0].event] : 0);
    for (size_t k = 0; !rc && k < w->c.count; k++) {
        const pf_event_ref *r = &order[k];
        const pp_annotation *a = ann + r->ann_first;
        rc = write_ends(w, w->c.ts_ns[r->event]);
        if (!rc)
            rc = write_event(w, r->event, a, a + r->ann_count);
    }
    return rc ? rc : write_ends(w, INT64_MAX);
}

/* Perfetto timestamps are unsigned: a model that starts before 0 cannot be
 * written (foreign traces may have negative times). */
static int check_times(const writer *w, const char *path, pp_error *err) {
    for (size_t i = 0; i < w->c.count; i++)
        if (w->c.ts_ns[i] < 0)
            return pp_set_error(err, PP_EINVAL,
                                "%s: event %zu starts at %lld ns; Perfetto timestamps cannot be "
                                "negative", path, i, (long long)w->c.ts_ns[i]);
    return PP_OK;
}

static void free_writer(writer *w) {
    free(w->buf);
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
    writer w;
    memset(&w, 0, sizeof w);
    w.m = m;
    pp_model_columns(m, &w.c);
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
        rc = write_descriptors(&w);
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
