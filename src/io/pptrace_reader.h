/* pptrace_reader.h — the .pptrace reader's state, shared by its files (not
 * public): pptrace_read.c reads the file block by block and decodes the
 * small tables; pptrace_read_rows.c decodes and checks the rows of EVENTS
 * and ANNOTATIONS blocks; pptrace_reader.c holds what both use (messages,
 * reads, a table's row count). */
#ifndef PP_IO_PPTRACE_READER_H
#define PP_IO_PPTRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "io/pptrace_read_ahead.h"
#include "io/trace_read.h"
#include "pipeprof/model.h"

#define RD_BLOCK_DONE 1 /* read_block: the END block was read */

/* What a read keeps of the events (trace_read.h): all of them; none (their
 * blocks are checked and counted, the rest decoded); or a chunk at a time. */
typedef enum read_mode { READ_WHOLE, READ_SKELETON, READ_CHUNKS } read_mode;

typedef struct reader {
    const char *path;
    int fd;
    pp_error *err;
    pp_model *m;
    uint64_t size;       /* file size when opened (chunks: at most the skeleton's) */
    uint64_t block_at;   /* offset of the block being read */
    uint64_t payload_at; /* offset of its payload, which lies in buf */
    uint32_t type, len;  /* of the block being read */
    uint32_t version;    /* of the file's header */
    unsigned char *buf;
    size_t cap;
    pp_annotation *anns; /* a block's annotations as decoded, before the model packs them */
    size_t anns_cap;
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
    const pptrace_skeleton *skeleton; /* chunks: what the first pass saw */
    pptrace_chunk_fn chunk;
    void *chunk_ctx;
} reader;

/* Events and annotations of the file read so far. */
static inline uint64_t events_read(const reader *r) {
    return r->event_base + pp_model_event_count(r->m);
}

static inline uint64_t annotations_read(const reader *r) {
    size_t n;
    pp_model_anns(r->m, &n);
    return r->annotation_base + n;
}

/* PP_EFORMAT with "FILE: byte AT: PROBLEM". */
int rd_fail(reader *r, uint64_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int rd_no_memory(reader *r);
/* Reads up to n bytes at file offset `from`; a short count means end of
 * file. PP_EIO on error. */
int rd_read_bytes(reader *r, uint64_t from, void *dst, size_t n, size_t *got);
/* The file offset of a byte of the payload buffer. */
static inline uint64_t rd_at(const reader *r, const unsigned char *q) {
    return r->payload_at + (uint64_t)(q - r->buf);
}
/* The row count of a table block, checked against the block's length. */
int rd_table_rows(reader *r, const unsigned char *p, uint32_t len, uint32_t row, uint32_t *n);

/* The rows of an EVENTS or ANNOTATIONS block of each version (version 1:
 * after the row count, n rows), decoded into the model and checked. */
int rd_events_v1(reader *r, const unsigned char *p, uint32_t n);
int rd_events_v2(reader *r, const unsigned char *p, uint32_t len);
int rd_annotations_v1(reader *r, const unsigned char *p, uint32_t n);
int rd_annotations_v2(reader *r, const unsigned char *p, uint32_t len);
/* Appends the rows of the block being read that the workers decoded. */
int rd_commit_decoded(reader *r, uint32_t rows);
/* Skeleton: counts the rows of the block being read instead. */
int rd_count_rows(reader *r, uint32_t len);

#endif
