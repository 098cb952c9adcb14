/* pptrace_codec.h — the version-2 payload of one EVENTS or ANNOTATIONS block
 * of a .pptrace file (docs/format-pptrace.md, "Version 2 tables").
 *
 * A payload is a u32 row count, a directory of u32 column lengths, and the
 * columns: LEB128 varints, deltas between neighbouring rows where values
 * grow (times, batches, annotated events), raw bytes where they do not pay.
 * Encoding and decoding one block are the only entry points, so that any
 * writer of block-framed .pptrace (a whole model at once, or blocks as a
 * program runs) produces the same bytes. The decoders check only what the
 * encoding itself can get wrong (lengths, varints running past their column);
 * ids, ranges and enum values are the reader's to check. */
#ifndef PP_IO_PPTRACE_CODEC_H
#define PP_IO_PPTRACE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "model/event_slots.h"
#include "pipeprof/model.h"

/* Events: ts, dur, batch, hw, xfer, id, value, name, stage, track (varints),
 * then one byte of kind | role << 3 | phase << 6 per event. */
enum { PPTRACE_EV_TS, PPTRACE_EV_DUR, PPTRACE_EV_BATCH, PPTRACE_EV_HW, PPTRACE_EV_XFER,
       PPTRACE_EV_ID, PPTRACE_EV_VALUE, PPTRACE_EV_NAME, PPTRACE_EV_STAGE, PPTRACE_EV_TRACK,
       PPTRACE_EV_FLAGS, PPTRACE_EV_COLUMNS };
/* Annotations: event (varint: the first absolute, then the step from the
 * row before), key (varint), type (byte), value (by type: zigzag varint,
 * 8 bytes of f64, varint string id). */
enum { PPTRACE_AN_EVENT, PPTRACE_AN_KEY, PPTRACE_AN_TYPE, PPTRACE_AN_VALUE,
       PPTRACE_AN_COLUMNS };

#define PPTRACE_VARINT_MAX 10 /* bytes of the longest LEB128 u64 */
/* The largest payloads, for blocks of at most PPTRACE_ROWS_PER_BLOCK rows:
 * what a writer reserves and the most a reader accepts. */
#define PPTRACE_V2_EVENTS_MAX(rows) \
    (4u + 4u * PPTRACE_EV_COLUMNS + (rows) * (10u * PPTRACE_VARINT_MAX + 1u))
#define PPTRACE_V2_ANNOTATIONS_MAX(rows) \
    (4u + 4u * PPTRACE_AN_COLUMNS + (rows) * (3u * PPTRACE_VARINT_MAX + 1u))

/* The column names, for messages. */
extern const char *const pptrace_event_column_names[PPTRACE_EV_COLUMNS];
extern const char *const pptrace_annotation_column_names[PPTRACE_AN_COLUMNS];

/* Encodes events [first, first + n) of `c` into `out` (room for
 * PPTRACE_V2_EVENTS_MAX(n) bytes); returns the payload length. */
size_t pptrace_events_encode(const pp_cols *c, size_t first, size_t n,
                             unsigned char *out);
/* Encodes n annotations, sorted by event, into `out` (room for
 * PPTRACE_V2_ANNOTATIONS_MAX(n) bytes); returns the payload length. The
 * file numbers event index e as event_base + e (a writer that writes a
 * recording in parts passes the events it wrote before). */
size_t pptrace_annotations_encode(const pp_ann *a, size_t n, uint64_t event_base,
                                  unsigned char *out);

/* Where decoding stands in each column of one payload. */
typedef struct pptrace_decoder {
    const unsigned char *start[PPTRACE_EV_COLUMNS]; /* sized for the wider table */
    const unsigned char *at[PPTRACE_EV_COLUMNS], *end[PPTRACE_EV_COLUMNS];
    uint64_t prev[3]; /* events: ts, batch, value bits; annotations: event */
    uint32_t rows, left;
} pptrace_decoder;

/* What pptrace_*_open found wrong; 0 when nothing. */
typedef enum pptrace_layout_problem {
    PPTRACE_LAYOUT_OK = 0,
    PPTRACE_LAYOUT_SHORT,   /* shorter than its row count and column directory */
    PPTRACE_LAYOUT_ROWS,    /* more than PPTRACE_ROWS_PER_BLOCK rows */
    PPTRACE_LAYOUT_COLUMNS, /* the column lengths do not add up to the payload */
    PPTRACE_LAYOUT_BYTES    /* a byte column's length is not the row count */
} pptrace_layout_problem;

/* Reads the row count and the column directory of a payload of `len` bytes. */
pptrace_layout_problem pptrace_events_open(pptrace_decoder *d, const unsigned char *p,
                                           size_t len);
pptrace_layout_problem pptrace_annotations_open(pptrace_decoder *d, const unsigned char *p,
                                                size_t len);

/* Decodes the next `count` rows (at most d->left) into out[] (events: into
 * slots 0 to count - 1 of the columns of `out`, whose sparse columns must
 * read zero there: model/event_slots.h). Returns -1
 * when all went well, else the column whose value is malformed (a varint
 * running past the column's end or too large for its field; for
 * annotations also an unknown type, stored in out[*row].type) and sets
 * *row to the row within this call. An annotation's string value is left
 * whole in v.i, for the reader to range-check before narrowing it.
 * Events return PPTRACE_DECODE_NO_ROOM when a value too wide for its
 * 32-bit slot could not be kept (out->wide is NULL, or no memory:
 * model/event_slots.h). */
#define PPTRACE_DECODE_NO_ROOM (-2)
int pptrace_events_decode(pptrace_decoder *d, const pp_event_slots *out, uint32_t count,
                          uint32_t *row);
int pptrace_annotations_decode(pptrace_decoder *d, pp_annotation *out, uint32_t count,
                               uint32_t *row);

/* After the last row: the first column with bytes left over, or -1. */
int pptrace_decoder_leftover(const pptrace_decoder *d, int ncolumns);

/* Where row `row` of column `col` starts, for messages (walks the column). */
const unsigned char *pptrace_events_field(const pptrace_decoder *d, int col, uint32_t row);
const unsigned char *pptrace_annotations_field(const pptrace_decoder *d, int col, uint32_t row);

#endif
