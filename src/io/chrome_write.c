/* Writing a model as Chrome Trace Event JSON (docs/format-chrome-json.md).
 *
 * A trace holds millions of events, so the writer is built for throughput:
 * every model string is escaped and quoted once up front, every track's
 * `"pid":P,"tid":T,"ts":` is rendered once, and each event is formatted with
 * json_emit's integer formatting straight into a large buffer that goes to
 * the output file in big writes. Before each event the writer reserves the
 * most bytes that event can take, so the formatting itself never checks
 * lengths. One event per line keeps the file readable and error positions
 * of readers meaningful.
 *
 * The head (metadata, process and thread names) comes from a model's
 * strings and tracks, and the events may follow in chunks of other models
 * with the same strings and tracks (io/trace_write.h), so that a converter
 * never holds all of them. */
#include <stdlib.h>
#include <string.h>

#include "io/chrome_arg_keys.h"
#include "io/json_check.h"
#include "io/json_emit.h"
#include "io/json_scan.h"
#include "io/outfile.h"
#include "io/track_tids.h"
#include "io/trace_write.h"
#include "model/ann_table.h"
#include "model/columns.h"
#include "pipeprof/io.h"

#define CHUNK_BYTES (1u << 20)
/* Everything of one event but its strings: keys, punctuation and numbers
 * (a range takes two Chrome events; an annotation's key and value are
 * reserved separately). */
#define EVENT_FIXED_MAX 640
#define WHERE_MAX 64 /* ,"pid":P,"tid":T,"ts": */
#define TS_KEY_LEN 6 /* ,"ts": */

#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

typedef struct chrome_file {
    pp_outfile out;
    const pp_model *m; /* strings and tracks: the head's model */
    char *buf, *p, *end;   /* chunk being filled: [buf, p) written, p..end free */
    char *quoted;          /* every model string as a quoted JSON string */
    size_t *quoted_at;     /* string id -> offset in quoted; [count] = total */
    char (*where)[WHERE_MAX]; /* track -> its rendered pid, tid and "ts" key */
    unsigned char *where_len;
    uint32_t nprocs;
    uint32_t *proc_track;  /* Chrome pid - 1 -> first track of that process */
    unsigned char *proc_simulated;
    unsigned char *reserved; /* string id -> RESERVED_* (chrome_arg_keys.h) */
    int any_event; /* an event is written: the next one needs a ',' */
    size_t events_before; /* events of the earlier chunks, for messages */
} chrome_file;
typedef chrome_file writer;

#define role_names chrome_role_cats
static const char *const track_kind_names[] = {"device", "thread", "regions", "async"};
/* indexed by pp_flow_phase; all of one length */
static const char *const flow_heads[] = {"{\"ph\":\"s\",\"bp\":\"e\"",
                                         "{\"ph\":\"t\",\"bp\":\"e\"",
                                         "{\"ph\":\"f\",\"bp\":\"e\""};
#define FLOW_HEAD_LEN 18

/* What an annotation key of the reserved namespace stands for. */
enum { RESERVED_NONE, RESERVED_CAT, RESERVED_JSON, RESERVED_KEY };

static unsigned char reserved_kind(const char *text, size_t len) {
    if (!chrome_key_reserved(text, len))
        return RESERVED_NONE;
    if (chrome_key_is(text, len, CHROME_CAT_KEY))
        return RESERVED_CAT;
    if (len > sizeof CHROME_JSON_PREFIX - 1 && memcmp(text, CHROME_JSON_PREFIX, sizeof CHROME_JSON_PREFIX - 1) == 0)
        return RESERVED_JSON;
    if (len > sizeof CHROME_KEY_PREFIX - 1 && memcmp(text, CHROME_KEY_PREFIX, sizeof CHROME_KEY_PREFIX - 1) == 0)
        return RESERVED_KEY;
    return RESERVED_NONE;
}

static size_t quoted_len(const writer *w, uint32_t id) {
    return w->quoted_at[id + 1] - w->quoted_at[id];
}

static char *put_quoted(const writer *w, char *p, uint32_t id) {
    size_t n = quoted_len(w, id);
    memcpy(p, w->quoted + w->quoted_at[id], n);
    return p + n;
}

/* An annotation's key, quoted, with ANNOTATION_PREFIX when it needs one
 * (chrome_arg_keys.h): the prefix goes after the opening quote. */
static char *put_annotation_key(const writer *w, char *p, uint32_t key) {
    const char *text = pp_model_string(w->m, key);
    size_t skip = w->reserved[key] == RESERVED_JSON  ? sizeof CHROME_JSON_PREFIX - 1
                  : w->reserved[key] == RESERVED_KEY ? sizeof CHROME_KEY_PREFIX - 1
                                                     : 0;
    if (skip) { /* the arg's own key (the prefix has nothing to escape), kept
                 * apart from the event's fields as any annotation's key is */
        *p++ = '"';
        if (chrome_key_needs_prefix(text + skip, strlen(text + skip)))
            PUT_LIT(p, ANNOTATION_PREFIX);
        size_t n = quoted_len(w, key) - 1 - skip;
        memcpy(p, w->quoted + w->quoted_at[key] + 1 + skip, n);
        return p + n;
    }
    if (!chrome_key_needs_prefix(text, strlen(text)))
        return put_quoted(w, p, key);
    PUT_LIT(p, "\"" ANNOTATION_PREFIX);
    size_t n = quoted_len(w, key) - 1;
    memcpy(p, w->quoted + w->quoted_at[key] + 1, n);
    return p + n;
}

static char *put_cstring(char *p, const char *s) {
    return json_put_string(p, s, strlen(s));
}

/* Text that needs no escaping (fixed names), unquoted. */
static char *put_text(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
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
    size_t cap = (size_t)(w->end - w->buf);
    if (need <= cap)
        return PP_OK;
    char *b = realloc(w->buf, need);
    if (!b)
        return PP_ENOMEM;
    w->buf = w->p = b;
    w->end = b + need;
    return PP_OK;
}

/* Escapes every string of the model once: names repeat across millions of
 * events, and a memcpy of the quoted form is what each event then costs. */
static int quote_strings(writer *w) {
    size_t n = pp_model_string_count(w->m), len = 0, cap = 0;
    w->quoted_at = malloc((n + 1) * sizeof *w->quoted_at);
    w->reserved = malloc(n ? n : 1);
    if (!w->quoted_at || !w->reserved)
        return PP_ENOMEM;
    for (size_t id = 0; id < n; id++) {
        const char *text = pp_model_string(w->m, (uint32_t)id);
        size_t text_len = strlen(text);
        w->reserved[id] = reserved_kind(text, text_len);
        if (cap - len < JSON_STRING_MAX(text_len)) {
            cap = 2 * cap + JSON_STRING_MAX(text_len) + 4096;
            char *q = realloc(w->quoted, cap);
            if (!q)
                return PP_ENOMEM;
            w->quoted = q;
        }
        w->quoted_at[id] = len;
        len = (size_t)(json_put_string(w->quoted + len, text, text_len) - w->quoted);
    }
    w->quoted_at[n] = len;
    return PP_OK;
}

static uint64_t process_hash(uint32_t process, int64_t pid) {
    uint64_t h = ((uint64_t)process << 32 ^ (uint64_t)pid) * 0x9E3779B97F4A7C15u;
    return h ^ h >> 29;
}

/* One Chrome process per distinct (process string, pid) of the track table,
 * numbered 1, 2, ... in order of first appearance (an open-addressing table
 * of first tracks finds a track's process). */
static int map_processes(writer *w) {
    size_t n = pp_model_track_count(w->m), nslots = 16;
    while (nslots < 2 * n)
        nslots *= 2;
    size_t rows = n ? n : 1;
    uint32_t *slots = calloc(nslots, sizeof *slots); /* Chrome pid, 0 = empty */
    w->proc_track = malloc(rows * sizeof *w->proc_track);
    w->proc_simulated = calloc(rows, 1);
    w->where = malloc(rows * sizeof *w->where);
    w->where_len = malloc(rows);
    int64_t *tids = malloc(rows * sizeof *tids);
    if (!slots || !w->proc_track || !w->proc_simulated || !w->where || !w->where_len || !tids ||
        track_export_tids(w->m, 1, (int64_t)n, tids) != PP_OK) {
        free(slots);
        free(tids);
        return PP_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        const pp_track_info *t = pp_model_track(w->m, i);
        size_t h = process_hash(t->process, t->pid) & (nslots - 1);
        for (; slots[h]; h = (h + 1) & (nslots - 1)) {
            const pp_track_info *first = pp_model_track(w->m, w->proc_track[slots[h] - 1]);
            if (first->process == t->process && first->pid == t->pid)
                break;
        }
        if (!slots[h]) {
            w->proc_track[w->nprocs++] = i;
            slots[h] = w->nprocs;
        }
        uint32_t pid = slots[h];
        w->proc_simulated[pid - 1] |= (t->flags & PP_TRACK_SIMULATED) != 0;
        char *p = w->where[i];
        PUT_LIT(p, ",\"pid\":");
        p = json_put_u64(p, pid);
        PUT_LIT(p, ",\"tid\":"); /* the OS thread id where it has one, else the row */
        p = json_put_u64(p, tids[i] > 0 ? (uint64_t)tids[i] : (uint64_t)i + 1);
        PUT_LIT(p, ",\"ts\":");
        w->where_len[i] = (unsigned char)(p - w->where[i]);
    }
    free(slots);
    free(tids);
    return PP_OK;
}

static char *put_where(const writer *w, char *p, uint32_t track) {
    memcpy(p, w->where[track], w->where_len[track]);
    return p + w->where_len[track];
}

/* Events are separated by ",\n": one event per line. */
static char *put_separator(writer *w, char *p) {
    if (w->any_event)
        *p++ = ',';
    *p++ = '\n';
    w->any_event = 1;
    return p;
}

static int write_other_data(writer *w) {
    const pp_model_meta *meta = pp_model_meta_get(w->m);
    size_t nthreads = pp_model_thread_count(w->m);
    int rc = reserve(w, 2 * EVENT_FIXED_MAX + JSON_STRING_MAX(strlen(pp_version())) +
                            quoted_len(w, meta->process_name) + quoted_len(w, meta->clock) +
                            quoted_len(w, meta->host) + quoted_len(w, meta->boot_id) +
                            quoted_len(w, meta->alignment));
    if (rc)
        return rc;
    char *p = w->p;
    PUT_LIT(p, "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"pipeprof_version\":");
    p = put_cstring(p, pp_version());
    PUT_LIT(p, ",\"level\":");
    p = json_put_i64(p, meta->level);
    PUT_LIT(p, ",\"process_name\":");
    p = put_quoted(w, p, meta->process_name);
    PUT_LIT(p, ",\"dropped_records\":");
    p = json_put_u64(p, meta->dropped_records);
    PUT_LIT(p, ",\"truncated_bytes\":");
    p = json_put_u64(p, meta->truncated_bytes);
    PUT_LIT(p, ",\"ignored_events\":");
    p = json_put_u64(p, meta->ignored_events);
    PUT_LIT(p, ",\"unmatched_ends\":");
    p = json_put_u64(p, meta->unmatched_ends);
    if (meta->clock || meta->host || meta->boot_id) {
        PUT_LIT(p, ",\"clock\":");
        p = put_quoted(w, p, meta->clock);
        PUT_LIT(p, ",\"host\":");
        p = put_quoted(w, p, meta->host);
        PUT_LIT(p, ",\"boot_id\":");
        p = put_quoted(w, p, meta->boot_id);
    }
    if (meta->alignment || meta->alignment_error_ns) {
        PUT_LIT(p, ",\"alignment\":");
        p = put_quoted(w, p, meta->alignment);
        PUT_LIT(p, ",\"alignment_error_ns\":");
        p = json_put_i64(p, meta->alignment_error_ns);
    }
    PUT_LIT(p, ",\"threads\":[");
    w->p = p;
    for (size_t i = 0; i < nthreads; i++) {
        const pp_thread_info *t = pp_model_thread(w->m, i);
        if ((rc = reserve(w, EVENT_FIXED_MAX + quoted_len(w, t->name))) != 0)
            return rc;
        p = w->p;
        if (i)
            *p++ = ',';
        PUT_LIT(p, "{\"tid\":");
        p = json_put_i64(p, t->tid);
        PUT_LIT(p, ",\"name\":");
        p = put_quoted(w, p, t->name);
        PUT_LIT(p, ",\"recorded\":");
        p = json_put_u64(p, t->recorded);
        PUT_LIT(p, ",\"dropped\":");
        p = json_put_u64(p, t->dropped);
        *p++ = '}';
        w->p = p;
    }
    if ((rc = reserve(w, 32)) != 0)
        return rc;
    PUT_LIT(w->p, "]},\n\"traceEvents\":[");
    return PP_OK;
}

/* `"args":{"sort_index":K}}` closing a metadata event. */
static char *put_sort_index(char *p, int64_t k) {
    PUT_LIT(p, "\"args\":{\"sort_index\":");
    p = json_put_i64(p, k);
    PUT_LIT(p, "}}");
    return p;
}

static int write_process_metadata(writer *w) {
    for (uint32_t k = 0; k < w->nprocs; k++) {
        const pp_track_info *t = pp_model_track(w->m, w->proc_track[k]);
        int rc = reserve(w, EVENT_FIXED_MAX + quoted_len(w, t->process));
        if (rc)
            return rc;
        char *p = put_separator(w, w->p);
        PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
        p = json_put_u64(p, k + 1);
        PUT_LIT(p, ",\"tid\":0,\"args\":{\"name\":");
        p = put_quoted(w, p, t->process);
        if (w->proc_simulated[k]) {
            p--; /* reopen the string for the suffix */
            PUT_LIT(p, " (simulated)\"");
        }
        PUT_LIT(p, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
        p = json_put_u64(p, k + 1);
        PUT_LIT(p, ",\"tid\":0,");
        w->p = put_sort_index(p, k + 1);
    }
    return PP_OK;
}

static int write_track_metadata(writer *w) {
    size_t n = pp_model_track_count(w->m);
    for (uint32_t i = 0; i < n; i++) {
        const pp_track_info *t = pp_model_track(w->m, i);
        int rc = reserve(w, 2 * EVENT_FIXED_MAX + sizeof ",\"hw_mean\":true,\"bookkeeping\":true" +
                                quoted_len(w, t->name) + quoted_len(w, t->process) +
                                quoted_len(w, t->device));
        if (rc)
            return rc;
        char *p = put_separator(w, w->p);
        PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"thread_name\"");
        p = put_where(w, p, i) - TS_KEY_LEN; /* metadata events have no "ts" */
        PUT_LIT(p, ",\"args\":{\"name\":");
        p = put_quoted(w, p, t->name);
        PUT_LIT(p, ",\"pipeprof_track\":{\"kind\":\"");
        p = put_text(p, track_kind_names[t->kind]);
        PUT_LIT(p, "\",\"process\":");
        p = put_quoted(w, p, t->process);
        PUT_LIT(p, ",\"device\":");
        p = put_quoted(w, p, t->device);
        PUT_LIT(p, ",\"stream\":");
        p = json_put_i64(p, t->stream);
        if (t->flags & PP_TRACK_HW_MEAN)
            PUT_LIT(p, ",\"hw_mean\":true");
        if (t->flags & PP_TRACK_BOOKKEEPING)
            PUT_LIT(p, ",\"bookkeeping\":true");
        if (t->flags & PP_TRACK_SIMULATED)
            PUT_LIT(p, ",\"simulated\":true,\"pid\":");
        else
            PUT_LIT(p, ",\"simulated\":false,\"pid\":");
        p = json_put_i64(p, t->pid);
        PUT_LIT(p, ",\"os_tid\":");
        p = json_put_i64(p, t->tid);
        PUT_LIT(p, ",\"sort_index\":");
        p = json_put_i64(p, t->sort_index);
        PUT_LIT(p, "}}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\"");
        p = put_where(w, p, i) - TS_KEY_LEN;
        *p++ = ',';
        w->p = put_sort_index(p, t->sort_index);
    }
    return PP_OK;
}

/* `,"args":{...}` of a span, instant, range or region: the pipeline fields
 * that are set, then the annotations [a, a_end); nothing when there are
 * none. Each field is written with a leading ',' and the first one's comma
 * becomes the '{'. */
static char *put_args(const writer *w, char *p, const pp_cols *c, size_t i,
                      const pp_ann *a, const pp_ann *a_end) {
    char *start = p;
    PUT_LIT(p, ",\"args\":");
    char *open = p;
    if (pp_cols_stage(c, i)) {
        PUT_LIT(p, ",\"stage\":");
        p = put_quoted(w, p, pp_cols_stage(c, i));
    }
    int64_t batch = pp_cols_batch(c, i);
    uint64_t hw = pp_cols_hw(c, i), xfer = pp_cols_xfer(c, i);
    if (batch != -1) {
        PUT_LIT(p, ",\"batch_id\":");
        p = json_put_i64(p, batch);
    }
    if (hw) {
        PUT_LIT(p, ",\"hw_ns\":");
        p = json_put_u64(p, hw);
    }
    if (xfer) {
        PUT_LIT(p, ",\"transfer_ns\":");
        p = json_put_u64(p, xfer);
    }
    if (c->role[i] != PP_ROLE_NONE) {
        PUT_LIT(p, ",\"role\":\"");
        p = put_text(p, role_names[c->role[i]]);
        *p++ = '"';
    }
    if (c->kind[i] == PP_EV_REGION) {
        PUT_LIT(p, ",\"region_id\":");
        p = json_put_u64(p, c->id[i]);
    }
    for (; a < a_end; a++) {
        unsigned char reserved = w->reserved[pp_ann_key(a)];
        if (reserved == RESERVED_CAT && pp_ann_type(a) == PP_VALUE_STR)
            continue; /* the event's "cat" */
        *p++ = ',';
        p = put_annotation_key(w, p, pp_ann_key(a));
        *p++ = ':';
        const char *raw = reserved == RESERVED_JSON && pp_ann_type(a) == PP_VALUE_STR
                              ? pp_model_string(w->m, a->v.s) : NULL;
        if (raw && json_value_ok(raw, strlen(raw)))
            p = put_text(p, raw); /* an array, object, boolean or null as it was read */
        else if (pp_ann_type(a) == PP_VALUE_INT)
            p = json_put_i64(p, a->v.i);
        else if (pp_ann_type(a) == PP_VALUE_DOUBLE)
            p = json_put_double(p, a->v.d);
        else
            p = put_quoted(w, p, a->v.s);
    }
    if (p == open)
        return start;
    *open = '{';
    *p++ = '}';
    return p;
}

static char *put_name_field(const writer *w, char *p, uint32_t name) {
    PUT_LIT(p, ",\"name\":");
    return put_quoted(w, p, name);
}

/* The head of an event up to its name's end: `{"ph":"X","name":N`. */
static char *put_head(const writer *w, char *p, const char *head, size_t head_len,
                      uint32_t name) {
    memcpy(p, head, head_len);
    return put_name_field(w, p + head_len, name);
}

#define HEAD(lit) (lit), sizeof(lit) - 1

/* `,"cat":...`: the category the event was read with (a CHROME_CAT_KEY
 * annotation; "" for none), else `own` (NULL: none). */
static char *put_cat(const writer *w, char *p, const char *own, const pp_ann *a,
                     const pp_ann *a_end) {
    for (; a < a_end; a++)
        if (w->reserved[pp_ann_key(a)] == RESERVED_CAT && pp_ann_type(a) == PP_VALUE_STR) {
            if (quoted_len(w, a->v.s) == 2) /* "" */
                return p;
            PUT_LIT(p, ",\"cat\":");
            return put_quoted(w, p, a->v.s);
        }
    if (!own)
        return p;
    PUT_LIT(p, ",\"cat\":\"");
    p = put_text(p, own);
    *p++ = '"';
    return p;
}

static char *put_event(const writer *w, char *p, const pp_cols *c, size_t i,
                       const pp_ann *a, const pp_ann *a_end) {
    uint32_t track = pp_cols_track(c, i), name = pp_cols_name(c, i);
    switch (c->kind[i]) {
    case PP_EV_SPAN:
    case PP_EV_REGION:
        p = put_head(w, p, HEAD("{\"ph\":\"X\""), name);
        p = put_cat(w, p, c->kind[i] == PP_EV_REGION ? "region" : role_names[c->role[i]], a, a_end);
        p = json_put_us(put_where(w, p, track), pp_cols_ts(c, i));
        PUT_LIT(p, ",\"dur\":");
        p = json_put_us(p, pp_cols_dur(c, i));
        p = put_args(w, p, c, i, a, a_end);
        break;
    case PP_EV_INSTANT:
        p = put_head(w, p, HEAD("{\"ph\":\"i\",\"s\":\"t\""), name);
        p = put_cat(w, p, NULL, a, a_end);
        p = json_put_us(put_where(w, p, track), pp_cols_ts(c, i));
        p = put_args(w, p, c, i, a, a_end);
        break;
    case PP_EV_COUNTER:
        p = put_head(w, p, HEAD("{\"ph\":\"C\""), name);
        p = json_put_us(put_where(w, p, track), pp_cols_ts(c, i));
        PUT_LIT(p, ",\"args\":{\"value\":");
        p = json_put_double(p, c->value[i]);
        *p++ = '}';
        break;
    case PP_EV_FLOW:
        p = put_head(w, p, flow_heads[c->phase[i]], FLOW_HEAD_LEN, name);
        p = put_cat(w, p, "flow", a, a_end);
        PUT_LIT(p, ",\"id\":");
        p = json_put_u64(p, c->id[i]);
        p = json_put_us(put_where(w, p, track), pp_cols_ts(c, i));
        break;
    case PP_EV_RANGE: /* a begin and an end, paired by (cat, id, name) */
        PUT_LIT(p, "{\"ph\":\"b\"");
        char *cat = p;
        p = put_cat(w, p, "range", a, a_end);
        size_t cat_len = (size_t)(p - cat);
        PUT_LIT(p, ",\"id\":");
        p = put_name_field(w, json_put_u64(p, c->id[i]), name);
        p = json_put_us(put_where(w, p, track), pp_cols_ts(c, i));
        p = put_args(w, p, c, i, a, a_end);
        PUT_LIT(p, "},\n{\"ph\":\"e\"");
        memmove(p, cat, cat_len); /* the end pairs with its begin by (cat, id, name) */
        p += cat_len;
        PUT_LIT(p, ",\"id\":");
        p = put_name_field(w, json_put_u64(p, c->id[i]), name);
        p = json_put_us(put_where(w, p, track), pp_cols_end(c, i));
        break;
    }
    *p++ = '}';
    return p;
}

/* The most bytes put_event may write for event i (a range names itself twice). */
static size_t event_max(const writer *w, const pp_cols *c, size_t i,
                        const pp_ann *a, const pp_ann *a_end) {
    size_t need = EVENT_FIXED_MAX + 2 * quoted_len(w, pp_cols_name(c, i)) + quoted_len(w, pp_cols_stage(c, i));
    for (; a < a_end; a++) /* a range writes its cat twice */
        need += 2 + ANNOTATION_PREFIX_LEN + quoted_len(w, pp_ann_key(a)) +
                (pp_ann_type(a) == PP_VALUE_STR ? 2 * quoted_len(w, a->v.s) : JSON_DOUBLE_MAX);
    return need;
}

/* Writes the events of `chunk`. An event whose JSON is longer than the
 * readers take for one value (JSON_MAX_VALUE_BYTES: megabytes of strings
 * that escape to six bytes a byte can get there) is refused, so the writer
 * never leaves a file its own reader rejects. */
static int write_events(writer *w, const pp_model *chunk, pp_error *err) {
    pp_cols c;
    size_t nanns;
    const pp_ann *ann = pp_model_anns(chunk, &nanns), *a = ann;
    const pp_ann *ann_end = ann + nanns;
    pp_model_cols(chunk, &c);
    for (size_t i = 0; i < c.count; i++) {
        const pp_ann *a_end = a;
        while (a_end < ann_end && a_end->event == i)
            a_end++;
        int rc = reserve(w, event_max(w, &c, i, a, a_end));
        if (rc)
            return pp_set_error(err, rc, "%s: out of memory", w->out.path);
        char *start = put_separator(w, w->p);
        w->p = put_event(w, start, &c, i, a, a_end);
        if ((size_t)(w->p - start) > JSON_MAX_VALUE_BYTES)
            return pp_set_error(err, PP_EINVAL,
                                "%s: event %zu of the trace is %zu bytes of JSON; readers take "
                                "at most %u MiB for one event (write .pptrace instead)",
                                w->out.path, w->events_before + i, (size_t)(w->p - start),
                                JSON_MAX_VALUE_BYTES >> 20);
        a = a_end;
    }
    w->events_before += c.count;
    return PP_OK;
}

static int write_head(writer *w) {
    int rc = quote_strings(w);
    if (!rc)
        rc = map_processes(w);
    if (!rc)
        rc = write_other_data(w);
    if (!rc)
        rc = write_process_metadata(w);
    if (!rc)
        rc = write_track_metadata(w);
    return rc;
}

static void free_file(chrome_file *w) {
    free(w->buf);
    free(w->quoted);
    free(w->quoted_at);
    free(w->proc_track);
    free(w->proc_simulated);
    free(w->reserved);
    free(w->where);
    free(w->where_len);
    free(w);
}

static int chrome_open(void **out, const pp_model *head, const char *path, pp_error *err) {
    *out = NULL;
    /* otherData.level must read back: the reader takes -1..2 only */
    int level = pp_model_meta_get(head)->level;
    if (level < -1 || level > 2)
        return pp_set_error(err, PP_EINVAL,
                            "%s: recording level %d is not -1 (unknown), 0, 1 or 2", path, level);
    chrome_file *w = calloc(1, sizeof *w);
    if (!w)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    w->m = head;
    int rc = pp_outfile_open(&w->out, path, err);
    if (rc) {
        free(w);
        return rc;
    }
    w->buf = w->p = malloc(CHUNK_BYTES);
    w->end = w->buf ? w->buf + CHUNK_BYTES : NULL;
    rc = w->buf ? write_head(w) : PP_ENOMEM;
    if (rc) {
        pp_outfile_abort(&w->out);
        free_file(w);
        return pp_set_error(err, rc, "%s: out of memory", path);
    }
    *out = w;
    return PP_OK;
}

static int chrome_events(void *file, const pp_model *chunk, pp_error *err) {
    return write_events(file, chunk, err);
}

static int chrome_close(void *file, int commit, pp_error *err) {
    chrome_file *w = file;
    int rc = PP_OK;
    if (commit && (rc = reserve(w, 4)) != PP_OK)
        pp_set_error(err, rc, "%s: out of memory", w->out.path);
    if (commit && rc == PP_OK) {
        PUT_LIT(w->p, "\n]}\n");
        flush(w);
        rc = pp_outfile_commit(&w->out, err);
    } else {
        pp_outfile_abort(&w->out);
    }
    free_file(w);
    return rc;
}

const trace_writer chrome_writer = {chrome_open, chrome_events, chrome_close};

int pp_chrome_write(const pp_model *m, const char *path, pp_error *err) {
    if (!m || !path)
        return pp_set_error(err, PP_EINVAL, "pp_chrome_write: model and path are required");
    return trace_writer_write(&chrome_writer, m, path, err);
}
