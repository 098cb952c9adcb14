/* The args side of the Chrome JSON reader: pipeline fields and annotations
 * of spans, metadata (M) events, counters and otherData. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/chrome_arg_keys.h"
#include "io/chrome_read.h"
#include "pipeprof/io.h"

typedef int (*key_fn)(reader *r, jcur *c, const jstr *key, void *ctx);

/* Calls fn for each key of the object at the cursor; fn consumes the value.
 * Inline, so that each caller's copy calls its fn directly (span args are
 * read for most events). */
static inline int each_key(reader *r, jcur *c, key_fn fn, void *ctx) {
    int rc = jcur_expect(c, '{', "to start an object");
    if (rc)
        return rc;
    jcur_ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return PP_OK;
    }
    for (;;) {
        jstr key;
        if ((rc = jcur_string(c, &key)) || (rc = jcur_expect(c, ':', "after a key")) ||
            (rc = fn(r, c, &key, ctx)))
            return rc;
        jcur_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        return jcur_expect(c, '}', "or ',' in an object");
    }
}

static char peek(jcur *c) {
    jcur_ws(c);
    return c->p < c->end ? *c->p : 0;
}

static int is_number_start(char ch) {
    return ch == '-' || (ch >= '0' && ch <= '9');
}

/* Reads an integer value for `key`, refusing anything else. */
static int int_value(jcur *c, const char *key, int64_t *out) {
    const char *t, *at = (jcur_ws(c), c->p);
    size_t n;
    if (jcur_small_int(c, out) == 0)
        return PP_OK;
    int rc = jcur_number(c, &t, &n);
    if (!rc && json_to_i64(t, n, out)) {
        c->p = at;
        return jcur_fail(c, "\"%s\" must be an integer", key);
    }
    return rc;
}

static int u64_value(jcur *c, const char *key, uint64_t *out) {
    const char *t, *at = (jcur_ws(c), c->p);
    size_t n;
    int64_t small;
    if (*c->p != '-' && jcur_small_int(c, &small) == 0) {
        *out = (uint64_t)small;
        return PP_OK;
    }
    int rc = jcur_number(c, &t, &n);
    if (!rc && json_to_u64(t, n, out)) {
        c->p = at;
        return jcur_fail(c, "\"%s\" must be a non-negative integer", key);
    }
    return rc;
}

static int string_value(reader *r, jcur *c, uint32_t *id) {
    jstr s;
    int rc = jcur_string(c, &s);
    return rc ? rc : chrome_intern(r, c, &s, id);
}

static int push_annotation(reader *r, const pp_annotation *a) {
    if (pp_grow((void **)&r->anns, &r->capanns, r->nanns, sizeof *r->anns))
        return PP_ENOMEM;
    r->anns[r->nanns++] = *a;
    return PP_OK;
}

/* The id of `prefix` followed by the text of `key`. */
static int intern_prefixed(reader *r, jcur *c, const char *prefix, const jstr *key, uint32_t *id) {
    jscratch tmp = {0};
    const char *text;
    size_t len, plen = strlen(prefix);
    if (jstr_text(key, &tmp, &text, &len)) {
        free(tmp.buf);
        return jcur_fail(c, "bad escape in string");
    }
    char *buf = malloc(plen + len + 1);
    int rc = buf ? PP_OK : PP_ENOMEM;
    if (buf) {
        memcpy(buf, prefix, plen);
        memcpy(buf + plen, text, len);
        rc = memchr(buf, 0, plen + len) ? jcur_fail(c, "NUL byte inside a string")
                                        : pp_model_intern(r->m, buf, plen + len, id);
    }
    free(buf);
    free(tmp.buf);
    return rc;
}

/* The annotation key of an arg: the key itself, or under CHROME_KEY_PREFIX
 * when it starts with the reserved "chrome:" (chrome_arg_keys.h). */
static int arg_key(reader *r, jcur *c, const jstr *key, uint32_t *id) {
    if (key->escaped || chrome_key_reserved(key->s, key->len)) {
        jscratch tmp = {0};
        const char *text;
        size_t len;
        int reserved = jstr_text(key, &tmp, &text, &len) == PP_OK && chrome_key_reserved(text, len);
        free(tmp.buf);
        if (reserved)
            return intern_prefixed(r, c, CHROME_KEY_PREFIX, key, id);
    }
    return chrome_intern(r, c, key, id);
}

/* Any other scalar arg becomes an annotation; an array, object, boolean or
 * null is kept as its JSON text under CHROME_JSON_PREFIX + key, so that a
 * conversion writes it back as it was. */
static int annotation_value(reader *r, jcur *c, const jstr *key) {
    pp_annotation a = {0};
    char ch = peek(c);
    int rc;
    if (ch == '"') {
        a.type = PP_VALUE_STR;
        rc = string_value(r, c, &a.v.s);
    } else if (is_number_start(ch)) {
        const char *t;
        size_t n;
        if ((rc = jcur_number(c, &t, &n)))
            return rc;
        if (!json_is_fractional(t, n) && json_to_i64(t, n, &a.v.i) == PP_OK) {
            a.type = PP_VALUE_INT;
        } else {
            a.type = PP_VALUE_DOUBLE;
            if (json_to_double(t, n, &a.v.d))
                return jcur_fail(c, "malformed number");
        }
    } else {
        const char *from = c->p;
        if ((rc = jcur_skip(c)))
            return rc;
        size_t n = (size_t)(c->p - from);
        if (memchr(from, 0, n))
            return jcur_fail(c, "NUL byte inside a value");
        a.type = PP_VALUE_STR;
        if ((rc = pp_model_intern(r->m, from, n, &a.v.s)) ||
            (rc = intern_prefixed(r, c, CHROME_JSON_PREFIX, key, &a.key)))
            return rc;
        return push_annotation(r, &a);
    }
    if (rc || (rc = arg_key(r, c, key, &a.key)))
        return rc;
    return push_annotation(r, &a);
}

int chrome_keep_cat(reader *r, jcur *c, const jstr *cat, const char *written) {
    if (cat->len == 0 && !written)
        return PP_OK;
    if (written && jstr_eq_n(cat, written, strlen(written)))
        return PP_OK;
    pp_annotation a = {0};
    a.type = PP_VALUE_STR;
    int rc = pp_model_intern(r->m, CHROME_CAT_KEY, sizeof CHROME_CAT_KEY - 1, &a.key);
    if (rc == PP_OK)
        rc = chrome_intern(r, c, cat, &a.v.s);
    return rc ? rc : push_annotation(r, &a);
}

/* Indexed by pp_role, with their lengths (looked up once per span). */
#define ROLE_NAME(text) {text, sizeof text - 1}
static const struct {
    const char *text;
    size_t len;
} role_names[] = {ROLE_NAME("none"), ROLE_NAME("exec"),  ROLE_NAME("partition"), ROLE_NAME("merge"),
                  ROLE_NAME("stage"), ROLE_NAME("op"), ROLE_NAME("user")};

static int span_arg(reader *r, jcur *c, const jstr *key, void *ctx) {
    pp_event *ev = ctx;
    char ch = peek(c);
    if (chrome_key_prefixed(key->s, key->len)) {
        jstr own = {key->s + ANNOTATION_PREFIX_LEN, key->len - ANNOTATION_PREFIX_LEN, key->escaped};
        return annotation_value(r, c, &own);
    }
    uint64_t w = jstr_word(key);
    if (jstr_word_is(key, w, "stage") && ch == '"')
        return string_value(r, c, &ev->stage);
    if ((jstr_word_is(key, w, "batch_id") || jstr_word_is(key, w, "batch")) && is_number_start(ch))
        return int_value(c, "batch_id", &ev->batch);
    if (jstr_word_is(key, w, "hw_ns") && is_number_start(ch))
        return u64_value(c, "hw_ns", &ev->hw_ns);
    if (jstr_eq(key, "transfer_ns") && is_number_start(ch))
        return u64_value(c, "transfer_ns", &ev->xfer_ns);
    if (jstr_eq(key, "region_id") && is_number_start(ch)) {
        ev->kind = PP_EV_REGION;
        return u64_value(c, "region_id", &ev->id);
    }
    if (jstr_word_is(key, w, "role") && ch == '"') {
        jcur save = *c;
        jstr s;
        int rc = jcur_string(c, &s);
        for (size_t i = 0; !rc && i < sizeof role_names / sizeof role_names[0]; i++) {
            if (jstr_eq_n(&s, role_names[i].text, role_names[i].len)) {
                ev->role = (uint8_t)i;
                return PP_OK;
            }
        }
        if (rc)
            return rc;
        *c = save; /* not one of ours: keep it as an annotation */
    }
    return annotation_value(r, c, key);
}

int parse_span_args_at(reader *r, jcur *c, pp_event *ev) {
    return each_key(r, c, span_arg, ev);
}

int parse_span_args(reader *r, jcur *c, const raw_event *e, pp_event *ev) {
    if (!e->args)
        return PP_OK;
    jcur a = {c->r, e->args, e->args_end};
    return each_key(r, &a, span_arg, ev);
}

/* ---- counters ---- */

static int count_numeric(reader *r, jcur *c, const jstr *key, void *ctx) {
    (void)r;
    (void)key;
    if (is_number_start(peek(c)))
        ++*(int *)ctx;
    return jcur_skip(c);
}

typedef struct counter_ctx {
    pp_event *ev;
    const jstr *name;
    int several;
} counter_ctx;

static int counter_arg(reader *r, jcur *c, const jstr *key, void *ctx) {
    counter_ctx *cc = ctx;
    if (!is_number_start(peek(c)))
        return jcur_skip(c);
    const char *t;
    size_t n;
    int rc = jcur_number(c, &t, &n);
    if (rc)
        return rc;
    pp_event ev = *cc->ev;
    if (json_to_double(t, n, &ev.value))
        return jcur_fail(c, "malformed counter value");
    if (cc->several) { /* "name.key" */
        const char *kt, *nt;
        size_t kn, nn;
        jscratch tmp = {0};
        if (jstr_text(cc->name, &r->scratch, &nt, &nn) || jstr_text(key, &tmp, &kt, &kn)) {
            free(tmp.buf);
            return jcur_fail(c, "bad escape in string");
        }
        char buf[512];
        int len = snprintf(buf, sizeof buf, "%.*s.%.*s", (int)nn, nt, (int)kn, kt);
        free(tmp.buf);
        size_t n = (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1;
        if (memchr(buf, 0, n))
            return jcur_fail(c, "NUL byte inside a string");
        if (pp_model_intern(r->m, buf, n, &ev.name))
            return PP_ENOMEM;
    }
    return pp_model_add_event(r->m, &ev);
}

int emit_counters(reader *r, jcur *c, const raw_event *e, pp_event *ev) {
    int numeric = 0;
    if (!e->args)
        return PP_OK;
    ev->kind = PP_EV_COUNTER;
    jcur a = {c->r, e->args, e->args_end};
    int rc = each_key(r, &a, count_numeric, &numeric);
    if (rc)
        return rc;
    counter_ctx cc = {ev, &e->name, numeric > 1};
    a.p = e->args;
    return each_key(r, &a, counter_arg, &cc);
}

/* ---- metadata events ---- */

typedef struct meta_ctx {
    uint32_t name, labels;
    int has_sort;
    int64_t sort;
    int has_track;
    pp_track_info track;
} meta_ctx;

static int bool_value(jcur *c, int *out) {
    jcur_ws(c);
    if (c->end - c->p >= 4 && memcmp(c->p, "true", 4) == 0) {
        c->p += 4;
        *out = 1;
        return PP_OK;
    }
    if (c->end - c->p >= 5 && memcmp(c->p, "false", 5) == 0) {
        c->p += 5;
        *out = 0;
        return PP_OK;
    }
    return jcur_fail(c, "expected true or false");
}

static const char *const track_kinds[] = {"device", "thread", "regions", "async"};

static int pipeprof_track_field(reader *r, jcur *c, const jstr *key, void *ctx) {
    pp_track_info *t = ctx;
    int64_t v;
    int rc, flag = 0;
    if (jstr_eq(key, "kind")) {
        jstr s;
        if ((rc = jcur_string(c, &s)))
            return rc;
        for (int k = 0; k < 4; k++)
            if (jstr_eq_n(&s, track_kinds[k], strlen(track_kinds[k]))) {
                t->kind = (uint8_t)k;
                return PP_OK;
            }
        return jcur_fail(c, "unknown pipeprof_track kind");
    }
    if (jstr_eq(key, "process"))
        return string_value(r, c, &t->process);
    if (jstr_eq(key, "device"))
        return string_value(r, c, &t->device);
    if (jstr_eq(key, "simulated") || jstr_eq(key, "hw_mean") || jstr_eq(key, "bookkeeping")) {
        if ((rc = bool_value(c, &flag)))
            return rc;
        unsigned bit = key->s[0] == 's'   ? PP_TRACK_SIMULATED
                       : key->s[0] == 'h' ? PP_TRACK_HW_MEAN
                                          : PP_TRACK_BOOKKEEPING;
        t->flags = flag ? t->flags | bit : t->flags & ~bit;
        return PP_OK;
    }
    if (jstr_eq(key, "stream") || jstr_eq(key, "sort_index")) {
        if ((rc = int_value(c, "stream", &v)))
            return rc;
        if (v < INT32_MIN || v > INT32_MAX)
            return jcur_fail(c, "value out of range");
        *(key->s[1] == 't' ? &t->stream : &t->sort_index) = (int32_t)v;
        return PP_OK;
    }
    if (jstr_eq(key, "pid"))
        return int_value(c, "pid", &t->pid);
    if (jstr_eq(key, "os_tid"))
        return int_value(c, "os_tid", &t->tid);
    return jcur_skip(c);
}

static int meta_arg(reader *r, jcur *c, const jstr *key, void *ctx) {
    meta_ctx *m = ctx;
    char ch = peek(c);
    if (jstr_eq(key, "name") && ch == '"')
        return string_value(r, c, &m->name);
    if (jstr_eq(key, "labels") && ch == '"')
        return string_value(r, c, &m->labels);
    if (jstr_eq(key, "sort_index") && is_number_start(ch)) {
        m->has_sort = 1;
        return int_value(c, "sort_index", &m->sort);
    }
    if (jstr_eq(key, "pipeprof_track") && ch == '{') {
        m->has_track = 1;
        pp_track_info_init(&m->track);
        return each_key(r, c, pipeprof_track_field, &m->track);
    }
    return jcur_skip(c);
}

/* The id of string `id` without leading and trailing white space (PyTorch
 * writes thread names with a trailing space). */
static int trimmed(reader *r, uint32_t *id) {
    const char *s = pp_model_string(r->m, *id), *e = s + strlen(s);
    const char *b = s;
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    if (b == s && *e == '\0')
        return PP_OK;
    return pp_model_intern(r->m, b, (size_t)(e - b), id);
}

int apply_metadata(reader *r, jcur *c, const raw_event *e) {
    meta_ctx m = {0};
    int rc = PP_OK;
    int process = jstr_eq(&e->name, "process_name") || jstr_eq(&e->name, "process_sort_index") ||
                  jstr_eq(&e->name, "process_labels");
    int thread = jstr_eq(&e->name, "thread_name") || jstr_eq(&e->name, "thread_sort_index");
    if (!process && !thread) {
        r->ignored++;
        return PP_OK;
    }
    if (e->args) {
        jcur a = {c->r, e->args, e->args_end};
        if ((rc = each_key(r, &a, meta_arg, &m)))
            return rc;
    }
    if ((m.name && (rc = trimmed(r, &m.name))) || (m.labels && (rc = trimmed(r, &m.labels))))
        return rc;
    if (process) {
        chrome_process *p = chrome_tracks_process(&r->tracks, e->pid);
        if (!p)
            return PP_ENOMEM;
        if (m.name)
            p->name = m.name;
        if (m.labels)
            p->labels = m.labels;
        if (m.has_sort) {
            p->has_sort = 1;
            p->sort_index = (int32_t)m.sort;
        }
        return PP_OK;
    }
    uint32_t index;
    if ((rc = chrome_tracks_get(&r->tracks, r->m, e->pid, e->tid, &index)))
        return rc;
    chrome_track *t = &r->tracks.tracks[index];
    if (m.name)
        t->name = m.name;
    if (m.has_sort) {
        t->has_sort = 1;
        t->sort_index = (int32_t)m.sort;
    }
    if (m.has_track) {
        t->has_pipeprof = 1;
        t->exact = m.track;
    }
    return PP_OK;
}

/* ---- otherData ---- */

static int thread_field(reader *r, jcur *c, const jstr *key, void *ctx) {
    pp_thread_info *t = ctx;
    if (jstr_eq(key, "tid"))
        return int_value(c, "tid", &t->tid);
    if (jstr_eq(key, "name") && peek(c) == '"')
        return string_value(r, c, &t->name);
    if (jstr_eq(key, "recorded"))
        return u64_value(c, "recorded", &t->recorded);
    if (jstr_eq(key, "dropped"))
        return u64_value(c, "dropped", &t->dropped);
    return jcur_skip(c);
}

static int read_threads(reader *r, jcur *c) {
    int rc = jcur_expect(c, '[', "to start \"threads\"");
    if (rc)
        return rc;
    if (peek(c) == ']') {
        c->p++;
        return PP_OK;
    }
    for (;;) {
        pp_thread_info t = {0};
        if ((rc = each_key(r, c, thread_field, &t)))
            return rc;
        if (pp_model_add_thread(r->m, &t))
            return PP_ENOMEM;
        if (peek(c) == ',') {
            c->p++;
            continue;
        }
        return jcur_expect(c, ']', "or ',' in \"threads\"");
    }
}

static int other_field(reader *r, jcur *c, const jstr *key, void *ctx) {
    pp_model_meta *m = ctx;
    int64_t level;
    int rc;
    if (jstr_eq(key, "pipeprof_version")) {
        r->have_file_meta = 1;
        return jcur_skip(c);
    }
    if (jstr_eq(key, "level") && is_number_start(peek(c))) {
        if ((rc = int_value(c, "level", &level)))
            return rc;
        if (level < -1 || level > 2)
            return jcur_fail(c, "\"level\" must be -1, 0, 1 or 2");
        m->level = (int)level;
        return PP_OK;
    }
    if (jstr_eq(key, "process_name") && peek(c) == '"')
        return string_value(r, c, &m->process_name);
    if (jstr_eq(key, "dropped_records"))
        return u64_value(c, "dropped_records", &m->dropped_records);
    if (jstr_eq(key, "truncated_bytes"))
        return u64_value(c, "truncated_bytes", &m->truncated_bytes);
    if (jstr_eq(key, "ignored_events"))
        return u64_value(c, "ignored_events", &m->ignored_events);
    if (jstr_eq(key, "unmatched_ends"))
        return u64_value(c, "unmatched_ends", &m->unmatched_ends);
    if (jstr_eq(key, "clock") && peek(c) == '"')
        return string_value(r, c, &m->clock);
    if (jstr_eq(key, "host") && peek(c) == '"')
        return string_value(r, c, &m->host);
    if (jstr_eq(key, "boot_id") && peek(c) == '"')
        return string_value(r, c, &m->boot_id);
    if (jstr_eq(key, "alignment") && peek(c) == '"')
        return string_value(r, c, &m->alignment);
    if (jstr_eq(key, "alignment_error_ns") && is_number_start(peek(c))) {
        if ((rc = int_value(c, "alignment_error_ns", &m->alignment_error_ns)))
            return rc;
        if (m->alignment_error_ns < -1)
            return jcur_fail(c, "\"alignment_error_ns\" must be -1 (not known) or more");
        return PP_OK;
    }
    if (jstr_eq(key, "threads") && peek(c) == '[')
        return read_threads(r, c);
    return jcur_skip(c);
}

int read_other_data(reader *r, jcur *c) {
    r->file_meta.level = -1;
    if (peek(c) != '{')
        return jcur_skip(c);
    return each_key(r, c, other_field, &r->file_meta);
}
