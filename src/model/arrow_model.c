/* The model's tables as Arrow record batches (pipeprof/arrow.h): events,
 * tracks, annotations, strings, threads. docs/tables.md is their schema;
 * the column lists here are in its order.
 *
 * The events table lends the columns the model stores as plain arrays
 * (name, kind, role, phase, id, value) and decodes the narrow ones
 * (model/columns.h) into buffers of their documented type, once, for the
 * columns asked for. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "model/ann_table.h"
#include "model/arrow_build.h"
#include "model/columns.h"

static const char *const event_kinds[] = {"span", "instant", "counter", "flow", "range", "region"};
static const char *const roles[] = {"none", "exec", "partition", "merge", "stage", "op", "user"};
static const char *const phases[] = {"begin", "step", "end"};
static const char *const track_kinds[] = {"device", "thread", "regions", "async"};
static const char *const value_types[] = {"int", "double", "str"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The model's string table as one dictionary: entry i is string id i. */
static const pp_arrow_dict *model_strings(pp_arrow_table *t, const pp_model *m) {
    size_t n = pp_model_string_count(m);
    const char **texts = pp_arrow_alloc(t, n * sizeof *texts);
    if (!texts)
        return NULL;
    for (size_t i = 0; i < n; i++)
        texts[i] = pp_model_string(m, (uint32_t)i);
    return pp_arrow_dict_of(t, texts, n);
}

/* ---- events ---- */

/* A decoded int64 column: get(c, i) for every event; rows equal to
 * null_value are null when nullable. */
typedef int64_t (*decode_fn)(const pp_cols *c, size_t i);

static int64_t dec_ts(const pp_cols *c, size_t i) { return pp_cols_ts(c, i); }
static int64_t dec_dur(const pp_cols *c, size_t i) { return pp_cols_dur(c, i); }
static int64_t dec_batch(const pp_cols *c, size_t i) { return pp_cols_batch(c, i); }
static int64_t dec_hw(const pp_cols *c, size_t i) { return (int64_t)pp_cols_hw(c, i); }
static int64_t dec_xfer(const pp_cols *c, size_t i) { return (int64_t)pp_cols_xfer(c, i); }
static int64_t dec_track(const pp_cols *c, size_t i) { return pp_cols_track(c, i); }
static int64_t dec_stage(const pp_cols *c, size_t i) { return pp_cols_stage(c, i); }
static int64_t dec_name(const pp_cols *c, size_t i) { return pp_cols_name(c, i); }

/* Decodes column `name` into a buffer of 8 (format l/L) or 4 (I) bytes a
 * value, with a validity bitmap when nullable (a value equal to null_value
 * is null). */
static void add_decoded(pp_arrow_table *t, const pp_cols *c, const char *name, const char *format,
                        decode_fn get, int nullable, int64_t null_value, const pp_arrow_dict *d) {
    if (!pp_arrow_wants(t, name))
        return;
    size_t n = c->count, w = format[0] == 'I' ? 4 : 8;
    void *out = pp_arrow_alloc(t, n * w);
    uint8_t *validity = nullable ? pp_arrow_bitmap(t) : NULL;
    if (!out || (nullable && !validity))
        return;
    if (w == 8) {
        int64_t *o = out;
        for (size_t i = 0; i < n; i++)
            o[i] = get(c, i);
    } else {
        uint32_t *o = out;
        for (size_t i = 0; i < n; i++)
            o[i] = (uint32_t)get(c, i);
    }
    for (size_t i = 0; nullable && i < n; i++) {
        int64_t v = w == 8 ? ((const int64_t *)out)[i] : ((const uint32_t *)out)[i];
        if (v == null_value)
            pp_arrow_set_null(validity, i);
    }
    pp_arrow_add(t, name, format, out, validity, d);
}

/* A column the model stores as a plain array, lent as it is. */
static void add_lent(pp_arrow_table *t, const char *name, const char *format, const void *col,
                     const uint8_t *validity, const pp_arrow_dict *d) {
    if (pp_arrow_wants(t, name))
        pp_arrow_add(t, name, format, col, validity, d);
}

static void build_events(pp_arrow_table *t, const pp_model *m) {
    pp_cols c;
    pp_model_cols(m, &c);
    const pp_arrow_dict *strings = NULL; /* made for the first string column wanted */
    const pp_arrow_dict *kinds = pp_arrow_dict_of(t, event_kinds, COUNT(event_kinds));
    const pp_arrow_dict *role_d = pp_arrow_dict_of(t, roles, COUNT(roles));
    const pp_arrow_dict *phase_d = pp_arrow_dict_of(t, phases, COUNT(phases));

    add_decoded(t, &c, "ts_ns", "l", dec_ts, 0, 0, NULL);
    add_decoded(t, &c, "dur_ns", "l", dec_dur, 0, 0, NULL);
    add_lent(t, "kind", "C", c.kind, NULL, kinds);
    if (pp_arrow_wants(t, "name"))
        strings = model_strings(t, m);
    /* 32-bit string ids with no escape are the indices as they are; a
     * narrowed name column (pp_model_narrow) is decoded */
    if (c.name.shift == 2 && (!c.wide || c.wide->col[PP_WIDE_NAME].n == 0) && c.base == 0)
        add_lent(t, "name", "I", c.name.p, NULL, strings);
    else
        add_decoded(t, &c, "name", "I", dec_name, 0, 0, strings);
    add_decoded(t, &c, "track", "I", dec_track, 0, 0, NULL);
    if (pp_arrow_wants(t, "stage") && !strings)
        strings = model_strings(t, m);
    add_decoded(t, &c, "stage", "I", dec_stage, 1, 0, strings);
    add_lent(t, "role", "C", c.role, NULL, role_d);
    add_decoded(t, &c, "batch", "l", dec_batch, 1, -1, NULL);
    add_decoded(t, &c, "hw_ns", "L", dec_hw, 1, 0, NULL);
    add_decoded(t, &c, "xfer_ns", "L", dec_xfer, 0, 0, NULL);
    add_lent(t, "id", "L", c.id, NULL, NULL);
    add_lent(t, "value", "g", c.value, NULL, NULL);
    if (pp_arrow_wants(t, "phase")) {
        uint8_t *flows = pp_arrow_bitmap(t); /* a phase is a flow's only */
        for (size_t i = 0; flows && i < c.count; i++)
            if (c.kind[i] != PP_EV_FLOW)
                pp_arrow_set_null(flows, i);
        pp_arrow_add(t, "phase", "C", c.phase, flows, phase_d);
    }
}

/* ---- tracks, threads, strings ---- */

static void build_tracks(pp_arrow_table *t, const pp_model *m) {
    size_t n = pp_model_track_count(m);
    const pp_track_info *rows = n ? pp_model_track(m, 0) : NULL;
    const pp_arrow_dict *dicts[] = {model_strings(t, m),
                                    pp_arrow_dict_of(t, track_kinds, COUNT(track_kinds))};
    if (pp_arrow_wants(t, "track")) {
        uint32_t *idx = pp_arrow_alloc(t, n * sizeof *idx);
        for (size_t i = 0; idx && i < n; i++)
            idx[i] = (uint32_t)i;
        pp_arrow_add(t, "track", "I", idx, NULL, NULL);
    }
    static const pp_arrow_field head[] = {
        {"kind", PP_AF_U8, PP_NULL_NEVER, 2, offsetof(pp_track_info, kind)},
        {"process", PP_AF_U32, PP_NULL_NEVER, 1, offsetof(pp_track_info, process)},
        {"name", PP_AF_U32, PP_NULL_NEVER, 1, offsetof(pp_track_info, name)},
    };
    pp_arrow_add_rows(t, rows, sizeof *rows, head, COUNT(head), dicts);
    if (pp_arrow_wants(t, "track_name")) { /* "process/name", or name without a process */
        const char **texts = pp_arrow_alloc(t, n * sizeof *texts);
        for (size_t i = 0; texts && i < n; i++) {
            const char *p = pp_model_string(m, rows[i].process), *nm = pp_model_string(m, rows[i].name);
            size_t lp = strlen(p), ln = strlen(nm);
            char *s = pp_arrow_alloc(t, lp + ln + 2);
            if (!s)
                break;
            memcpy(s, p, lp);
            if (lp)
                s[lp++] = '/';
            memcpy(s + lp, nm, ln);
            texts[i] = s;
        }
        if (texts)
            pp_arrow_add_utf8(t, "track_name", pp_arrow_dict_of(t, texts, n));
    }
    static const pp_arrow_field tail[] = {
        {"device", PP_AF_U32, PP_NULL_ZERO, 1, offsetof(pp_track_info, device)},
        {"stream", PP_AF_I32, PP_NULL_NEG1, 0, offsetof(pp_track_info, stream)},
        {"pid", PP_AF_I64, PP_NULL_NEVER, 0, offsetof(pp_track_info, pid)},
        {"tid", PP_AF_I64, PP_NULL_NEVER, 0, offsetof(pp_track_info, tid)},
        {"sort_index", PP_AF_I32, PP_NULL_NEVER, 0, offsetof(pp_track_info, sort_index)},
        {"flags", PP_AF_U32, PP_NULL_NEVER, 0, offsetof(pp_track_info, flags)},
    };
    pp_arrow_add_rows(t, rows, sizeof *rows, tail, COUNT(tail), dicts);
    if (pp_arrow_wants(t, "simulated")) {
        uint8_t *bits = pp_arrow_alloc(t, (n + 7) / 8);
        for (size_t i = 0; bits && i < n; i++)
            if (rows[i].flags & PP_TRACK_SIMULATED)
                bits[i >> 3] |= (uint8_t)(1u << (i & 7));
        pp_arrow_add(t, "simulated", "b", bits, NULL, NULL);
    }
}

static void build_threads(pp_arrow_table *t, const pp_model *m) {
    size_t n = pp_model_thread_count(m);
    const pp_thread_info *rows = n ? pp_model_thread(m, 0) : NULL;
    const pp_arrow_dict *dicts[] = {model_strings(t, m)};
    static const pp_arrow_field f[] = {
        {"tid", PP_AF_I64, PP_NULL_NEVER, 0, offsetof(pp_thread_info, tid)},
        {"name", PP_AF_U32, PP_NULL_NEVER, 1, offsetof(pp_thread_info, name)},
        {"recorded", PP_AF_U64, PP_NULL_NEVER, 0, offsetof(pp_thread_info, recorded)},
        {"dropped", PP_AF_U64, PP_NULL_NEVER, 0, offsetof(pp_thread_info, dropped)},
    };
    pp_arrow_add_rows(t, rows, sizeof *rows, f, COUNT(f), dicts);
}

static void build_strings(pp_arrow_table *t, const pp_model *m) {
    size_t n = pp_model_string_count(m);
    if (pp_arrow_wants(t, "id")) {
        uint32_t *id = pp_arrow_alloc(t, n * sizeof *id);
        for (size_t i = 0; id && i < n; i++)
            id[i] = (uint32_t)i;
        pp_arrow_add(t, "id", "I", id, NULL, NULL);
    }
    if (pp_arrow_wants(t, "text"))
        pp_arrow_add_utf8(t, "text", model_strings(t, m));
}

/* ---- annotations: packed 16-byte rows (model/ann_table.h) ---- */

static void build_annotations(pp_arrow_table *t, const pp_model *m) {
    size_t n;
    const pp_ann *a = pp_model_anns(m, &n);
    const pp_arrow_dict *strings = model_strings(t, m);
    uint32_t *event = pp_arrow_alloc(t, n * 4), *key = pp_arrow_alloc(t, n * 4);
    uint32_t *str = pp_arrow_alloc(t, n * 4);
    uint8_t *type = pp_arrow_alloc(t, n);
    int64_t *i64 = pp_arrow_alloc(t, n * 8);
    double *f64 = pp_arrow_alloc(t, n * 8);
    uint8_t *is_int = pp_arrow_bitmap(t), *is_double = pp_arrow_bitmap(t);
    uint8_t *is_str = pp_arrow_bitmap(t);
    if (!event || !key || !str || !type || !i64 || !f64 || !is_int || !is_double || !is_str)
        return;
    for (size_t i = 0; i < n; i++) {
        event[i] = a[i].event;
        key[i] = pp_ann_key(&a[i]);
        type[i] = pp_ann_type(&a[i]);
        if (type[i] == PP_VALUE_INT)
            i64[i] = a[i].v.i;
        else
            pp_arrow_set_null(is_int, i);
        if (type[i] == PP_VALUE_DOUBLE)
            f64[i] = a[i].v.d;
        else
            pp_arrow_set_null(is_double, i);
        if (type[i] == PP_VALUE_STR)
            str[i] = a[i].v.s;
        else
            pp_arrow_set_null(is_str, i);
    }
    add_lent(t, "event", "I", event, NULL, NULL);
    add_lent(t, "key", "I", key, NULL, strings);
    add_lent(t, "type", "C", type, NULL, pp_arrow_dict_of(t, value_types, COUNT(value_types)));
    add_lent(t, "value_int", "l", i64, is_int, NULL);
    add_lent(t, "value_double", "g", f64, is_double, NULL);
    add_lent(t, "value_str", "I", str, is_str, strings);
}

typedef struct model_table {
    const char *name;
    void (*build)(pp_arrow_table *t, const pp_model *m);
} model_table;

static const model_table model_tables[] = {
    {"events", build_events},   {"track_info", build_tracks},   {"annotations", build_annotations},
    {"strings", build_strings}, {"threads", build_threads},
};

static size_t model_table_rows(const pp_model *m, size_t k) {
    size_t n = 0;
    switch (k) {
    case 0: return pp_model_event_count(m);
    case 1: return pp_model_track_count(m);
    case 2: pp_model_anns(m, &n); return n;
    case 3: return pp_model_string_count(m);
    default: return pp_model_thread_count(m);
    }
}

int pp_arrow_export_model(const pp_model *m, const char *table, const char *columns,
                          struct ArrowSchema *schema, struct ArrowArray *array, pp_error *err) {
    for (size_t k = 0; k < COUNT(model_tables); k++) {
        if (strcmp(model_tables[k].name, table) != 0)
            continue;
        pp_arrow_table *t = pp_arrow_table_new(table, model_table_rows(m, k), columns, m);
        if (!t)
            return PP_ENOMEM;
        model_tables[k].build(t, m);
        return pp_arrow_finish(t, schema, array, err);
    }
    if (err)
        snprintf(err->msg, sizeof err->msg,
                 "no model table \"%s\" (have: events, track_info, annotations, strings, threads)",
                 table);
    return PP_EINVAL;
}
