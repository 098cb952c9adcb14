/* Reading Chrome Trace Event JSON into the model (docs/format-chrome-json.md).
 *
 * The file is streamed: json_scan.c maps a plain file or keeps a window
 * over a compressed one and cuts it into one value per event, and each
 * event is parsed here from contiguous memory. Written by hand, not with a
 * JSON package: the readers in Debian (jansson, json-c, yajl, and simdjson,
 * which needs the whole document in memory) either hold the whole file (a
 * 2 GB trace, or a .json.gz inflated, would not fit) or convert numbers
 * through double, which loses nanoseconds at epoch-scale microsecond
 * timestamps; simdjson building the model of a mapped plain file was
 * slower than this reader. Measured: docs/format-chrome-json.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "io/chrome_read.h"
#include "io/trace_read.h"
#include "model/event_blank.h"
#include "pipeprof/io.h"

/* Names repeat (every exec of a stage has the same name and stage): a small
 * cache of recent plain strings spares hashing them again. Its key is the
 * string's first eight bytes as a word (jstr_word) and its length. */
static size_t cache_slot(uint64_t head, size_t len) {
    return (size_t)(((head ^ len) * 0x9E3779B97F4A7C15ull) >> 56) & (CHROME_NAME_CACHE - 1);
}

int chrome_intern(reader *r, jcur *c, const jstr *s, uint32_t *id) {
    const char *text;
    size_t len;
    uint64_t head = 0;
    if (!s->escaped && s->len) {
        head = jstr_word(s);
        const chrome_cached_name *hit = &r->names[cache_slot(head, s->len)];
        if (hit->len == s->len && hit->head == head && hit->text &&
            (s->len <= 8 || jscan_same(hit->text + 8, s->s + 8, s->len - 8))) {
            *id = hit->id;
            return PP_OK;
        }
    }
    int rc = jstr_text(s, &r->scratch, &text, &len);
    if (rc == PP_EFORMAT)
        return jcur_fail(c, "bad escape in string");
    if (rc == PP_OK && len && memchr(text, 0, len))
        return jcur_fail(c, "NUL byte inside a string");
    if (rc == PP_OK && pp_model_intern(r->m, text, len, id) != PP_OK)
        rc = PP_ENOMEM;
    if (rc == PP_OK && !s->escaped && len) /* the model's copy outlives the window */
        r->names[cache_slot(head, len)] = (chrome_cached_name){head, pp_model_string(r->m, *id), len, *id};
    return rc;
}

JSCAN_HOT int read_id(reader *r, jcur *c, chrome_id *out) {
    jcur_ws(c);
    if (c->p < c->end && *c->p == '"') {
        jstr s;
        uint32_t id = 0;
        int rc = jcur_string(c, &s);
        if (!rc)
            rc = chrome_intern(r, c, &s, &id);
        out->is_str = 1;
        out->v = id;
        return rc;
    }
    const char *t;
    size_t n;
    const char *at = c->p;
    out->is_str = 0;
    if (jcur_small_int(c, &out->v) == 0)
        return PP_OK;
    int rc = jcur_number(c, &t, &n);
    if (!rc && json_to_i64(t, n, &out->v)) {
        c->p = at;
        return jcur_fail(c, "pid/tid must be an integer or a string");
    }
    return rc;
}

/* Times: a number of microseconds, converted exactly. */
JSCAN_HOT int read_time(jcur *c, const char *key, int64_t *ns) {
    const char *t, *at;
    size_t n;
    jcur_ws(c);
    if (jcur_small_us(c, ns) == 0)
        return PP_OK;
    at = c->p;
    if (c->p < c->end && *c->p == '"')
        return jcur_fail(c, "\"%s\" must be a number of microseconds (got a string)", key);
    int rc = jcur_number(c, &t, &n);
    if (rc)
        return rc;
    if (json_us_to_ns(t, n, ns)) {
        c->p = at;
        return jcur_fail(c, "\"%s\" is not a representable number of microseconds", key);
    }
    return PP_OK;
}

static int read_flow_id(reader *r, jcur *c, uint64_t *id) {
    jcur_ws(c);
    if (c->p < c->end && *c->p == '"') { /* "0x1f" or any text: hashed if not a number */
        jstr s;
        const char *text;
        size_t len;
        int rc = jcur_string(c, &s);
        if (rc || (rc = jstr_text(&s, &r->scratch, &text, &len)))
            return rc == PP_EFORMAT ? jcur_fail(c, "bad escape in string") : rc;
        char buf[32], *end;
        if (len > 0 && len < sizeof buf) {
            memcpy(buf, text, len);
            buf[len] = 0;
            *id = strtoull(buf, &end, 0);
            if (*end == 0)
                return PP_OK;
        }
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < len; i++)
            h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
        *id = h;
        return PP_OK;
    }
    const char *t;
    size_t n;
    int rc = jcur_number(c, &t, &n);
    if (!rc && json_to_u64(t, n, id))
        return jcur_fail(c, "\"id\" must be a non-negative integer or a string");
    return rc;
}

/* The phases whose args hold pipeline fields and annotations. */
static int has_span_args(char ph) {
    switch (ph) {
    case 'X': case 'B': case 'i': case 'I': case 'R': case 'n': case 'b':
        return 1;
    default:
        return 0;
    }
}

/* Parses the fields of one event object. */
static int parse_fields(reader *r, jcur *c, raw_event *e) {
    int rc;
    /* field by field, not a memset of the whole struct: this runs once per
     * event, and only these fields are read before being set */
    e->ph.len = e->name.len = e->cat.len = 0;
    e->ph.escaped = e->name.escaped = e->cat.escaped = 0;
    /* two stores, not e->pid = e->tid = ...: that reloads tid as one wide
     * load right after its narrow stores, a store-forwarding stall that
     * was a tenth of this function's time (perf annotate) */
    e->pid = (chrome_id){0, 0};
    e->tid = (chrome_id){0, 0};
    e->has_ts = e->has_dur = e->has_id = 0;
    e->id = 0;
    e->args = NULL;
    e->args_done = 0;
    e->fields = pp_event_blank();
    r->nanns = 0;
    if ((rc = jcur_expect(c, '{', "at the start of an event")))
        return rc;
    jcur_ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return PP_OK;
    }
    for (;;) {
        jstr key;
        if ((rc = jcur_string(c, &key)) || (rc = jcur_expect(c, ':', "after a key")))
            return rc;
        uint64_t w = jstr_word(&key);
        if (jstr_word_is(&key, w, "ph") || jstr_word_is(&key, w, "name") || jstr_word_is(&key, w, "cat")) {
            jstr *dst = key.s[0] == 'p' ? &e->ph : key.s[0] == 'n' ? &e->name : &e->cat;
            jcur_ws(c);
            if (c->p < c->end && *c->p == '"')
                rc = jcur_string(c, dst);
            else
                rc = jcur_skip(c); /* e.g. a numeric name: keep the event, drop the field */
        } else if (jstr_word_is(&key, w, "pid")) {
            rc = read_id(r, c, &e->pid);
        } else if (jstr_word_is(&key, w, "tid")) {
            rc = read_id(r, c, &e->tid);
        } else if (jstr_word_is(&key, w, "ts")) {
            rc = read_time(c, "ts", &e->ts_ns);
            e->has_ts = 1;
        } else if (jstr_word_is(&key, w, "dur")) {
            rc = read_time(c, "dur", &e->dur_ns);
            e->has_dur = 1;
        } else if (jstr_word_is(&key, w, "id")) {
            rc = read_flow_id(r, c, &e->id);
            e->has_id = 1;
        } else if (jstr_word_is(&key, w, "args")) {
            jcur_ws(c);
            e->args = c->p;
            char ph = e->ph.len == 1 ? e->ph.s[0] : 0;
            if (c->p < c->end && *c->p != '{') {
                rc = jcur_fail(c, "\"args\" must be an object");
            } else if (has_span_args(ph)) { /* "ph" came first: one pass */
                rc = parse_span_args_at(r, c, &e->fields);
                e->args_done = 1;
            } else {
                rc = jcur_skip(c);
            }
            e->args_end = c->p;
        } else {
            rc = jcur_skip(c);
        }
        if (rc)
            return rc;
        jcur_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        return jcur_expect(c, '}', "or ',' after a field of an event");
    }
}

/* ---- turning raw events into model events ---- */

/* Foreign GPU work: fills what args did not give. */
static int role_of_cat(const jstr *cat, pp_event *ev) {
    int copy = jstr_eq(cat, "gpu_memcpy") || jstr_eq(cat, "gpu_memset");
    if (!copy && !jstr_eq(cat, "kernel"))
        return 0;
    if (ev->role == PP_ROLE_NONE)
        ev->role = PP_ROLE_EXEC;
    if (ev->hw_ns == 0)
        ev->hw_ns = (uint64_t)ev->dur_ns;
    if (copy && ev->xfer_ns == 0)
        ev->xfer_ns = (uint64_t)ev->dur_ns;
    return 1;
}

/* The pipeline fields and annotations from args, parsed now if they were
 * not while reading the event. */
static int span_fields(reader *r, jcur *c, const raw_event *e, pp_event *ev) {
    if (e->args_done)
        return PP_OK;
    return parse_span_args(r, c, e, ev);
}

int chrome_add_event(reader *r, const pp_event *ev, const pp_annotation *anns, size_t n) {
    int rc = pp_model_add_event(r->m, ev);
    size_t index = pp_model_event_count(r->m) - 1;
    for (size_t i = 0; i < n && rc == PP_OK; i++) {
        pp_annotation a = anns[i];
        a.event = index;
        rc = pp_model_add_annotation(r->m, &a);
    }
    return rc;
}

static int push_open(reader *r, const pp_event *ev, uint32_t cat) {
    if (pp_grow((void **)&r->open, &r->capopen, r->nopen, sizeof *r->open))
        return PP_ENOMEM;
    open_span *o = &r->open[r->nopen++];
    o->ev = *ev;
    o->cat = cat;
    o->first_ann = r->nopen_anns;
    o->nann = r->nanns;
    for (size_t i = 0; i < r->nanns; i++) {
        if (pp_grow((void **)&r->open_anns, &r->capopen_anns, r->nopen_anns, sizeof *r->open_anns))
            return PP_ENOMEM;
        r->open_anns[r->nopen_anns++] = r->anns[i];
    }
    return PP_OK;
}

/* Closes the innermost open span matching (kind, track or cat/id/name). */
static int close_open(reader *r, jcur *c, const pp_event *end, int async, uint32_t cat) {
    for (size_t k = r->nopen; k-- > 0;) {
        open_span *o = &r->open[k];
        int match = async ? o->ev.kind == PP_EV_RANGE && o->cat == cat && o->ev.id == end->id &&
                                o->ev.name == end->name
                          : o->ev.kind == PP_EV_SPAN && o->ev.track == end->track;
        if (!match)
            continue;
        if (end->ts_ns < o->ev.ts_ns)
            return jcur_fail(c, "end at %lld ns before its begin at %lld ns", (long long)end->ts_ns,
                             (long long)o->ev.ts_ns);
        pp_event ev = o->ev;
        ev.dur_ns = end->ts_ns - ev.ts_ns;
        if (ev.role == PP_ROLE_EXEC && ev.hw_ns == 0)
            ev.hw_ns = (uint64_t)ev.dur_ns; /* a foreign GPU B/E pair */
        int rc = chrome_add_event(r, &ev, o->nann ? r->open_anns + o->first_ann : NULL, o->nann);
        /* drop it (annotations of later entries stay where they are) */
        memmove(o, o + 1, (r->nopen - k - 1) * sizeof *o);
        r->nopen--;
        if (r->nopen == 0)
            r->nopen_anns = 0;
        return rc;
    }
    r->unmatched++;
    return PP_OK;
}

static int emit(reader *r, jcur *c, const raw_event *e) {
    char ph = e->ph.len == 1 ? e->ph.s[0] : 0;
    pp_event ev;
    uint32_t track, cat = 0;
    int rc;
    if (!e->ph.len)
        return jcur_fail(c, "event has no \"ph\"");
    if (ph == 'M')
        return apply_metadata(r, c, e);
    if (!e->has_ts)
        return jcur_fail(c, "event \"%.*s\" has no \"ts\"", (int)(e->name.len > 60 ? 60 : e->name.len), e->name.s);
    if (e->has_dur && e->dur_ns < 0)
        return jcur_fail(c, "negative \"dur\" (%lld ns)", (long long)e->dur_ns);
    if (e->has_dur && e->ts_ns > 0 && e->dur_ns > INT64_MAX - e->ts_ns)
        return jcur_fail(c, "event ends past the largest time (ts + dur overflows)");
    ev = e->fields;
    ev.ts_ns = e->ts_ns;
    if ((rc = chrome_intern(r, c, &e->name, &ev.name)))
        return rc;
    chrome_id pid = e->pid;
    int dialect_event = 0;
    if (ph == 'X' || ph == 'B') {
        if ((rc = span_fields(r, c, e, &ev)))
            return rc;
        chrome_dialect_decide(r, e, &ev);
        /* PipelineProfiler: a device is its cat, a row its tid */
        if (ph == 'X' && r->dialect == PP_DIALECT_PIPELINE_PROFILER && e->cat.len) {
            uint32_t device;
            if ((rc = chrome_intern(r, c, &e->cat, &device)))
                return rc;
            pid = (chrome_id){1, device};
            dialect_event = 1;
        }
    }
    if ((rc = chrome_tracks_get(&r->tracks, r->m, pid, e->tid, &track)))
        return rc;
    ev.track = track;
    if (dialect_event) {
        r->tracks.tracks[track].device_cat = (uint32_t)pid.v;
        if ((rc = chrome_dialect_event(r, e, &ev)))
            return rc;
    }
    if (chrome_bookkeeping(r, e))
        r->tracks.tracks[track].bookkeeping = 1;
    else if (ph != 'E' && ph != 'e')
        r->tracks.tracks[track].work = 1;
    switch (ph) {
    case 'X':
    case 'B':
        ev.dur_ns = e->has_dur ? e->dur_ns : 0;
        if (role_of_cat(&e->cat, &ev))
            r->tracks.tracks[track].gpu = 1;
        if (ev.kind != PP_EV_REGION) /* args.region_id makes it a region */
            ev.kind = jstr_eq(&e->cat, "region") ? PP_EV_REGION : PP_EV_SPAN;
        if ((rc = chrome_keep_cat(r, c, &e->cat, chrome_written_cat(ph, &ev))))
            return rc;
        if (ph == 'B')
            return push_open(r, &ev, 0);
        return chrome_add_event(r, &ev, r->anns, r->nanns);
    case 'E':
        return close_open(r, c, &ev, 0, 0);
    case 'i': case 'I': case 'R': case 'n':
        if ((rc = span_fields(r, c, e, &ev)) || (rc = chrome_keep_cat(r, c, &e->cat, NULL)))
            return rc;
        ev.kind = PP_EV_INSTANT;
        return chrome_add_event(r, &ev, r->anns, r->nanns);
    case 'C':
        return emit_counters(r, c, e, &ev);
    case 's': case 't': case 'f':
        ev.kind = PP_EV_FLOW;
        ev.id = e->id;
        ev.phase = ph == 's' ? PP_FLOW_BEGIN : ph == 't' ? PP_FLOW_STEP : PP_FLOW_END;
        if ((rc = chrome_keep_cat(r, c, &e->cat, "flow")))
            return rc;
        return chrome_add_event(r, &ev, r->anns, r->nanns);
    case 'b': case 'e':
        ev.kind = PP_EV_RANGE;
        ev.id = e->id;
        if ((rc = chrome_intern(r, c, &e->cat, &cat)))
            return rc;
        if (ph == 'e')
            return close_open(r, c, &ev, 1, cat);
        if ((rc = span_fields(r, c, e, &ev)) || (rc = chrome_keep_cat(r, c, &e->cat, "range")))
            return rc;
        return push_open(r, &ev, cat);
    default:
        r->ignored++;
        return PP_OK;
    }
}

/* ---- the file ---- */

/* Most events are parsed in place in the window; one that does not fit
 * (or is broken) is cut out whole by the scanner and parsed again, so that
 * errors point at the right place and large events still work. */
#define IN_PLACE_WINDOW (64 * 1024)

static int parse_event(reader *r) {
    jreader *j = &r->j;
    raw_event e;
    int rc = jreader_ensure(j, IN_PLACE_WINDOW);
    if (rc)
        return rc;
    /* a mapped file is all in the window: the in-place parse stops where the
     * scanner would refuse the value as too long */
    size_t in_place = j->len - j->pos < JSON_MAX_VALUE_BYTES ? j->len - j->pos : JSON_MAX_VALUE_BYTES;
    jcur c = {j, j->buf + j->pos, j->buf + j->pos + in_place};
    size_t nevents = pp_model_event_count(r->m);
    if (parse_fields(r, &c, &e) == PP_OK) {
        j->pos = (size_t)(c.p - j->buf);
        return emit(r, &c, &e);
    }
    if (j->rc != PP_EFORMAT || pp_model_event_count(r->m) != nevents)
        return j->rc;
    jreader_clear_error(j);
    size_t start, end;
    if ((rc = jreader_value(j, &start, &end)))
        return rc;
    c = (jcur){j, j->buf + start, j->buf + end};
    if ((rc = parse_fields(r, &c, &e)))
        return rc;
    return emit(r, &c, &e);
}

static int read_events(reader *r, int bare_array) {
    jreader *j = &r->j;
    int ch = jreader_peek(j);
    if (ch == -2)
        return j->rc;
    if (ch != '[')
        return jreader_fail(j, j->pos, "expected '[' to start the event list");
    j->pos++;
    for (int first = 1;; first = 0) {
        ch = jreader_peek(j);
        if (ch == -2)
            return j->rc;
        if (ch == -1) {
            if (bare_array) /* Chrome writes "[ev, ev," and stops when killed */
                return PP_OK;
            return jreader_fail(j, j->len, "unexpected end of file in the event list (the file may be truncated)");
        }
        if (ch == ']' && first) {
            j->pos++;
            return PP_OK;
        }
        int rc = parse_event(r);
        if (rc)
            return rc;
        ch = jreader_peek(j);
        if (ch == -2)
            return j->rc;
        if (ch == ',') {
            j->pos++;
            if (bare_array && jreader_peek(j) == -1)
                return PP_OK;
            continue;
        }
        if (ch == ']') {
            j->pos++;
            return PP_OK;
        }
        if (ch == -1 && bare_array)
            return PP_OK;
        if (ch == -1)
            return jreader_fail(j, j->len, "unexpected end of file in the event list (the file may be truncated)");
        return jreader_fail(j, j->pos, "expected ',' or ']' after an event (got '%c')", ch);
    }
}

/* The object form: {"traceEvents": [...], "otherData": {...}, ...}. */
static int read_object(reader *r) {
    jreader *j = &r->j;
    int rc, ch, seen_events = 0;
    j->pos++; /* '{' */
    for (int first = 1;; first = 0) {
        ch = jreader_peek(j);
        if (ch == '}' && first)
            break;
        if (ch < 0)
            return ch == -2 ? j->rc : jreader_fail(j, j->len, "unexpected end of file (the file may be truncated)");
        size_t start, end;
        if (ch != '"')
            return jreader_fail(j, j->pos, "expected a key in the top-level object (got '%c')", ch);
        if ((rc = jreader_value(j, &start, &end)))
            return rc;
        int is_events = end - start == 13 && memcmp(j->buf + start, "\"traceEvents\"", 13) == 0;
        int is_other = end - start == 11 && memcmp(j->buf + start, "\"otherData\"", 11) == 0;
        ch = jreader_peek(j);
        if (ch != ':')
            return ch == -2 ? j->rc : jreader_fail(j, ch < 0 ? j->len : j->pos, "expected ':' after a key");
        j->pos++;
        if ((ch = jreader_peek(j)) < 0)
            return ch == -2 ? j->rc : jreader_fail(j, j->len, "unexpected end of file (the file may be truncated)");
        if (is_events) {
            if ((rc = read_events(r, 0)))
                return rc;
            seen_events = 1;
        } else {
            if ((rc = jreader_value(j, &start, &end)))
                return rc;
            jcur c = {j, j->buf + start, j->buf + end};
            if ((rc = is_other ? read_other_data(r, &c) : jcur_skip(&c)))
                return rc;
        }
        ch = jreader_peek(j);
        if (ch == ',') {
            j->pos++;
            continue;
        }
        if (ch == '}')
            break;
        if (ch == -2)
            return j->rc;
        return jreader_fail(j, ch < 0 ? j->len : j->pos, "expected ',' or '}' in the top-level object");
    }
    j->pos++;
    if (!seen_events)
        return jreader_fail(j, j->pos - 1, "no \"traceEvents\" in the top-level object");
    ch = jreader_peek(j);
    if (ch >= 0)
        return jreader_fail(j, j->pos, "unexpected data after the top-level object");
    return ch == -2 ? j->rc : PP_OK;
}

static int finish(reader *r) {
    pp_model_meta *meta = pp_model_meta_mut(r->m);
    r->unmatched += r->nopen;
    if (r->have_file_meta) {
        meta->level = r->file_meta.level;
        meta->process_name = r->file_meta.process_name;
        meta->dropped_records = r->file_meta.dropped_records;
        meta->truncated_bytes = r->file_meta.truncated_bytes;
        meta->ignored_events = r->file_meta.ignored_events;
        meta->unmatched_ends = r->file_meta.unmatched_ends;
        meta->clock = r->file_meta.clock;
        meta->host = r->file_meta.host;
        meta->boot_id = r->file_meta.boot_id;
        meta->alignment = r->file_meta.alignment;
        meta->alignment_error_ns = r->file_meta.alignment_error_ns;
    }
    meta->ignored_events += r->ignored;
    meta->unmatched_ends += r->unmatched;
    return chrome_tracks_finish(&r->tracks, r->m);
}

int pp_chrome_read(const char *path, pp_model **out, pp_error *err) {
    if (!path || !out)
        return pp_set_error(err, PP_EINVAL, "no path or no output model");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pp_set_error(err, errno == ENOENT ? PP_ENOTFOUND : PP_EIO, "%s: cannot open: %s", path,
                            strerror(errno));
    return pp_chrome_read_fd(fd, path, out, err);
}

int pp_chrome_read_fd(int fd, const char *path, pp_model **out, pp_error *err) {
    return pp_chrome_read_fd_dialect(fd, path, PP_DIALECT_AUTO, out, err);
}

int pp_chrome_read_fd_dialect(int fd, const char *path, pp_json_dialect dialect, pp_model **out,
                              pp_error *err) {
    reader r;
    memset(&r, 0, sizeof r);
    r.dialect = dialect;
    *out = NULL;
    int rc = jreader_open(&r.j, fd, path, err);
    if (rc)
        return rc;
    if ((rc = pp_model_create(&r.m))) {
        jreader_close(&r.j);
        return pp_set_error(err, rc, "%s: out of memory", path);
    }
    int ch = jreader_peek(&r.j);
    if (ch == -2)
        rc = r.j.rc;
    else if (ch == -1)
        rc = pp_set_error(err, PP_EFORMAT, "%s: empty file (no trace events)", path);
    else if (ch == '{')
        rc = read_object(&r);
    else if (ch == '[')
        rc = read_events(&r, 1);
    else
        rc = jreader_fail(&r.j, r.j.pos, "expected '{' or '[' at the start of a Chrome trace (got %s)",
                          ch >= 0x20 && ch < 0x7f ? (char[]){'\'', (char)ch, '\'', 0} : "a binary byte");
    if (rc == PP_ENOMEM && err && !err->msg[0])
        pp_set_error(err, rc, "%s: out of memory", path);
    if (rc == PP_OK)
        rc = finish(&r);
    jreader_close(&r.j);
    chrome_tracks_free(&r.tracks);
    free(r.scratch.buf);
    free(r.anns);
    free(r.open);
    free(r.open_anns);
    if (rc != PP_OK) {
        pp_model_free(r.m);
        return rc;
    }
    *out = r.m;
    return PP_OK;
}
