/* Writing a model as .pptrace (docs/format-pptrace.md).
 *
 * Each block is encoded whole into one buffer (head, payload, CRC) and handed
 * to the output file in one write, so the cost is one pass over the columns
 * and large sequential writes. The order is: STRINGS, META, CLOCK, TRACKS, THREADS,
 * then each EVENTS block followed by the ANNOTATIONS of its events, END. That
 * way everything a block refers to lies before it, and a file cut anywhere
 * still reads back as every complete block. The block encoders are shared
 * with the flight recorder (pptrace_blocks.h), which writes the same blocks
 * while a program records. A converter writes the events in chunks
 * (io/trace_write.h); END then states the totals of every chunk. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "model/ann_table.h"
#include "io/outfile.h"
#include "io/pptrace_blocks.h"
#include "io/pptrace_codec.h"
#include "io/pptrace_format.h"
#include "io/trace_write.h"
#include "pipeprof/io.h"

typedef pptrace_enc writer;

void pptrace_enc_free(pptrace_enc *w) {
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

/* Starts a block of `type` with a payload of `len` bytes; returns where the
 * payload goes, or NULL when out of memory. */
static unsigned char *block_begin(writer *w, uint32_t type, size_t len) {
    size_t total = PPTRACE_BLOCK_HEAD_LEN + len + PPTRACE_BLOCK_TAIL_LEN;
    if (total > w->cap) {
        unsigned char *p = realloc(w->buf, total);
        if (!p)
            return NULL;
        w->buf = p;
        w->cap = total;
    }
    pptrace_put32(w->buf, type);
    pptrace_put32(w->buf + 4, (uint32_t)len);
    w->len = total;
    return w->buf + PPTRACE_BLOCK_HEAD_LEN;
}

/* Sets the payload length of a block begun with room for more. */
static void block_shrink(writer *w, size_t len) {
    pptrace_put32(w->buf + 4, (uint32_t)len);
    w->len = PPTRACE_BLOCK_HEAD_LEN + len + PPTRACE_BLOCK_TAIL_LEN;
}

/* Seals the block with the CRC of its head and payload and writes it. */
static void block_end(writer *w) {
    size_t covered = w->len - PPTRACE_BLOCK_TAIL_LEN;
    uLong crc = crc32(0L, w->buf, (uInt)covered);
    pptrace_put32(w->buf + covered, (uint32_t)crc);
    w->sink(w->ctx, w->buf, w->len);
}

static size_t min_size(size_t a, size_t b) {
    return a < b ? a : b;
}

/* Strings 1.. in id order (id 0, the empty string, is implicit), cut into
 * blocks of at most PPTRACE_ROWS_PER_BLOCK strings or about
 * PPTRACE_STRINGS_TARGET bytes. */
int pptrace_put_strings(writer *w, const pp_model *m, size_t first, const char *path,
                        pp_error *err) {
    size_t n = pp_model_string_count(m);
    while (first < n) {
        size_t end = first, bytes = 8;
        while (end < n && end - first < PPTRACE_ROWS_PER_BLOCK && bytes < PPTRACE_STRINGS_TARGET) {
            size_t len = strlen(pp_model_string(m, (uint32_t)end));
            if (bytes + 4 + len > PPTRACE_MAX_PAYLOAD) {
                if (end == first)
                    return pp_set_error(err, PP_EINVAL,
                                        "%s: string %zu is %zu bytes long; .pptrace holds strings "
                                        "of at most %u bytes",
                                        path, end, len, PPTRACE_MAX_PAYLOAD - 12u);
                break;
            }
            bytes += 4 + len;
            end++;
        }
        unsigned char *p = block_begin(w, PPTRACE_STRINGS, bytes);
        if (!p)
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
        pptrace_put32(p, (uint32_t)first);
        pptrace_put32(p + 4, (uint32_t)(end - first));
        p += 8;
        for (size_t id = first; id < end; id++) {
            const char *text = pp_model_string(m, (uint32_t)id);
            size_t len = strlen(text);
            pptrace_put32(p, (uint32_t)len);
            memcpy(p + 4, text, len);
            p += 4 + len;
        }
        block_end(w);
        first = end;
    }
    return PP_OK;
}

int pptrace_put_meta(writer *w, const pp_model *m) {
    const pp_model_meta *meta = pp_model_meta_get(m);
    unsigned char *p = block_begin(w, PPTRACE_META, PPTRACE_META_LEN);
    if (!p)
        return PP_ENOMEM;
    pptrace_put32(p, (uint32_t)(int32_t)meta->level);
    pptrace_put32(p + 4, meta->process_name);
    pptrace_put64(p + 8, meta->dropped_records);
    pptrace_put64(p + 16, meta->truncated_bytes);
    pptrace_put64(p + 24, meta->ignored_events);
    pptrace_put64(p + 32, meta->unmatched_ends);
    block_end(w);
    return PP_OK;
}

/* The clock fields, in an optional block so that readers from before them
 * still read the file; left out when the model has none (a foreign trace). */
int pptrace_put_clock(writer *w, const pp_model *m) {
    const pp_model_meta *meta = pp_model_meta_get(m);
    if (!meta->clock && !meta->host && !meta->boot_id && !meta->alignment &&
        !meta->alignment_error_ns)
        return PP_OK;
    unsigned char *p = block_begin(w, PPTRACE_CLOCK, PPTRACE_CLOCK_LEN);
    if (!p)
        return PP_ENOMEM;
    pptrace_put32(p, meta->clock);
    pptrace_put32(p + 4, meta->host);
    pptrace_put32(p + 8, meta->boot_id);
    pptrace_put32(p + 12, meta->alignment);
    pptrace_put64(p + 16, (uint64_t)meta->alignment_error_ns);
    block_end(w);
    return PP_OK;
}

int pptrace_put_tracks(writer *w, const pp_model *m, size_t first) {
    size_t n = pp_model_track_count(m);
    for (; first < n; first += PPTRACE_ROWS_PER_BLOCK) {
        size_t count = min_size(n - first, PPTRACE_ROWS_PER_BLOCK);
        unsigned char *p = block_begin(w, PPTRACE_TRACKS, 4 + count * PPTRACE_TRACK_ROW);
        if (!p)
            return PP_ENOMEM;
        pptrace_put32(p, (uint32_t)count);
        p += 4;
        for (size_t i = first; i < first + count; i++, p += PPTRACE_TRACK_ROW) {
            const pp_track_info *t = pp_model_track(m, (uint32_t)i);
            p[0] = t->kind;
            pptrace_put32(p + 1, t->flags);
            pptrace_put32(p + 5, t->process);
            pptrace_put32(p + 9, t->name);
            pptrace_put32(p + 13, t->device);
            pptrace_put32(p + 17, (uint32_t)t->stream);
            pptrace_put64(p + 21, (uint64_t)t->pid);
            pptrace_put64(p + 29, (uint64_t)t->tid);
            pptrace_put32(p + 37, (uint32_t)t->sort_index);
        }
        block_end(w);
    }
    return PP_OK;
}

int pptrace_put_threads(writer *w, const pp_model *m, size_t first) {
    size_t n = pp_model_thread_count(m);
    for (; first < n; first += PPTRACE_ROWS_PER_BLOCK) {
        size_t count = min_size(n - first, PPTRACE_ROWS_PER_BLOCK);
        unsigned char *p = block_begin(w, PPTRACE_THREADS, 4 + count * PPTRACE_THREAD_ROW);
        if (!p)
            return PP_ENOMEM;
        pptrace_put32(p, (uint32_t)count);
        p += 4;
        for (size_t i = first; i < first + count; i++, p += PPTRACE_THREAD_ROW) {
            const pp_thread_info *t = pp_model_thread(m, i);
            pptrace_put64(p, (uint64_t)t->tid);
            pptrace_put32(p + 8, t->name);
            pptrace_put64(p + 12, t->recorded);
            pptrace_put64(p + 20, t->dropped);
        }
        block_end(w);
    }
    return PP_OK;
}

/* One EVENTS block: events [first, first + n). */
static int write_event_block(writer *w, const pp_cols *c, size_t first, size_t n) {
    unsigned char *p = block_begin(w, PPTRACE_EVENTS, PPTRACE_V2_EVENTS_MAX(n));
    if (!p)
        return PP_ENOMEM;
    block_shrink(w, pptrace_events_encode(c, first, n, p));
    block_end(w);
    return PP_OK;
}

/* ANNOTATIONS blocks for the table rows [*next, end), their events
 * numbered from `base`. */
static int write_annotations(writer *w, const pp_ann *a, size_t *next, size_t end,
                             uint64_t base) {
    while (*next < end) {
        size_t count = min_size(end - *next, PPTRACE_ROWS_PER_BLOCK);
        unsigned char *p = block_begin(w, PPTRACE_ANNOTATIONS, PPTRACE_V2_ANNOTATIONS_MAX(count));
        if (!p)
            return PP_ENOMEM;
        block_shrink(w, pptrace_annotations_encode(a + *next, count, base, p));
        block_end(w);
        *next += count;
    }
    return PP_OK;
}

int pptrace_put_events(writer *w, const pp_model *m, uint64_t event_base) {
    pp_cols c;
    size_t nanns, next_ann = 0;
    const pp_ann *anns = pp_model_anns(m, &nanns);
    pp_model_cols(m, &c);
    for (size_t first = 0; first < c.count; first += PPTRACE_ROWS_PER_BLOCK) {
        size_t n = min_size(c.count - first, PPTRACE_ROWS_PER_BLOCK), ann_end = next_ann;
        while (ann_end < nanns && anns[ann_end].event < first + n)
            ann_end++;
        int rc = write_event_block(w, &c, first, n);
        if (rc == PP_OK)
            rc = write_annotations(w, anns, &next_ann, ann_end, event_base);
        if (rc)
            return rc;
    }
    return PP_OK;
}

int pptrace_put_end(writer *w, const pptrace_totals *t) {
    unsigned char *p = block_begin(w, PPTRACE_END, PPTRACE_END_LEN);
    if (!p)
        return PP_ENOMEM;
    pptrace_put64(p, t->strings);
    pptrace_put64(p + 8, t->tracks);
    pptrace_put64(p + 16, t->threads);
    pptrace_put64(p + 24, t->events);
    pptrace_put64(p + 32, t->annotations);
    block_end(w);
    return PP_OK;
}

void pptrace_put_header(writer *w) {
    unsigned char header[PPTRACE_HEADER_LEN];
    memcpy(header, PPTRACE_MAGIC, PPTRACE_MAGIC_LEN);
    pptrace_put32(header + 8, PPTRACE_VERSION);
    pptrace_put32(header + 12, 0); /* flags: none defined */
    w->sink(w->ctx, header, sizeof header);
}

static void to_outfile(void *ctx, const void *data, size_t len) {
    pp_outfile_write(ctx, data, len);
}

/* A .pptrace being written: the head's tables, then events in chunks. */
typedef struct pptrace_file {
    pp_outfile out;
    pptrace_enc enc;
    pptrace_totals totals; /* events and annotations: those written so far */
} pptrace_file;

static int pptrace_close(void *file, int commit, pp_error *err) {
    pptrace_file *f = file;
    int rc = commit ? pptrace_put_end(&f->enc, &f->totals) : PP_OK;
    if (rc)
        pp_set_error(err, rc, "%s: out of memory", f->out.path);
    if (commit && rc == PP_OK)
        rc = pp_outfile_commit(&f->out, err);
    else
        pp_outfile_abort(&f->out);
    pptrace_enc_free(&f->enc);
    free(f);
    return rc;
}

static int pptrace_open(void **out, const pp_model *head, const char *path, pp_error *err) {
    *out = NULL;
    int level = pp_model_meta_get(head)->level;
    if (level < -1 || level > 2) /* the reader rejects it: the writer must not produce it */
        return pp_set_error(err, PP_EINVAL, "%s: recording level %d is not -1 (unknown), 0, 1 or 2",
                            path, level);
    if (pp_model_meta_get(head)->alignment_error_ns < -1)
        return pp_set_error(err, PP_EINVAL, "%s: alignment error %lld ns is below -1 (not known)",
                            path, (long long)pp_model_meta_get(head)->alignment_error_ns);
    pptrace_file *f = calloc(1, sizeof *f);
    if (!f)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    int rc = pp_outfile_open(&f->out, path, err);
    if (rc) {
        free(f);
        return rc;
    }
    f->enc = (pptrace_enc){.sink = to_outfile, .ctx = &f->out};
    f->totals = (pptrace_totals){pp_model_string_count(head), pp_model_track_count(head),
                                 pp_model_thread_count(head), 0, 0};
    pptrace_put_header(&f->enc);
    rc = pptrace_put_strings(&f->enc, head, 1, path, err);
    if (rc == PP_OK &&
        ((rc = pptrace_put_meta(&f->enc, head)) || (rc = pptrace_put_clock(&f->enc, head)) ||
         (rc = pptrace_put_tracks(&f->enc, head, 0)) ||
         (rc = pptrace_put_threads(&f->enc, head, 0))))
        pp_set_error(err, rc, "%s: out of memory", path);
    if (rc) {
        pptrace_close(f, 0, err);
        return rc;
    }
    *out = f;
    return PP_OK;
}

static int pptrace_events(void *file, const pp_model *chunk, pp_error *err) {
    pptrace_file *f = file;
    size_t nanns;
    pp_model_anns(chunk, &nanns);
    int rc = pptrace_put_events(&f->enc, chunk, f->totals.events);
    if (rc)
        return pp_set_error(err, rc, "%s: out of memory", f->out.path);
    f->totals.events += pp_model_event_count(chunk);
    f->totals.annotations += nanns;
    return PP_OK;
}

const trace_writer pptrace_writer = {pptrace_open, pptrace_events, pptrace_close};

int pp_pptrace_write(const pp_model *m, const char *path, pp_error *err) {
    if (!m || !path)
        return pp_set_error(err, PP_EINVAL, "pp_pptrace_write: model and path are required");
    return trace_writer_write(&pptrace_writer, m, path, err);
}
