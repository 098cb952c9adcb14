/* Reading .pptrace (docs/format-pptrace.md).
 *
 * The file is read block by block through one reusable payload buffer, so
 * memory does not grow with the file beyond the model itself; worker
 * threads decode the EVENTS and ANNOTATIONS blocks of a large file ahead of
 * the reader (io/pptrace_read_ahead.h), which still takes every block in
 * file order and applies every check below to it. Nothing in the
 * file is trusted: a block's length is checked against its type's maximum and
 * against the file size before anything is allocated, its CRC before any of
 * it is decoded, and every id, index and enum value before it reaches the
 * model. A file that ends early keeps every complete block. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/error.h"
#include "io/pptrace_codec.h"
#include "io/pptrace_format.h"
#include "io/pptrace_read_ahead.h"
#include "io/trace_read.h"
#include "model/event_slots.h"
#include "pipeprof/io.h"

#define BLOCK_DONE 1 /* read_block: the END block was read */

/* What a read keeps of the events (trace_read.h): all of them; none (their
 * blocks are checked and counted, the rest decoded); or a chunk at a time. */
typedef enum read_mode { READ_WHOLE, READ_SKELETON, READ_CHUNKS } read_mode;

typedef struct reader {
    const char *path;
    int fd;
    pp_error *err;
    pp_model *m;
    uint64_t size;       /* file size when opened */
    uint64_t block_at;   /* offset of the block being read */
    uint64_t payload_at; /* offset of its payload, which lies in buf */
    uint32_t type, len;  /* of the block being read */
    uint32_t version;    /* of the file's header */
    unsigned char *buf;
    size_t cap;
    int seen_meta;
    char lost_what[80];  /* on truncation: what the lost bytes were */
    pptrace_ahead *ahead; /* the workers decoding blocks ahead, or NULL */
    read_mode mode;
    /* Events and annotations read before the model's first: skipped
     * (skeleton) or handed on (chunks). Messages and checks count from 0
     * of the file, as a whole read does. */
    uint64_t event_base, annotation_base;
    uint64_t events_block_first; /* skeleton: the first event of the last EVENTS block */
    int interleaved;             /* skeleton: an ANNOTATIONS block reaches back past it */
    size_t chunk_events;         /* chunks: hand on at least this many at a time */
    pptrace_chunk_fn chunk;
    void *chunk_ctx;
} reader;

/* Events and annotations of the file read so far. */
static uint64_t events_read(const reader *r) {
    return r->event_base + pp_model_event_count(r->m);
}

static uint64_t annotations_read(const reader *r) {
    size_t n;
    pp_model_annotations(r->m, &n);
    return r->annotation_base + n;
}

/* PP_EFORMAT with "FILE: byte AT: PROBLEM". */
static int fail(reader *r, uint64_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(reader *r, uint64_t at, const char *fmt, ...) {
    char problem[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    return pp_set_error(r->err, PP_EFORMAT, "%s: byte %llu: %s", r->path, (unsigned long long)at,
                        problem);
}

/* Ends the read at the current block: everything before it is kept. */
static int truncated(reader *r, const char *what) {
    snprintf(r->lost_what, sizeof r->lost_what, "%s", what);
    return PP_ETRUNCATED;
}

static int no_memory(reader *r) {
    return pp_set_error(r->err, PP_ENOMEM, "%s: out of memory", r->path);
}

/* A pp_model_add_* call failed after our own checks passed: out of memory,
 * or a rule the model has and this reader does not check yet. */
static int model_refused(reader *r, int rc, const char *what, size_t row) {
    if (rc == PP_ENOMEM)
        return no_memory(r);
    return pp_set_error(r->err, PP_EFORMAT, "%s: byte %llu: %s %zu refused by the model: %s",
                        r->path, (unsigned long long)r->block_at, what, row, pp_strerror(rc));
}

/* Reads up to n bytes at file offset `from`; a short count means end of
 * file. PP_EIO on error. */
static int read_bytes(reader *r, uint64_t from, void *dst, size_t n, size_t *got) {
    long k = pptrace_pread(r->fd, dst, n, from);
    *got = k < 0 ? 0 : (size_t)k;
    if (k < 0)
        return pp_set_error(r->err, PP_EIO, "%s: byte %llu: read failed: %s", r->path,
                            (unsigned long long)from, strerror(errno));
    return PP_OK;
}

/* The file offset of a byte of the payload buffer. */
static uint64_t at(const reader *r, const unsigned char *q) {
    return r->payload_at + (uint64_t)(q - r->buf);
}

static int read_header(reader *r) {
    unsigned char h[PPTRACE_HEADER_LEN];
    size_t got;
    int rc = read_bytes(r, 0, h, sizeof h, &got);
    if (rc)
        return rc;
    if (memcmp(h, PPTRACE_MAGIC, got < PPTRACE_MAGIC_LEN ? got : PPTRACE_MAGIC_LEN) != 0)
        return fail(r, 0, "not a .pptrace file (it does not start with \"PPTRACE\\0\")");
    if (got < sizeof h)
        return truncated(r, "an incomplete file header");
    uint32_t version = pptrace_get32(h + 8), flags = pptrace_get32(h + 12);
    if (version < PPTRACE_OLDEST_VERSION || version > PPTRACE_VERSION)
        return fail(r, 8, "unsupported .pptrace version %u (this pipeprof reads versions %u to %u)",
                    version, PPTRACE_OLDEST_VERSION, PPTRACE_VERSION);
    if (flags != 0)
        return fail(r, 12, "unknown header flags 0x%x (version %u defines none)", flags, version);
    r->version = version;
    r->block_at = PPTRACE_HEADER_LEN;
    return PP_OK;
}

#define NO_ROW SIZE_MAX /* check_string: the field belongs to a block, not a row */

/* A string id field: below the number of strings read so far. */
static int check_string(reader *r, const unsigned char *q, const char *what, size_t row,
                        const char *field, uint64_t id) {
    size_t n = pp_model_string_count(r->m);
    char where[48];
    if (id < n)
        return PP_OK;
    snprintf(where, sizeof where, row == NO_ROW ? "%s" : "%s %zu", what, row);
    return fail(r, at(r, q), "%s: %s string id %llu out of range (%zu strings defined before it)",
                where, field, (unsigned long long)id, n);
}

static int decode_strings(reader *r, const unsigned char *p, uint32_t len) {
    if (len < 8)
        return fail(r, r->block_at + 4, "STRINGS block length %u is below its 8-byte head", len);
    const unsigned char *q = p + 8, *end = p + len;
    uint32_t first = pptrace_get32(p), count = pptrace_get32(p + 4);
    if (first != pp_model_string_count(r->m))
        return fail(r, at(r, p), "STRINGS block starts at string id %u, expected %zu", first,
                    pp_model_string_count(r->m));
    if (count > PPTRACE_ROWS_PER_BLOCK)
        return fail(r, at(r, p + 4), "STRINGS block holds %u strings (at most %u allowed)", count,
                    PPTRACE_ROWS_PER_BLOCK);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t want = first + i, id;
        if (end - q < 4 || pptrace_get32(q) > (size_t)(end - q) - 4)
            return fail(r, at(r, q), "string %u runs past the end of its STRINGS block", want);
        uint32_t slen = pptrace_get32(q);
        int rc = pp_model_intern(r->m, (const char *)q + 4, slen, &id);
        if (rc == PP_EINVAL)
            return fail(r, at(r, q + 4), "string %u contains a NUL byte", want);
        if (rc)
            return no_memory(r);
        if (id != want)
            return fail(r, at(r, q), "string %u repeats string %u (each text is stored once)",
                        want, id);
        q += 4 + slen;
    }
    if (q != end)
        return fail(r, at(r, q), "%zu bytes after the last string of the STRINGS block",
                    (size_t)(end - q));
    return PP_OK;
}

static int decode_meta(reader *r, const unsigned char *p) {
    if (r->seen_meta)
        return fail(r, r->block_at, "a second META block (a file has at most one)");
    r->seen_meta = 1;
    int32_t level = (int32_t)pptrace_get32(p);
    if (level < -1 || level > 2)
        return fail(r, at(r, p), "recording level %d is not -1 (unknown), 0, 1 or 2", (int)level);
    int rc = check_string(r, p + 4, "META", NO_ROW, "process_name", pptrace_get32(p + 4));
    if (rc)
        return rc;
    pp_model_meta *meta = pp_model_meta_mut(r->m);
    meta->level = level;
    meta->process_name = pptrace_get32(p + 4);
    meta->dropped_records = pptrace_get64(p + 8);
    meta->truncated_bytes = pptrace_get64(p + 16);
    meta->ignored_events = pptrace_get64(p + 24);
    meta->unmatched_ends = pptrace_get64(p + 32);
    return PP_OK;
}

/* The optional CLOCK block: string ids in range, the error bound -1 or more. */
static int decode_clock(reader *r, const unsigned char *p, uint32_t len) {
    static const char *const fields[] = {"clock", "host", "boot_id", "alignment"};
    if (len != PPTRACE_CLOCK_LEN)
        return fail(r, r->block_at + 4, "CLOCK block length %u (it must be %u)", len,
                    PPTRACE_CLOCK_LEN);
    for (int k = 0; k < 4; k++) {
        int rc = check_string(r, p + 4 * k, "CLOCK", NO_ROW, fields[k], pptrace_get32(p + 4 * k));
        if (rc)
            return rc;
    }
    int64_t error_ns = (int64_t)pptrace_get64(p + 16);
    if (error_ns < -1)
        return fail(r, at(r, p + 16), "CLOCK: alignment error %lld ns is below -1 (not known)",
                    (long long)error_ns);
    pp_model_meta *meta = pp_model_meta_mut(r->m);
    meta->clock = pptrace_get32(p);
    meta->host = pptrace_get32(p + 4);
    meta->boot_id = pptrace_get32(p + 8);
    meta->alignment = pptrace_get32(p + 12);
    meta->alignment_error_ns = error_ns;
    return PP_OK;
}

/* The row count of a table block, checked against the block's length. */
static int table_rows(reader *r, const unsigned char *p, uint32_t len, uint32_t row, uint32_t *n) {
    if (len < 4)
        return fail(r, r->block_at + 4, "%s block length %u is below its 4-byte row count",
                    pptrace_block_name(r->type), len);
    *n = pptrace_get32(p);
    if (*n > PPTRACE_ROWS_PER_BLOCK)
        return fail(r, at(r, p), "%s block holds %u rows (at most %u allowed)",
                    pptrace_block_name(r->type), *n, PPTRACE_ROWS_PER_BLOCK);
    if (len != 4 + (uint64_t)*n * row)
        return fail(r, r->block_at + 4, "%s block length %u does not match its %u rows of %u bytes",
                    pptrace_block_name(r->type), len, *n, row);
    return PP_OK;
}

static int decode_tracks(reader *r, const unsigned char *p, uint32_t n) {
    for (uint32_t i = 0; i < n; i++, p += PPTRACE_TRACK_ROW) {
        size_t idx = pp_model_track_count(r->m);
        pp_track_info t;
        t.kind = p[0];
        t.flags = pptrace_get32(p + 1);
        t.process = pptrace_get32(p + 5);
        t.name = pptrace_get32(p + 9);
        t.device = pptrace_get32(p + 13);
        t.stream = (int32_t)pptrace_get32(p + 17);
        t.pid = (int64_t)pptrace_get64(p + 21);
        t.tid = (int64_t)pptrace_get64(p + 29);
        t.sort_index = (int32_t)pptrace_get32(p + 37);
        int rc;
        if (t.kind > PP_TRACK_KIND_ASYNC)
            return fail(r, at(r, p), "track %zu: unknown kind %u", idx, t.kind);
        if ((rc = check_string(r, p + 5, "track", idx, "process", t.process)) ||
            (rc = check_string(r, p + 9, "track", idx, "name", t.name)) ||
            (rc = check_string(r, p + 13, "track", idx, "device", t.device)))
            return rc;
        if ((rc = pp_model_add_track(r->m, &t, NULL)))
            return model_refused(r, rc, "track", idx);
    }
    return PP_OK;
}

static int decode_threads(reader *r, const unsigned char *p, uint32_t n) {
    for (uint32_t i = 0; i < n; i++, p += PPTRACE_THREAD_ROW) {
        pp_thread_info t;
        t.tid = (int64_t)pptrace_get64(p);
        t.name = pptrace_get32(p + 8);
        t.recorded = pptrace_get64(p + 12);
        t.dropped = pptrace_get64(p + 20);
        size_t idx = pp_model_thread_count(r->m);
        int rc = check_string(r, p + 8, "thread", idx, "name", t.name);
        if (rc)
            return rc;
        if ((rc = pp_model_add_thread(r->m, &t)))
            return model_refused(r, rc, "thread", idx);
    }
    return PP_OK;
}

enum { C_TS, C_DUR, C_BATCH, C_HW, C_XFER, C_ID, C_VALUE, C_NAME, C_STAGE, C_TRACK, C_KIND,
       C_ROLE, C_PHASE, NCOLS };
static const unsigned char col_width[NCOLS] = {8, 8, 8, 8, 8, 8, 8, 4, 4, 4, 1, 1, 1};

/* Where the fields of the row being checked lie in the payload, for
 * messages: version 1 columns of fixed width, or version 2 columns. */
typedef struct row_site {
    const unsigned char *const *v1_cols; /* version 1: each column's start */
    const unsigned char *v1_row;         /* version 1 annotations: the first row */
    const pptrace_decoder *v2;
    uint32_t row;                        /* within the block */
    /* A block the workers decoded (v2 NULL): its payload is read into the
     * buffer again, and its columns found, only for a message. */
    pptrace_decoder reread;
} row_site;

/* The version-2 columns of the block, reading its payload again when the
 * workers decoded it; NULL when that read fails. */
static const pptrace_decoder *site_columns(reader *r, row_site *s) {
    if (s->v2)
        return s->v2;
    size_t got;
    if (read_bytes(r, r->payload_at, r->buf, r->len, &got) != PP_OK || got < r->len)
        return NULL;
    pptrace_layout_problem problem = r->type == PPTRACE_EVENTS
                                         ? pptrace_events_open(&s->reread, r->buf, r->len)
                                         : pptrace_annotations_open(&s->reread, r->buf, r->len);
    if (problem != PPTRACE_LAYOUT_OK) /* the worker found it sound: the file changed since */
        return NULL;
    return s->v2 = &s->reread;
}

/* The file offset of field c (C_*) of the event at `s`. The first ten
 * columns have the same order in both versions; version 2 keeps kind, role
 * and phase in one byte. */
static uint64_t event_field_at(reader *r, row_site *s, int c) {
    if (s->v1_cols)
        return at(r, s->v1_cols[c] + (size_t)col_width[c] * s->row);
    const pptrace_decoder *d = site_columns(r, s);
    return d ? at(r, pptrace_events_field(d, c >= C_KIND ? PPTRACE_EV_FLAGS : c, s->row))
             : r->block_at;
}

/* Names the first invalid field of event `e`. */
static int bad_event(reader *r, const pp_event *e, row_site *s) {
    unsigned long long idx = events_read(r);
    size_t ntracks = pp_model_track_count(r->m), nstrings = pp_model_string_count(r->m);
    if (e->dur_ns < 0)
        return fail(r, event_field_at(r, s, C_DUR), "event %llu: negative duration %lld ns", idx,
                    (long long)e->dur_ns);
    if (e->ts_ns == INT64_MIN) /* -INT64_MIN does not exist: no text form reads it back */
        return fail(r, event_field_at(r, s, C_TS), "event %llu: time %lld ns is out of range (the "
                    "earliest is %lld)", idx, (long long)e->ts_ns, (long long)-INT64_MAX);
    if (e->ts_ns > 0 && e->dur_ns > INT64_MAX - e->ts_ns)
        return fail(r, event_field_at(r, s, C_DUR), "event %llu: ends past the largest time (%lld + %lld ns)",
                    idx, (long long)e->ts_ns, (long long)e->dur_ns);
    if (e->track >= ntracks)
        return fail(r, event_field_at(r, s, C_TRACK),
                    "event %llu: track index %u out of range (%zu tracks)", idx, e->track, ntracks);
    if (e->kind > PP_EV_REGION)
        return fail(r, event_field_at(r, s, C_KIND), "event %llu: unknown kind %u", idx, e->kind);
    if (e->role > PP_ROLE_USER)
        return fail(r, event_field_at(r, s, C_ROLE), "event %llu: unknown role %u", idx, e->role);
    if (e->phase > PP_FLOW_END)
        return fail(r, event_field_at(r, s, C_PHASE), "event %llu: unknown flow phase %u", idx,
                    e->phase);
    const char *field = e->name >= nstrings ? "name" : "stage";
    return fail(r, event_field_at(r, s, e->name >= nstrings ? C_NAME : C_STAGE),
                "event %llu: %s string id %u out of range (%zu strings defined before it)", idx,
                field, e->name >= nstrings ? e->name : e->stage, nstrings);
}

/* Appends the n events decoded into the model's slots; names the first
 * the model refuses. */
static int commit_events(reader *r, uint32_t n, row_site *site) {
    pp_event refused;
    size_t ok = pp_model_events_commit(r->m, n, &refused);
    if (ok == n)
        return PP_OK;
    site->row = (uint32_t)ok;
    return bad_event(r, &refused, site);
}

/* Version 1: events stored column after column at fixed widths. */
static int decode_events_v1(reader *r, const unsigned char *p, uint32_t n) {
    const unsigned char *col[NCOLS];
    col[0] = p;
    for (int c = 1; c < NCOLS; c++)
        col[c] = col[c - 1] + (size_t)col_width[c - 1] * n;
    pp_event_slots s;
    if (pp_model_events_reserve(r->m, n, &s))
        return no_memory(r);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t value_bits = pptrace_get64(col[C_VALUE] + 8 * (size_t)i);
        s.ts_ns[i] = (int64_t)pptrace_get64(col[C_TS] + 8 * (size_t)i);
        s.dur_ns[i] = (int64_t)pptrace_get64(col[C_DUR] + 8 * (size_t)i);
        s.batch[i] = (int64_t)pptrace_get64(col[C_BATCH] + 8 * (size_t)i);
        double value;
        memcpy(&value, &value_bits, sizeof value);
        pp_slot_put_u64(s.hw_ns, i, pptrace_get64(col[C_HW] + 8 * (size_t)i));
        pp_slot_put_u64(s.xfer_ns, i, pptrace_get64(col[C_XFER] + 8 * (size_t)i));
        pp_slot_put_u64(s.id, i, pptrace_get64(col[C_ID] + 8 * (size_t)i));
        pp_slot_put_f64(s.value, i, value);
        s.name[i] = pptrace_get32(col[C_NAME] + 4 * (size_t)i);
        pp_slot_put_u32(s.stage, i, pptrace_get32(col[C_STAGE] + 4 * (size_t)i));
        s.track[i] = pptrace_get32(col[C_TRACK] + 4 * (size_t)i);
        s.kind[i] = col[C_KIND][i];
        s.role[i] = col[C_ROLE][i];
        pp_slot_put_u8(s.phase, i, col[C_PHASE][i]);
    }
    row_site site = {.v1_cols = col};
    return commit_events(r, n, &site);
}

/* The message for a version-2 payload whose layout is wrong. */
static int bad_layout(reader *r, pptrace_layout_problem problem, const pptrace_decoder *d,
                      uint32_t len) {
    const char *name = pptrace_block_name(r->type);
    switch (problem) {
    case PPTRACE_LAYOUT_SHORT:
        return fail(r, r->block_at + 4, "%s block length %u is below its row count and column "
                    "directory", name, len);
    case PPTRACE_LAYOUT_ROWS:
        return fail(r, r->payload_at, "%s block holds %u rows (at most %u allowed)", name, d->rows,
                    PPTRACE_ROWS_PER_BLOCK);
    case PPTRACE_LAYOUT_BYTES:
        return fail(r, r->payload_at, "%s block: its %s column does not hold one byte per row "
                    "(%u rows)", name, r->type == PPTRACE_EVENTS ? "flags" : "type", d->rows);
    default:
        return fail(r, r->payload_at + 4, "%s block: its column lengths do not add up to its "
                    "length %u", name, len);
    }
}

/* A version-2 column with bytes after its last row's value. */
static int leftover(reader *r, const pptrace_decoder *d, int ncols, const char *const *names) {
    int k = pptrace_decoder_leftover(d, ncols);
    if (k < 0)
        return PP_OK;
    return fail(r, at(r, d->at[k]), "%s block: %zu bytes after the last value of its %s column",
                pptrace_block_name(r->type), (size_t)(d->end[k] - d->at[k]), names[k]);
}

/* Version 2: columns of varints (pptrace_codec.h), decoded straight into
 * the model's columns. */
static int decode_events_v2(reader *r, const unsigned char *p, uint32_t len) {
    pptrace_decoder d;
    pptrace_layout_problem problem = pptrace_events_open(&d, p, len);
    if (problem)
        return bad_layout(r, problem, &d, len);
    pp_event_slots s;
    if (pp_model_events_reserve(r->m, d.rows, &s))
        return no_memory(r);
    uint32_t row;
    int col = pptrace_events_decode(&d, &s, d.rows, &row);
    if (col >= 0)
        return fail(r, at(r, pptrace_events_field(&d, col, row)),
                    "event %llu: malformed %s value (a varint that runs past its column or "
                    "does not fit the field)", (unsigned long long)events_read(r) + row,
                    pptrace_event_column_names[col]);
    row_site site = {.v2 = &d};
    int rc = commit_events(r, d.rows, &site);
    return rc ? rc : leftover(r, &d, PPTRACE_EV_COLUMNS, pptrace_event_column_names);
}

/* Where field c (PPTRACE_AN_*) of the annotation at `s` lies. */
static uint64_t annotation_field_at(reader *r, row_site *s, int c) {
    static const unsigned char v1_offset[PPTRACE_AN_COLUMNS] = {0, 8, 12, 13};
    if (s->v1_row)
        return at(r, s->v1_row + (size_t)s->row * PPTRACE_ANNOTATION_ROW + v1_offset[c]);
    const pptrace_decoder *d = site_columns(r, s);
    return d ? at(r, pptrace_annotations_field(d, c, s->row)) : r->block_at;
}

/* Names the first problem of annotation `a`, whose value field as stored
 * is `value`, which the model refused (or would). */
static int bad_annotation(reader *r, const pp_annotation *a, uint64_t value, row_site *s) {
    size_t held;
    const pp_annotation *prev = pp_model_annotations(r->m, &held);
    unsigned long long idx = annotations_read(r), nevents = events_read(r);
    unsigned long long event = r->event_base + a->event; /* as the file numbers it */
    if (event >= nevents)
        return fail(r, annotation_field_at(r, s, PPTRACE_AN_EVENT),
                    "annotation %llu: event index %llu out of range (%llu events)", idx, event,
                    nevents);
    if (held && a->event < prev[held - 1].event)
        return fail(r, annotation_field_at(r, s, PPTRACE_AN_EVENT),
                    "annotation %llu: event %llu is before the previous annotation's event "
                    "%llu (annotations are sorted by event)", idx, event,
                    (unsigned long long)(r->event_base + prev[held - 1].event));
    if (a->type > PP_VALUE_STR)
        return fail(r, annotation_field_at(r, s, PPTRACE_AN_TYPE),
                    "annotation %llu: unknown value type %u", idx, a->type);
    size_t nstrings = pp_model_string_count(r->m);
    int bad_key = a->key >= nstrings;
    return fail(r, annotation_field_at(r, s, bad_key ? PPTRACE_AN_KEY : PPTRACE_AN_VALUE),
                "annotation %llu: %s string id %llu out of range (%zu strings defined before "
                "it)", idx, bad_key ? "key" : "value",
                (unsigned long long)(bad_key ? a->key : value), nstrings);
}

/* Chunks: makes the events of n annotations indices into the chunk, up to
 * the first of an event already handed on; returns how many it made. The
 * skeleton read found none such in the file (pptrace_read_skeleton). */
static uint32_t to_chunk_events(const reader *r, pp_annotation *a, uint32_t n) {
    for (uint32_t k = 0; k < n; k++) {
        if (a[k].event < r->event_base)
            return k;
        a[k].event -= r->event_base;
    }
    return n;
}

/* Appends n annotations decoded into the model's slots, whose string values
 * are still whole in v.i: each is range-checked before it is narrowed to
 * v.s. Names the first annotation the model refuses. */
static int commit_annotations(reader *r, pp_annotation *a, uint32_t n, row_site *site) {
    size_t nstrings = pp_model_string_count(r->m);
    uint32_t k = 0;
    if (r->event_base && (k = to_chunk_events(r, a, n)) < n) {
        site->row = k;
        return fail(r, annotation_field_at(r, site, PPTRACE_AN_EVENT),
                    "annotation %llu: event %llu was converted with an earlier block (the file "
                    "changed while it was read)", (unsigned long long)annotations_read(r) + k,
                    (unsigned long long)a[k].event);
    }
    for (k = 0; k < n; k++) {
        if (a[k].type != PP_VALUE_STR)
            continue;
        if ((uint64_t)a[k].v.i >= nstrings)
            break;
        a[k].v.s = (uint32_t)a[k].v.i;
    }
    size_t ok = pp_model_annotations_commit(r->m, k);
    if (ok == n)
        return PP_OK;
    site->row = (uint32_t)ok;
    if (ok < k) /* refused for a reason of its own; its string value is narrowed */
        return bad_annotation(r, &a[ok], a[ok].type == PP_VALUE_STR ? a[ok].v.s : 0, site);
    return bad_annotation(r, &a[k], (uint64_t)a[k].v.i, site);
}

static int decode_annotations_v1(reader *r, const unsigned char *p, uint32_t n) {
    pp_annotation *a;
    if (pp_model_annotations_reserve(r->m, n, &a))
        return no_memory(r);
    for (uint32_t i = 0; i < n; i++, p += PPTRACE_ANNOTATION_ROW) {
        uint64_t value = pptrace_get64(p + 13);
        a[i].event = pptrace_get64(p);
        a[i].key = pptrace_get32(p + 8);
        a[i].type = p[12];
        if (a[i].type == PP_VALUE_DOUBLE)
            memcpy(&a[i].v.d, &value, sizeof a[i].v.d);
        else
            a[i].v.i = (int64_t)value; /* a string id stays whole until checked */
    }
    row_site site = {.v1_row = p - (size_t)n * PPTRACE_ANNOTATION_ROW};
    return commit_annotations(r, a, n, &site);
}

static int decode_annotations_v2(reader *r, const unsigned char *p, uint32_t len) {
    pptrace_decoder d;
    pptrace_layout_problem problem = pptrace_annotations_open(&d, p, len);
    if (problem)
        return bad_layout(r, problem, &d, len);
    pp_annotation *a;
    if (pp_model_annotations_reserve(r->m, d.rows, &a))
        return no_memory(r);
    uint32_t row = 0;
    int col = pptrace_annotations_decode(&d, a, d.rows, &row);
    row_site site = {.v2 = &d};
    /* the rows before a malformed one are checked first: a message names
     * the first problem in the file */
    int rc = commit_annotations(r, a, col >= 0 ? row : d.rows, &site);
    if (rc)
        return rc;
    if (col >= 0) {
        unsigned long long idx = annotations_read(r);
        site.row = row;
        if (col == PPTRACE_AN_TYPE)
            return fail(r, annotation_field_at(r, &site, col),
                        "annotation %llu: unknown value type %u", idx, a[row].type);
        return fail(r, annotation_field_at(r, &site, col),
                    "annotation %llu: malformed %s value (a varint that runs past its column "
                    "or does not fit the field)", idx, pptrace_annotation_column_names[col]);
    }
    return leftover(r, &d, PPTRACE_AN_COLUMNS, pptrace_annotation_column_names);
}

/* The totals must match what was read, and nothing may follow. */
static int decode_end(reader *r, const unsigned char *p) {
    static const char *const what[] = {"strings", "tracks", "threads", "events", "annotations"};
    unsigned long long have[5] = {pp_model_string_count(r->m), pp_model_track_count(r->m),
                                  pp_model_thread_count(r->m), events_read(r),
                                  annotations_read(r)};
    for (int k = 0; k < 5; k++)
        if (pptrace_get64(p + 8 * k) != have[k])
            return fail(r, at(r, p + 8 * k), "END block counts %llu %s, the file holds %llu",
                        (unsigned long long)pptrace_get64(p + 8 * k), what[k], have[k]);
    uint64_t end = r->payload_at + PPTRACE_END_LEN + PPTRACE_BLOCK_TAIL_LEN;
    if (r->size > end)
        return fail(r, end, "%llu bytes after the END block", (unsigned long long)(r->size - end));
    return BLOCK_DONE;
}

/* The largest payload a block of `type` may have; 0 for an unknown type. */
static uint32_t max_payload(uint32_t type, uint32_t version) {
    if (version >= 2 && type == PPTRACE_EVENTS)
        return PPTRACE_V2_EVENTS_MAX(PPTRACE_ROWS_PER_BLOCK);
    if (version >= 2 && type == PPTRACE_ANNOTATIONS)
        return PPTRACE_V2_ANNOTATIONS_MAX(PPTRACE_ROWS_PER_BLOCK);
    switch (type) {
    case PPTRACE_STRINGS: return PPTRACE_MAX_PAYLOAD;
    case PPTRACE_META: return PPTRACE_META_LEN;
    case PPTRACE_TRACKS: return 4 + PPTRACE_ROWS_PER_BLOCK * PPTRACE_TRACK_ROW;
    case PPTRACE_THREADS: return 4 + PPTRACE_ROWS_PER_BLOCK * PPTRACE_THREAD_ROW;
    case PPTRACE_EVENTS: return 4 + PPTRACE_ROWS_PER_BLOCK * PPTRACE_EVENT_ROW;
    case PPTRACE_ANNOTATIONS: return 4 + PPTRACE_ROWS_PER_BLOCK * PPTRACE_ANNOTATION_ROW;
    case PPTRACE_END: return PPTRACE_END_LEN;
    default: return type & PPTRACE_OPTIONAL_BIT ? PPTRACE_MAX_PAYLOAD : 0;
    }
}

static int decode_payload(reader *r, uint32_t len) {
    int (*decode_rows)(reader *, const unsigned char *, uint32_t);
    uint32_t row, rows = 0;
    switch (r->type) {
    case PPTRACE_STRINGS: return decode_strings(r, r->buf, len);
    case PPTRACE_META: return decode_meta(r, r->buf);
    case PPTRACE_END: return decode_end(r, r->buf);
    case PPTRACE_CLOCK: return decode_clock(r, r->buf, len);
    case PPTRACE_EVENTS:
        if (r->version >= 2)
            return decode_events_v2(r, r->buf, len);
        decode_rows = decode_events_v1, row = PPTRACE_EVENT_ROW;
        break;
    case PPTRACE_ANNOTATIONS:
        if (r->version >= 2)
            return decode_annotations_v2(r, r->buf, len);
        decode_rows = decode_annotations_v1, row = PPTRACE_ANNOTATION_ROW;
        break;
    case PPTRACE_TRACKS: decode_rows = decode_tracks, row = PPTRACE_TRACK_ROW; break;
    case PPTRACE_THREADS: decode_rows = decode_threads, row = PPTRACE_THREAD_ROW; break;
    default: return PP_OK; /* an optional block this version does not know */
    }
    int rc = table_rows(r, r->buf, len, row, &rows);
    return rc ? rc : decode_rows(r, r->buf + 4, rows);
}

/* Skeleton: an EVENTS or ANNOTATIONS block is counted, not kept. An
 * ANNOTATIONS block whose first event lies before the last EVENTS block
 * makes the file one that chunks cannot carry (an event handed on before
 * its annotations were read). Any fault here is left for the read that
 * decodes the block to name. */
static int count_rows(reader *r, uint32_t len) {
    pptrace_decoder d;
    uint32_t rows = 0;
    uint64_t first = 0;
    int events = r->type == PPTRACE_EVENTS;
    if (r->version >= 2) {
        pptrace_layout_problem problem = events ? pptrace_events_open(&d, r->buf, len)
                                                : pptrace_annotations_open(&d, r->buf, len);
        if (problem)
            return bad_layout(r, problem, &d, len);
        rows = d.rows;
        pp_annotation a = {0};
        uint32_t row;
        if (!events && rows && pptrace_annotations_decode(&d, &a, 1, &row) >= 0)
            return fail(r, r->payload_at, "ANNOTATIONS block: malformed first row");
        first = a.event;
    } else {
        int rc = table_rows(r, r->buf, len, events ? PPTRACE_EVENT_ROW : PPTRACE_ANNOTATION_ROW,
                            &rows);
        if (rc)
            return rc;
        first = rows ? pptrace_get64(r->buf + 4) : 0;
    }
    if (events) {
        r->events_block_first = r->event_base;
        r->event_base += rows;
    } else {
        r->interleaved |= rows && first < r->events_block_first;
        r->annotation_base += rows;
    }
    return PP_OK;
}

/* Chunks: hands the events read so far on, and empties the model, before
 * the next EVENTS block (the annotations of those before are all read then)
 * once there are enough, and at the end. */
static int hand_on(reader *r, size_t at_least) {
    size_t n = pp_model_event_count(r->m);
    if (r->mode != READ_CHUNKS || n == 0 || n < at_least)
        return PP_OK;
    int rc = r->chunk(r->chunk_ctx, r->m);
    r->event_base += n;
    r->annotation_base = annotations_read(r);
    pp_model_clear_events(r->m);
    return rc;
}

/* Makes the payload buffer hold n bytes. */
static int buf_room(reader *r, size_t n) {
    if (n <= r->cap)
        return PP_OK;
    unsigned char *b = realloc(r->buf, n);
    if (!b)
        return no_memory(r);
    r->buf = b;
    r->cap = n;
    return PP_OK;
}

/* The rows of the block being read when the workers decoded it into the
 * model's slots, else -1. */
static long decoded_ahead(reader *r) {
    if (!r->ahead || (r->type != PPTRACE_EVENTS && r->type != PPTRACE_ANNOTATIONS))
        return -1;
    size_t next = pp_model_event_count(r->m);
    if (r->type == PPTRACE_ANNOTATIONS)
        pp_model_annotations(r->m, &next);
    return pptrace_ahead_take(r->ahead, r->block_at, next);
}

/* Appends the rows the workers decoded, under the same rules and with the
 * same messages as rows decoded here (the checksum, layout and values were
 * checked by the worker). */
static int commit_decoded(reader *r, uint32_t rows) {
    row_site site = {0};
    if (r->type == PPTRACE_EVENTS)
        return commit_events(r, rows, &site);
    pp_annotation *a;
    if (pp_model_annotations_reserve(r->m, rows, &a)) /* within the reserved room */
        return no_memory(r);
    return commit_annotations(r, a, rows, &site);
}

/* Reads, checks and decodes the block at r->block_at. */
static int read_block(reader *r) {
    unsigned char head[PPTRACE_BLOCK_HEAD_LEN];
    char what[64];
    size_t got;
    int rc = read_bytes(r, r->block_at, head, sizeof head, &got);
    if (rc)
        return rc;
    if (got == 0)
        return truncated(r, "the END block is missing");
    if (got < sizeof head)
        return truncated(r, "an incomplete block header");
    r->type = pptrace_get32(head);
    uint32_t len = pptrace_get32(head + 4), max = max_payload(r->type, r->version);
    const char *name = pptrace_block_name(r->type);
    if (max == 0)
        return fail(r, r->block_at, "unknown block type %u", r->type);
    if (len > max || ((r->type == PPTRACE_META || r->type == PPTRACE_END) && len != max))
        return fail(r, r->block_at + 4, "%s block length %u (%s %u)", name, len,
                    len > max ? "the maximum is" : "it must be", max);
    uint64_t end = r->block_at + PPTRACE_BLOCK_HEAD_LEN + len + PPTRACE_BLOCK_TAIL_LEN;
    snprintf(what, sizeof what, "an incomplete %s block", name);
    if (end > r->size)
        return truncated(r, what);
    if ((rc = buf_room(r, (size_t)len + PPTRACE_BLOCK_TAIL_LEN)))
        return rc;
    r->len = len;
    r->payload_at = r->block_at + PPTRACE_BLOCK_HEAD_LEN;
    if (r->type == PPTRACE_EVENTS && (rc = hand_on(r, r->chunk_events)))
        return rc;
    long rows = decoded_ahead(r);
    if (rows >= 0) {
        rc = commit_decoded(r, (uint32_t)rows);
        r->block_at = end;
        return rc;
    }
    if ((rc = read_bytes(r, r->payload_at, r->buf, (size_t)len + PPTRACE_BLOCK_TAIL_LEN, &got)))
        return rc;
    if (got < (size_t)len + PPTRACE_BLOCK_TAIL_LEN) /* the file shrank while we read it */
        return truncated(r, what);
    uint32_t stored = pptrace_get32(r->buf + len);
    uint32_t crc = (uint32_t)crc32(crc32(0L, head, sizeof head), r->buf, len);
    if (crc != stored) {
        /* A torn final write (the last bytes of the file) is truncation;
         * a bad block with more file after it is corruption. */
        snprintf(what, sizeof what, "a final %s block that fails its checksum", name);
        if (end == r->size)
            return truncated(r, what);
        return fail(r, r->block_at, "%s block fails its checksum (stored 0x%08x, computed 0x%08x)",
                    name, stored, crc);
    }
    if (r->mode == READ_SKELETON && (r->type == PPTRACE_EVENTS || r->type == PPTRACE_ANNOTATIONS))
        rc = count_rows(r, len);
    else
        rc = decode_payload(r, len);
    r->block_at = end;
    return rc;
}

/* Sizes the model's event columns and annotation table for the totals the
 * END block states, when the file ends in one, so that reading fills them
 * once instead of regrowing them, and states that room in *room (none: 0
 * rows). Only a hint: the counts are checked when
 * the END block is read, each is capped by the rows the file's size can
 * hold (a version-2 event takes at least 11 bytes, one byte a column, an
 * annotation 4; version-1 rows their fixed sizes), and a file without a
 * readable END block is read all the same. */
static void reserve_from_end(reader *r, pptrace_ahead_room *room) {
    unsigned char b[PPTRACE_BLOCK_HEAD_LEN + PPTRACE_END_LEN + PPTRACE_BLOCK_TAIL_LEN];
    if (r->size < PPTRACE_HEADER_LEN + sizeof b ||
        pread(r->fd, b, sizeof b, (off_t)(r->size - sizeof b)) != (ssize_t)sizeof b ||
        pptrace_get32(b) != PPTRACE_END || pptrace_get32(b + 4) != PPTRACE_END_LEN ||
        pptrace_get32(b + sizeof b - PPTRACE_BLOCK_TAIL_LEN) !=
            (uint32_t)crc32(0L, b, sizeof b - PPTRACE_BLOCK_TAIL_LEN))
        return;
    uint64_t events = pptrace_get64(b + PPTRACE_BLOCK_HEAD_LEN + 24);
    uint64_t annotations = pptrace_get64(b + PPTRACE_BLOCK_HEAD_LEN + 32);
    int v2 = r->version >= 2;
    uint64_t min_event = v2 ? PPTRACE_EV_COLUMNS : PPTRACE_EVENT_ROW;
    uint64_t min_annotation = v2 ? PPTRACE_AN_COLUMNS : PPTRACE_ANNOTATION_ROW;
    /* a failure leaves the model as it was: reading then grows it as it goes */
    if (events <= r->size / min_event &&
        pp_model_events_reserve(r->m, (size_t)events, &room->events) == PP_OK)
        room->nevents = (size_t)events;
    if (annotations <= r->size / min_annotation &&
        pp_model_annotations_reserve(r->m, (size_t)annotations, &room->annotations) == PP_OK)
        room->nannotations = (size_t)annotations;
}

/* Checks that fd is one we can read block by block: a regular file, whose
 * size bounds every length field (pp_trace_read copies a pipe into one). */
static int reader_open(reader *r, int fd) {
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file";
    if (why) {
        close(fd);
        return pp_set_error(r->err, PP_EIO, "%s: cannot read: %s", r->path, why);
    }
    r->fd = fd;
    r->size = (uint64_t)st.st_size;
    return pp_model_create(&r->m) ? no_memory(r) : PP_OK;
}

/* Reads the file block by block in r's mode. Returns PP_OK or
 * PP_ETRUNCATED (with its message) keeping r->m, or an error, freeing it.
 * Takes over fd. */
static int read_file(reader *r, int fd) {
    pptrace_ahead_room room = {0};
    int rc = reader_open(r, fd);
    if (rc == PP_OK)
        rc = read_header(r);
    if (rc == PP_OK && r->mode == READ_WHOLE) {
        reserve_from_end(r, &room);
        if (r->version >= 2)
            r->ahead = pptrace_ahead_start(r->fd, r->size, r->block_at, &room);
    }
    while (rc == PP_OK)
        rc = read_block(r);
    /* Before the model is handed out or freed: no worker writes to it any
     * more. A read cut short keeps its model, and workers may have decoded
     * blocks past the cut (a file that shrank while it was read): their
     * slots past the last event must read zero again (event_slots.h). */
    size_t written = pptrace_ahead_stop(r->ahead);
    if (rc == PP_ETRUNCATED && written > pp_model_event_count(r->m))
        pp_model_events_unreserve(r->m, written - pp_model_event_count(r->m));
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
    if (rc == PP_ETRUNCATED) {
        uint64_t lost = r->size > r->block_at ? r->size - r->block_at : 0;
        unsigned long long events = events_read(r);
        /* META is written last but for END by the flight recorder */
        const char *cut = r->seen_meta ? "" : "; no META block: a recording cut off before it "
                          "ended (a killed program's flight recording): its last moments and its "
                          "drop counts are not in the file";
        pp_model_meta_mut(r->m)->truncated_bytes += lost;
        if (lost)
            pp_set_error(r->err, rc, "%s: truncated at byte %llu: last %llu bytes (%s) could not "
                         "be read; %llu events recovered%s", r->path,
                         (unsigned long long)r->block_at, (unsigned long long)lost, r->lost_what,
                         events, cut);
        else
            pp_set_error(r->err, rc, "%s: truncated at byte %llu: %s; %llu events recovered%s",
                         r->path, (unsigned long long)r->block_at, r->lost_what, events, cut);
    }
    if (rc == BLOCK_DONE || rc == PP_ETRUNCATED) {
        int handed = hand_on(r, 0);
        if (handed == PP_OK)
            return rc == BLOCK_DONE ? PP_OK : rc;
        rc = handed;
    }
    pp_model_free(r->m);
    r->m = NULL;
    return rc;
}

/* Opens a .pptrace at `path` and reads it in r's mode. */
static int read_path(reader *r) {
    /* O_NONBLOCK keeps a FIFO from blocking the open (reader_open refuses
     * it); it changes nothing for regular files. */
    int fd = open(r->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return pp_set_error(r->err, errno == ENOENT ? PP_ENOTFOUND : PP_EIO,
                            "%s: cannot open: %s", r->path, strerror(errno));
    return read_file(r, fd);
}

int pp_pptrace_read(const char *path, pp_model **out, pp_error *err) {
    if (!path || !out)
        return pp_set_error(err, PP_EINVAL, "pp_pptrace_read: path and out are required");
    reader r = {.path = path, .fd = -1, .err = err, .mode = READ_WHOLE};
    int rc = read_path(&r);
    *out = r.m;
    return rc;
}

int pp_pptrace_read_fd(int fd, const char *path, pp_model **out, pp_error *err) {
    reader r = {.path = path, .fd = -1, .err = err, .mode = READ_WHOLE};
    int rc = read_file(&r, fd);
    *out = r.m;
    return rc;
}

int pptrace_read_skeleton(const char *path, pp_model **out, int *interleaved, pp_error *err) {
    reader r = {.path = path, .fd = -1, .err = err, .mode = READ_SKELETON};
    int rc = read_path(&r);
    *out = r.m;
    *interleaved = r.interleaved;
    return rc;
}

int pptrace_read_chunks(const char *path, size_t chunk_events, pptrace_chunk_fn chunk, void *ctx,
                        pp_error *err) {
    reader r = {.path = path, .fd = -1, .err = err, .mode = READ_CHUNKS,
                .chunk_events = chunk_events, .chunk = chunk, .chunk_ctx = ctx};
    int rc = read_path(&r);
    pp_model_free(r.m);
    return rc;
}
