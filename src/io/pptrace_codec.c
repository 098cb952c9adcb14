/* The version-2 EVENTS and ANNOTATIONS payloads (pptrace_codec.h,
 * docs/format-pptrace.md).
 *
 * Why this shape: in a trace, neighbouring events are close in time and
 * batch, durations and ids are small, and most fields repeat a handful of
 * values; as varints in columns they take 1-3 bytes where the fixed-width
 * layout of version 1 took 8, with no compressor to link or to tune, and
 * decoding is one predictable loop per column. A counter value is stored as
 * its bits XORed with the previous value's, byte-swapped, so that a repeated
 * value is one byte and a small whole number two. */
#include "io/pptrace_codec.h"

#include <string.h>

#include "io/pptrace_format.h"

const char *const pptrace_event_column_names[PPTRACE_EV_COLUMNS] = {
    "ts", "dur", "batch", "hw", "xfer", "id", "value", "name", "stage", "track", "flags"};
const char *const pptrace_annotation_column_names[PPTRACE_AN_COLUMNS] = {"event", "key", "type",
                                                                          "value"};

static uint64_t zigzag(uint64_t v) {
    return v << 1 ^ (uint64_t)-(int64_t)(v >> 63);
}

static uint64_t unzigzag(uint64_t v) {
    return v >> 1 ^ (uint64_t)-(int64_t)(v & 1);
}

static uint64_t bswap64(uint64_t v) {
    uint64_t r = 0;
    for (int i = 0; i < 8; i++, v >>= 8)
        r = r << 8 | (v & 0xff);
    return r;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

/* Reads one varint of at most 10 bytes that ends before `end`; 0 when it
 * does not, or when its tenth byte carries bits past the 64th. */
static inline int get_varint(const unsigned char **pp, const unsigned char *end, uint64_t *v) {
    const unsigned char *p = *pp;
    if (p < end && *p < 0x80) { /* the common case: one byte */
        *v = *p;
        *pp = p + 1;
        return 1;
    }
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
        unsigned b = *p++;
        if (shift == 63 && b > 1)
            return 0;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *v = x;
            *pp = p;
            return 1;
        }
    }
    return 0;
}

/* Appends the directory and the columns: column k's bytes were written at
 * cols[k] (each with room for its worst case) and run to ends[k]. The
 * columns are moved down to follow each other; returns the payload length. */
static size_t pack_columns(unsigned char *out, uint32_t n, int ncols, unsigned char *const *cols,
                           unsigned char *const *ends) {
    pptrace_put32(out, n);
    unsigned char *dst = out + 4 + 4 * (size_t)ncols;
    for (int k = 0; k < ncols; k++) {
        size_t len = (size_t)(ends[k] - cols[k]);
        pptrace_put32(out + 4 + 4 * (size_t)k, (uint32_t)len);
        memmove(dst, cols[k], len);
        dst += len;
    }
    return (size_t)(dst - out);
}

size_t pptrace_events_encode(const pp_cols *c, size_t first, size_t n,
                             unsigned char *out) {
    /* Each varint column gets its worst case of room, in order; pack_columns
     * closes the gaps (moving down never overwrites what is still to move). */
    unsigned char *cols[PPTRACE_EV_COLUMNS], *p[PPTRACE_EV_COLUMNS];
    cols[0] = out + 4 + 4 * PPTRACE_EV_COLUMNS;
    for (int k = 1; k < PPTRACE_EV_COLUMNS; k++)
        cols[k] = cols[k - 1] + n * PPTRACE_VARINT_MAX;
    memcpy(p, cols, sizeof p);
    uint64_t ts = 0, batch = 0, value = 0;
    for (size_t i = first; i < first + n; i++) {
        uint64_t bits;
        memcpy(&bits, &c->value[i], sizeof bits);
        p[PPTRACE_EV_TS] = put_varint(p[PPTRACE_EV_TS], zigzag((uint64_t)pp_cols_ts(c, i) - ts));
        int64_t b = pp_cols_batch(c, i);
        p[PPTRACE_EV_DUR] = put_varint(p[PPTRACE_EV_DUR], (uint64_t)pp_cols_dur(c, i));
        p[PPTRACE_EV_BATCH] = put_varint(p[PPTRACE_EV_BATCH], zigzag((uint64_t)b - batch));
        p[PPTRACE_EV_HW] = put_varint(p[PPTRACE_EV_HW], pp_cols_hw(c, i));
        p[PPTRACE_EV_XFER] = put_varint(p[PPTRACE_EV_XFER], pp_cols_xfer(c, i));
        p[PPTRACE_EV_ID] = put_varint(p[PPTRACE_EV_ID], c->id[i]);
        p[PPTRACE_EV_VALUE] = put_varint(p[PPTRACE_EV_VALUE], bswap64(bits ^ value));
        p[PPTRACE_EV_NAME] = put_varint(p[PPTRACE_EV_NAME], pp_cols_name(c, i));
        p[PPTRACE_EV_STAGE] = put_varint(p[PPTRACE_EV_STAGE], pp_cols_stage(c, i));
        p[PPTRACE_EV_TRACK] = put_varint(p[PPTRACE_EV_TRACK], pp_cols_track(c, i));
        *p[PPTRACE_EV_FLAGS]++ = (unsigned char)(c->kind[i] | c->role[i] << 3 | c->phase[i] << 6);
        ts = (uint64_t)pp_cols_ts(c, i), batch = (uint64_t)b, value = bits;
    }
    return pack_columns(out, (uint32_t)n, PPTRACE_EV_COLUMNS, cols, p);
}

size_t pptrace_annotations_encode(const pp_ann *a, size_t n, uint64_t event_base,
                                  unsigned char *out) {
    unsigned char *cols[PPTRACE_AN_COLUMNS], *p[PPTRACE_AN_COLUMNS];
    cols[PPTRACE_AN_EVENT] = out + 4 + 4 * PPTRACE_AN_COLUMNS;
    cols[PPTRACE_AN_KEY] = cols[PPTRACE_AN_EVENT] + n * PPTRACE_VARINT_MAX;
    cols[PPTRACE_AN_TYPE] = cols[PPTRACE_AN_KEY] + n * PPTRACE_VARINT_MAX;
    cols[PPTRACE_AN_VALUE] = cols[PPTRACE_AN_TYPE] + n; /* one byte a row */
    memcpy(p, cols, sizeof p);
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t event = event_base + a[i].event;
        p[PPTRACE_AN_EVENT] = put_varint(p[PPTRACE_AN_EVENT], event - prev);
        p[PPTRACE_AN_KEY] = put_varint(p[PPTRACE_AN_KEY], pp_ann_key(&a[i]));
        *p[PPTRACE_AN_TYPE]++ = pp_ann_type(&a[i]);
        if (pp_ann_type(&a[i]) == PP_VALUE_INT) {
            p[PPTRACE_AN_VALUE] = put_varint(p[PPTRACE_AN_VALUE], zigzag((uint64_t)a[i].v.i));
        } else if (pp_ann_type(&a[i]) == PP_VALUE_DOUBLE) {
            uint64_t bits;
            memcpy(&bits, &a[i].v.d, sizeof bits);
            pptrace_put64(p[PPTRACE_AN_VALUE], bits);
            p[PPTRACE_AN_VALUE] += 8;
        } else {
            p[PPTRACE_AN_VALUE] = put_varint(p[PPTRACE_AN_VALUE], a[i].v.s);
        }
        prev = event;
    }
    return pack_columns(out, (uint32_t)n, PPTRACE_AN_COLUMNS, cols, p);
}

/* The row count and directory; `byte_col` is the column of one byte a row. */
static pptrace_layout_problem open_columns(pptrace_decoder *d, const unsigned char *p, size_t len,
                                           int ncols, int byte_col) {
    memset(d, 0, sizeof *d);
    size_t head = 4 + 4 * (size_t)ncols;
    if (len < head)
        return PPTRACE_LAYOUT_SHORT;
    d->rows = d->left = pptrace_get32(p);
    if (d->rows > PPTRACE_ROWS_PER_BLOCK)
        return PPTRACE_LAYOUT_ROWS;
    const unsigned char *q = p + head, *end = p + len;
    for (int k = 0; k < ncols; k++) {
        uint32_t clen = pptrace_get32(p + 4 + 4 * (size_t)k);
        if (clen > (size_t)(end - q))
            return PPTRACE_LAYOUT_COLUMNS;
        d->start[k] = d->at[k] = q;
        d->end[k] = q += clen;
    }
    if (q != end)
        return PPTRACE_LAYOUT_COLUMNS;
    return d->end[byte_col] - d->start[byte_col] == d->rows ? PPTRACE_LAYOUT_OK
                                                             : PPTRACE_LAYOUT_BYTES;
}

pptrace_layout_problem pptrace_events_open(pptrace_decoder *d, const unsigned char *p,
                                           size_t len) {
    return open_columns(d, p, len, PPTRACE_EV_COLUMNS, PPTRACE_EV_FLAGS);
}

pptrace_layout_problem pptrace_annotations_open(pptrace_decoder *d, const unsigned char *p,
                                                size_t len) {
    return open_columns(d, p, len, PPTRACE_AN_COLUMNS, PPTRACE_AN_TYPE);
}

/* Reads n varints of column k into v[], returning 0 at the first bad one
 * (its index in *bad). While ten bytes remain, a varint cannot run past the
 * column, so only the last few values pay for the bounds check. */
static int get_column(pptrace_decoder *d, int k, uint64_t *v, uint32_t n, uint32_t *bad) {
    const unsigned char *p = d->at[k], *end = d->end[k];
    uint32_t i = 0;
    for (; i < n && end - p >= PPTRACE_VARINT_MAX; i++) {
        uint64_t x = *p++;
        if (x >= 0x80) {
            unsigned b, shift = 7;
            x &= 0x7f;
            do {
                b = *p++;
                x |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
            } while (b >= 0x80 && shift < 70);
            if (b >= 0x80 || (shift == 70 && b > 1)) {
                *bad = i;
                return 0;
            }
        }
        v[i] = x;
    }
    for (; i < n; i++)
        if (!get_varint(&p, end, &v[i])) {
            *bad = i;
            return 0;
        }
    d->at[k] = p;
    return 1;
}

/* The sparse columns (model/event_slots.h) are written a run at a time
 * only when a value of the run is not zero: their slots read zero. */
static void put_sparse_u64(void *slots, const uint64_t *v, uint32_t n) {
    uint64_t any = 0;
    for (uint32_t i = 0; i < n; i++)
        any |= v[i];
    if (any)
        memcpy(slots, v, (size_t)n * sizeof *v);
}

/* Track and stage ids (checked to fit 32 bits), the stage sparse: nonzero
 * when a wide one could not be kept. */
static int put_ids(const pp_event_slots *s, size_t first, const uint64_t *track,
                   const uint64_t *stage, uint32_t n) {
    uint64_t any = 0;
    int lost = 0;
    for (uint32_t i = 0; i < n; i++) {
        lost |= pp_slot_put_track(s, first + i, (uint32_t)track[i]);
        any |= stage[i];
    }
    for (uint32_t i = 0; any && i < n; i++)
        lost |= pp_slot_put_stage(s, first + i, (uint32_t)stage[i]);
    return lost;
}

/* hw_ns and xfer_ns: sparse and narrow (model/columns.h); nonzero when a
 * wide value could not be kept. */
static int put_sparse_narrow(const pp_event_slots *s, uint32_t *col, int c, size_t first,
                             const uint64_t *v, uint32_t n) {
    uint64_t any = 0;
    for (uint32_t i = 0; i < n; i++)
        any |= v[i];
    int lost = 0;
    for (uint32_t i = 0; any && i < n; i++)
        lost |= pp_slot_put_sparse32(s, col, c, first + i, v[i]);
    return lost;
}

/* Phase: the top two bits of each flags byte. */
static void put_sparse_phase(uint8_t *slots, const unsigned char *flags, uint32_t n) {
    unsigned any = 0;
    for (uint32_t i = 0; i < n; i++)
        any |= flags[i];
    for (uint32_t i = 0; any >> 6 && i < n; i++)
        slots[i] = flags[i] >> 6;
}

/* Rows are decoded in runs of this many, column by column, so each column is
 * one tight loop and the run's values stay in the first-level cache. */
#define RUN 128

int pptrace_events_decode(pptrace_decoder *d, const pp_event_slots *out, uint32_t count,
                          uint32_t *row) {
    uint64_t v[PPTRACE_EV_FLAGS][RUN];
    for (uint32_t done = 0; done < count;) {
        uint32_t n = count - done < RUN ? count - done : RUN, bad;
        for (int k = 0; k < PPTRACE_EV_FLAGS; k++)
            if (!get_column(d, k, v[k], n, &bad)) {
                *row = done + bad;
                return k;
            }
        for (int k = PPTRACE_EV_NAME; k <= PPTRACE_EV_TRACK; k++)
            for (uint32_t i = 0; i < n; i++)
                if (v[k][i] > UINT32_MAX) {
                    *row = done + i;
                    return k;
                }
        const unsigned char *flags = d->at[PPTRACE_EV_FLAGS];
        uint64_t ts = d->prev[0], batch = d->prev[1], value = d->prev[2];
        int lost = 0;
        for (uint32_t i = 0; i < n; i++) {
            ts += unzigzag(v[PPTRACE_EV_TS][i]);
            batch += unzigzag(v[PPTRACE_EV_BATCH][i]);
            value ^= bswap64(v[PPTRACE_EV_VALUE][i]);
            lost |= pp_slot_put_ts(out, done + i, (int64_t)ts);
            lost |= pp_slot_put_dur(out, done + i, (int64_t)v[PPTRACE_EV_DUR][i]);
            lost |= pp_slot_put_batch(out, done + i, (int64_t)batch);
            v[PPTRACE_EV_VALUE][i] = value; /* now the value's bits */
        }
        lost |= put_sparse_narrow(out, out->hw32, PP_WIDE_HW, done, v[PPTRACE_EV_HW], n);
        lost |= put_sparse_narrow(out, out->xfer32, PP_WIDE_XFER, done, v[PPTRACE_EV_XFER], n);
        lost |= put_ids(out, done, v[PPTRACE_EV_TRACK], v[PPTRACE_EV_STAGE], n);
        if (lost) {
            *row = done;
            return PPTRACE_DECODE_NO_ROOM;
        }
        put_sparse_u64(out->id + done, v[PPTRACE_EV_ID], n);
        put_sparse_u64(out->value + done, v[PPTRACE_EV_VALUE], n);
        put_sparse_phase(out->phase + done, flags, n);
        for (uint32_t i = 0; i < n; i++) {
            out->name[done + i] = (uint32_t)v[PPTRACE_EV_NAME][i];
            out->kind[done + i] = flags[i] & 7;
            out->role[done + i] = flags[i] >> 3 & 7;
        }
        d->at[PPTRACE_EV_FLAGS] = flags + n;
        d->prev[0] = ts, d->prev[1] = batch, d->prev[2] = value;
        d->left -= n;
        done += n;
    }
    return -1;
}

int pptrace_annotations_decode(pptrace_decoder *d, pp_annotation *out, uint32_t count,
                               uint32_t *row) {
    const unsigned char **at = d->at, *const *end = d->end;
    for (uint32_t i = 0; i < count; i++, d->left--) {
        pp_annotation *a = &out[i];
        uint64_t step, key, value;
        *row = i;
        if (!get_varint(&at[PPTRACE_AN_EVENT], end[PPTRACE_AN_EVENT], &step))
            return PPTRACE_AN_EVENT;
        if (!get_varint(&at[PPTRACE_AN_KEY], end[PPTRACE_AN_KEY], &key) || key > UINT32_MAX)
            return PPTRACE_AN_KEY;
        a->event = d->prev[0] += step;
        a->key = (uint32_t)key;
        a->type = *at[PPTRACE_AN_TYPE]++;
        if (a->type == PP_VALUE_DOUBLE) {
            if (end[PPTRACE_AN_VALUE] - at[PPTRACE_AN_VALUE] < 8)
                return PPTRACE_AN_VALUE;
            value = pptrace_get64(at[PPTRACE_AN_VALUE]);
            at[PPTRACE_AN_VALUE] += 8;
            memcpy(&a->v.d, &value, sizeof a->v.d);
        } else if (a->type == PP_VALUE_INT || a->type == PP_VALUE_STR) {
            if (!get_varint(&at[PPTRACE_AN_VALUE], end[PPTRACE_AN_VALUE], &value))
                return PPTRACE_AN_VALUE;
            a->v.i = (int64_t)(a->type == PP_VALUE_INT ? unzigzag(value) : value);
        } else {
            return PPTRACE_AN_TYPE;
        }
    }
    return -1;
}

int pptrace_decoder_leftover(const pptrace_decoder *d, int ncolumns) {
    for (int k = 0; k < ncolumns; k++)
        if (d->at[k] != d->end[k])
            return k;
    return -1;
}

/* The start of the row-th varint of a column (or its end, if shorter). */
static const unsigned char *walk(const unsigned char *p, const unsigned char *end, uint32_t row) {
    uint64_t v;
    for (uint32_t i = 0; i < row && get_varint(&p, end, &v); i++)
        ;
    return p;
}

const unsigned char *pptrace_events_field(const pptrace_decoder *d, int col, uint32_t row) {
    if (col == PPTRACE_EV_FLAGS)
        return d->start[col] + row;
    return walk(d->start[col], d->end[col], row);
}

const unsigned char *pptrace_annotations_field(const pptrace_decoder *d, int col, uint32_t row) {
    if (col == PPTRACE_AN_TYPE)
        return d->start[col] + row;
    if (col != PPTRACE_AN_VALUE)
        return walk(d->start[col], d->end[col], row);
    const unsigned char *p = d->start[col], *end = d->end[col];
    for (uint32_t i = 0; i < row && p < end; i++)
        p = d->start[PPTRACE_AN_TYPE][i] == PP_VALUE_DOUBLE ? p + 8 : walk(p, end, 1);
    return p < end ? p : end;
}
