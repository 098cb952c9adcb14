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
 * model. A file that ends early keeps every complete block. The rows of
 * EVENTS and ANNOTATIONS blocks are decoded in pptrace_read_rows.c. */
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
#include "io/pptrace_reader.h"
#include "model/event_slots.h"
#include "pipeprof/io.h"

/* Ends the read at the current block: everything before it is kept. */
static int truncated(reader *r, const char *what) {
    snprintf(r->lost_what, sizeof r->lost_what, "%s", what);
    return PP_ETRUNCATED;
}

/* A pp_model_add_* call failed after our own checks passed: out of memory,
 * or a rule the model has and this reader does not check yet. */
static int model_refused(reader *r, int rc, const char *what, size_t row) {
    if (rc == PP_ENOMEM)
        return rd_no_memory(r);
    return pp_set_error(r->err, PP_EFORMAT, "%s: byte %llu: %s %zu refused by the model: %s",
                        r->path, (unsigned long long)r->block_at, what, row, pp_strerror(rc));
}

static int read_header(reader *r) {
    unsigned char h[PPTRACE_HEADER_LEN];
    size_t got;
    int rc = rd_read_bytes(r, 0, h, sizeof h, &got);
    if (rc)
        return rc;
    if (memcmp(h, PPTRACE_MAGIC, got < PPTRACE_MAGIC_LEN ? got : PPTRACE_MAGIC_LEN) != 0)
        return rd_fail(r, 0, "not a .pptrace file (it does not start with \"PPTRACE\\0\")");
    if (got < sizeof h)
        return truncated(r, "an incomplete file header");
    uint32_t version = pptrace_get32(h + 8), flags = pptrace_get32(h + 12);
    if (version < PPTRACE_OLDEST_VERSION || version > PPTRACE_VERSION)
        return rd_fail(r, 8,
                       "unsupported .pptrace version %u (this pipeprof reads versions %u to %u)",
                       version, PPTRACE_OLDEST_VERSION, PPTRACE_VERSION);
    if (flags != 0)
        return rd_fail(r, 12, "unknown header flags 0x%x (version %u defines none)", flags,
                       version);
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
    return rd_fail(r, rd_at(r, q),
                   "%s: %s string id %llu out of range (%zu strings defined before it)", where,
                   field, (unsigned long long)id, n);
}

static int decode_strings(reader *r, const unsigned char *p, uint32_t len) {
    if (len < 8)
        return rd_fail(r, r->block_at + 4, "STRINGS block length %u is below its 8-byte head", len);
    const unsigned char *q = p + 8, *end = p + len;
    uint32_t first = pptrace_get32(p), count = pptrace_get32(p + 4);
    if (first != pp_model_string_count(r->m))
        return rd_fail(r, rd_at(r, p), "STRINGS block starts at string id %u, expected %zu", first,
                       pp_model_string_count(r->m));
    if (count > PPTRACE_ROWS_PER_BLOCK)
        return rd_fail(r, rd_at(r, p + 4), "STRINGS block holds %u strings (at most %u allowed)",
                       count, PPTRACE_ROWS_PER_BLOCK);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t want = first + i, id;
        if (end - q < 4 || pptrace_get32(q) > (size_t)(end - q) - 4)
            return rd_fail(r, rd_at(r, q), "string %u runs past the end of its STRINGS block",
                           want);
        uint32_t slen = pptrace_get32(q);
        int rc = pp_model_intern(r->m, (const char *)q + 4, slen, &id);
        if (rc == PP_EINVAL)
            return rd_fail(r, rd_at(r, q + 4), "string %u contains a NUL byte", want);
        if (rc)
            return rd_no_memory(r);
        if (id != want)
            return rd_fail(r, rd_at(r, q), "string %u repeats string %u (each text is stored once)",
                           want, id);
        q += 4 + slen;
    }
    if (q != end)
        return rd_fail(r, rd_at(r, q), "%zu bytes after the last string of the STRINGS block",
                       (size_t)(end - q));
    return PP_OK;
}

static int decode_meta(reader *r, const unsigned char *p) {
    if (r->seen_meta)
        return rd_fail(r, r->block_at, "a second META block (a file has at most one)");
    r->seen_meta = 1;
    int32_t level = (int32_t)pptrace_get32(p);
    if (level < -1 || level > 2)
        return rd_fail(r, rd_at(r, p), "recording level %d is not -1 (unknown), 0, 1 or 2",
                       (int)level);
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
        return rd_fail(r, r->block_at + 4, "CLOCK block length %u (it must be %u)", len,
                       PPTRACE_CLOCK_LEN);
    for (int k = 0; k < 4; k++) {
        int rc = check_string(r, p + 4 * k, "CLOCK", NO_ROW, fields[k], pptrace_get32(p + 4 * k));
        if (rc)
            return rc;
    }
    int64_t error_ns = (int64_t)pptrace_get64(p + 16);
    if (error_ns < -1)
        return rd_fail(r, rd_at(r, p + 16),
                       "CLOCK: alignment error %lld ns is below -1 (not known)",
                       (long long)error_ns);
    pp_model_meta *meta = pp_model_meta_mut(r->m);
    meta->clock = pptrace_get32(p);
    meta->host = pptrace_get32(p + 4);
    meta->boot_id = pptrace_get32(p + 8);
    meta->alignment = pptrace_get32(p + 12);
    meta->alignment_error_ns = error_ns;
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
            return rd_fail(r, rd_at(r, p), "track %zu: unknown kind %u", idx, t.kind);
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

/* The totals must match what was read, and nothing may follow. */
static int decode_end(reader *r, const unsigned char *p) {
    static const char *const what[] = {"strings", "tracks", "threads", "events", "annotations"};
    unsigned long long have[5] = {pp_model_string_count(r->m), pp_model_track_count(r->m),
                                  pp_model_thread_count(r->m), events_read(r),
                                  annotations_read(r)};
    for (int k = 0; k < 5; k++)
        if (pptrace_get64(p + 8 * k) != have[k])
            return rd_fail(r, rd_at(r, p + 8 * k), "END block counts %llu %s, the file holds %llu",
                           (unsigned long long)pptrace_get64(p + 8 * k), what[k], have[k]);
    uint64_t end = r->payload_at + PPTRACE_END_LEN + PPTRACE_BLOCK_TAIL_LEN;
    if (r->size > end)
        return rd_fail(r, end, "%llu bytes after the END block",
                       (unsigned long long)(r->size - end));
    return RD_BLOCK_DONE;
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
            return rd_events_v2(r, r->buf, len);
        decode_rows = rd_events_v1, row = PPTRACE_EVENT_ROW;
        break;
    case PPTRACE_ANNOTATIONS:
        if (r->version >= 2)
            return rd_annotations_v2(r, r->buf, len);
        decode_rows = rd_annotations_v1, row = PPTRACE_ANNOTATION_ROW;
        break;
    case PPTRACE_TRACKS:
        decode_rows = decode_tracks, row = PPTRACE_TRACK_ROW;
        break;
    case PPTRACE_THREADS: decode_rows = decode_threads, row = PPTRACE_THREAD_ROW; break;
    default: return PP_OK; /* an optional block this version does not know */
    }
    int rc = rd_table_rows(r, r->buf, len, row, &rows);
    return rc ? rc : decode_rows(r, r->buf + 4, rows);
}

/* Chunks: hands the events read so far on, and empties the model, before
 * the next EVENTS block (the annotations of those before are all read then)
 * once there are enough, and at the end. */
static int hand_on(reader *r, size_t at_least) {
    size_t n = pp_model_event_count(r->m);
    if (r->mode != READ_CHUNKS || n == 0 || n < at_least)
        return PP_OK;
    if (pp_model_string_count(r->m) > pp_model_string_count(r->skeleton->model) ||
        pp_model_track_count(r->m) > pp_model_track_count(r->skeleton->model))
        return pp_set_error(r->err, PP_EFORMAT, "%s: the file changed while it was read: it "
                            "defines more strings or tracks than its first read found", r->path);
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
        return rd_no_memory(r);
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
        pp_model_anns(r->m, &next);
    return pptrace_ahead_take(r->ahead, r->block_at, next);
}

/* Reads, checks and decodes the block at r->block_at. */
static int read_block(reader *r) {
    unsigned char head[PPTRACE_BLOCK_HEAD_LEN];
    char what[64];
    size_t got;
    int rc = rd_read_bytes(r, r->block_at, head, sizeof head, &got);
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
        return rd_fail(r, r->block_at, "unknown block type %u", r->type);
    if (len > max || ((r->type == PPTRACE_META || r->type == PPTRACE_END) && len != max))
        return rd_fail(r, r->block_at + 4, "%s block length %u (%s %u)", name, len,
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
        rc = rd_commit_decoded(r, (uint32_t)rows);
        r->block_at = end;
        return rc;
    }
    if ((rc = rd_read_bytes(r, r->payload_at, r->buf, (size_t)len + PPTRACE_BLOCK_TAIL_LEN, &got)))
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
        return rd_fail(r, r->block_at,
                       "%s block fails its checksum (stored 0x%08x, computed 0x%08x)", name, stored,
                       crc);
    }
    if (r->mode == READ_SKELETON && (r->type == PPTRACE_EVENTS || r->type == PPTRACE_ANNOTATIONS))
        rc = rd_count_rows(r, len);
    else
        rc = decode_payload(r, len);
    r->block_at = end;
    return rc;
}

/* The event and annotation totals of the END block that ends a file of
 * `size` bytes at fd; 0 when the file does not end in a sound one. */
static int end_totals(int fd, uint64_t size, uint64_t *events, uint64_t *annotations) {
    unsigned char b[PPTRACE_BLOCK_HEAD_LEN + PPTRACE_END_LEN + PPTRACE_BLOCK_TAIL_LEN];
    if (size < PPTRACE_HEADER_LEN + sizeof b ||
        pread(fd, b, sizeof b, (off_t)(size - sizeof b)) != (ssize_t)sizeof b ||
        pptrace_get32(b) != PPTRACE_END || pptrace_get32(b + 4) != PPTRACE_END_LEN ||
        pptrace_get32(b + sizeof b - PPTRACE_BLOCK_TAIL_LEN) !=
            (uint32_t)crc32(0L, b, sizeof b - PPTRACE_BLOCK_TAIL_LEN))
        return 0;
    *events = pptrace_get64(b + PPTRACE_BLOCK_HEAD_LEN + 24);
    *annotations = pptrace_get64(b + PPTRACE_BLOCK_HEAD_LEN + 32);
    return 1;
}

/* The descriptor of `path` when it is a regular file that starts as a
 * .pptrace does, its size in *size; else -1. */
static int open_pptrace_file(const char *path, uint64_t *size) {
    unsigned char magic[PPTRACE_MAGIC_LEN];
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
        memcmp(magic, PPTRACE_MAGIC, PPTRACE_MAGIC_LEN) == 0) {
        *size = (uint64_t)st.st_size;
        return fd;
    }
    if (fd >= 0)
        close(fd);
    return -1;
}

int pptrace_is_file(const char *path) {
    uint64_t size;
    int fd = open_pptrace_file(path, &size);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

int pptrace_peek_totals(const char *path, uint64_t *events, uint64_t *annotations) {
    uint64_t size;
    int fd = open_pptrace_file(path, &size);
    int ok = fd >= 0 && end_totals(fd, size, events, annotations);
    if (fd >= 0)
        close(fd);
    return ok;
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
    uint64_t events, annotations;
    if (!end_totals(r->fd, r->size, &events, &annotations))
        return;
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
    if (r->skeleton && r->size > r->skeleton->bytes) /* a recording still being written */
        r->size = r->skeleton->bytes;
    return pp_model_create(&r->m) ? rd_no_memory(r) : PP_OK;
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
    free(r->anns);
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
    if (rc == RD_BLOCK_DONE || rc == PP_ETRUNCATED) {
        int handed = hand_on(r, 0);
        if (handed == PP_OK)
            return rc == RD_BLOCK_DONE ? PP_OK : rc;
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

int pptrace_read_skeleton(const char *path, pptrace_skeleton *out, pp_error *err) {
    reader r = {.path = path, .fd = -1, .err = err, .mode = READ_SKELETON};
    int rc = read_path(&r);
    *out = (pptrace_skeleton){r.m, r.size, r.interleaved};
    return rc;
}

int pptrace_read_chunks(const char *path, const pptrace_skeleton *skeleton, size_t chunk_events,
                        pptrace_chunk_fn chunk, void *ctx, pp_error *err) {
    reader r = {.path = path, .fd = -1, .err = err, .mode = READ_CHUNKS,
                .chunk_events = chunk_events, .skeleton = skeleton, .chunk = chunk,
                .chunk_ctx = ctx};
    int rc = read_path(&r);
    pp_model_free(r.m);
    return rc;
}
