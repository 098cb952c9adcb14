/* narrow.c — narrowing one of a model's columns in place (pp_model_narrow,
 * model/columns.h).
 *
 * Why in place: the model's columns are most of what an analysis holds,
 * and a copy would hold both widths at once. Slot i moves from byte
 * i << from to byte i << to, never past where it was, so one forward pass
 * over chunks (each read whole before it is written) narrows the column
 * over itself; the pages past its new end then go back (column_mem.h).
 * A chunk is written only where it changed: most slots of a sparse column
 * are zero, on pages never written, and stay so. */
#include "model/narrow.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/column_mem.h"

#define CHUNK 4096 /* slots a pass reads, then writes */

/* The column as its readers see it (model/columns.h). */
static pp_ncol reader_view(const pp_narrow_col *c) {
    return pp_ncol_make(c->p, c->shift, c->is_batch);
}

/* Slot i of the column, widened, and whether it is the escape: its value
 * in the side table (no string id is UINT32_MAX, the 32-bit name column's
 * escape). */
static int64_t slot_at(const pp_narrow_col *c, size_t i) {
    pp_ncol v = reader_view(c);
    if (c->is_batch)
        return pp_ncol_i(v, i);
    return pp_ncol_u(v, i);
}

static int escaped(const pp_narrow_col *c, int64_t raw) {
    pp_ncol v = reader_view(c);
    return c->is_batch ? raw == (int32_t)v.escape : raw == v.escape;
}

/* Whether a value keeps its slot 1 or 2 bytes wide: below the escape (an
 * escape now is never below a narrower one), or a delta in [-127, 127]. */
#define FITS_U8(x) ((x) < UINT8_MAX)
#define FITS_U16(x) ((x) < UINT16_MAX)
#define FITS_I8(x) ((uint16_t)((x) + 127) <= 254)

/* The chunk functions are inlined into loops over whole chunks, where n is
 * CHUNK and the compiler vectorizes them, and over the last, shorter one. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* Adds how many of the n slots at p fail to fit 1 byte to *m0, 2 bytes to *m1. */
ALWAYS_INLINE void misses_u32(const uint32_t *p, size_t n, size_t *m0, size_t *m1) {
    uint32_t a = 0, b = 0; /* 32 bits: n is at most a chunk, and they vectorize */
    for (size_t i = 0; i < n; i++) {
        a += !FITS_U8(p[i]);
        b += !FITS_U16(p[i]);
    }
    *m0 += a, *m1 += b;
}

ALWAYS_INLINE void misses_u16(const uint16_t *p, size_t n, size_t *m0) {
    uint32_t a = 0;
    for (size_t i = 0; i < n; i++)
        a += !FITS_U8(p[i]);
    *m0 += a;
}

ALWAYS_INLINE void misses_i16(const int16_t *p, size_t n, size_t *m0) {
    uint32_t a = 0;
    for (size_t i = 0; i < n; i++)
        a += !FITS_I8(p[i]);
    *m0 += a;
}

/* Narrows the n slots at src (type S) into out (type D), each that does
 * not fit becoming `escape`; returns how many did not. */
#define NARROW_CHUNK(name, S, D, FITS)                                               \
    ALWAYS_INLINE size_t name(const S *src, D *out, size_t n, D escape) {            \
        uint32_t missed = 0;                                                         \
        for (size_t i = 0; i < n; i++) {                                             \
            int ok = FITS(src[i]);                                                   \
            out[i] = ok ? (D)src[i] : escape;                                        \
            missed += !ok;                                                           \
        }                                                                            \
        return missed;                                                               \
    }
NARROW_CHUNK(narrow_u32_u16, uint32_t, uint16_t, FITS_U16)
NARROW_CHUNK(narrow_u32_u8, uint32_t, uint8_t, FITS_U8)
NARROW_CHUNK(narrow_u16_u8, uint16_t, uint8_t, FITS_U8)
NARROW_CHUNK(narrow_i16_i8, int16_t, int8_t, FITS_I8)

/* Narrows slots [at, at + n) of c from its width to `to` into out; how
 * many did not fit. */
ALWAYS_INLINE size_t narrow_chunk(const pp_narrow_col *c, size_t at, size_t n, unsigned to,
                                  void *out) {
    if (c->is_batch)
        return narrow_i16_i8((const int16_t *)c->p + at, out, n, INT8_MIN);
    if (c->shift == 1)
        return narrow_u16_u8((const uint16_t *)c->p + at, out, n, UINT8_MAX);
    if (to == 1)
        return narrow_u32_u16((const uint32_t *)c->p + at, out, n, UINT16_MAX);
    return narrow_u32_u8((const uint32_t *)c->p + at, out, n, UINT8_MAX);
}

ALWAYS_INLINE void count_chunk(const pp_narrow_col *c, size_t at, size_t n, size_t miss[2]) {
    if (c->is_batch)
        misses_i16((const int16_t *)c->p + at, n, &miss[0]);
    else if (c->shift == 1)
        misses_u16((const uint16_t *)c->p + at, n, &miss[0]);
    else
        misses_u32((const uint32_t *)c->p + at, n, &miss[0], &miss[1]);
}

/* The value slot i holds, whole: what its side-table entry keeps. */
static uint64_t value_of(const pp_narrow_col *c, size_t i, int64_t raw) {
    if (escaped(c, raw))
        return pp_wide_get(c->wide, i);
    return c->is_batch ? (uint64_t)pp_batch_of_slot(c->pages, i, (int32_t)raw) : (uint64_t)raw;
}

/* The narrowest width below c->shift that leaves at most one slot in 64
 * escaped, and how many escape at it; c->shift when none does. */
static unsigned width_for(const pp_narrow_col *c, size_t count, size_t *nescaped) {
    size_t miss[2] = {0, 0}; /* slots that do not fit 1 and 2 bytes */
    size_t whole = count - count % CHUNK;
    for (size_t at = 0; at < whole; at += CHUNK)
        count_chunk(c, at, CHUNK, miss);
    if (whole < count)
        count_chunk(c, whole, count - whole, miss);
    for (unsigned to = 0; to < c->shift; to++)
        if (miss[to] <= count / 64) {
            *nescaped = miss[to];
            return to;
        }
    return c->shift;
}

/* Narrows slots [at, at + n) into place at width `to`, their escapes into
 * `side`: the chunk is read whole before it is written (narrow.c's top). */
ALWAYS_INLINE void narrow_in_place(pp_narrow_col *c, size_t at, size_t n, unsigned to,
                                   pp_wide_col *side) {
    unsigned char out[CHUNK * 2];
    unsigned char *dst = (unsigned char *)c->p + (at << to);
    if (narrow_chunk(c, at, n, to, out) > 0)
        for (size_t i = at; i < at + n; i++) {
            int64_t raw = slot_at(c, i);
            int fit = c->is_batch ? FITS_I8(raw) : to == 0 ? FITS_U8(raw) : FITS_U16(raw);
            if (!fit)
                side->e[side->n++] = (pp_wide){i, value_of(c, i, raw)};
        }
    if (memcmp(dst, out, n << to) != 0) /* a zero page read stays unwritten */
        memcpy(dst, out, n << to);
}

static int column_narrow(pp_narrow_col *c, size_t count) {
    size_t nescaped = 0;
    unsigned to = width_for(c, count, &nescaped);
    if (to == c->shift)
        return 0;
    /* the new side table, whole before any slot moves: then nothing fails */
    pp_wide_col side = {malloc((nescaped ? nescaped : 1) * sizeof *side.e), 0, nescaped};
    if (!side.e)
        return PP_ENOMEM;
    size_t whole = count - count % CHUNK;
    for (size_t at = 0; at < whole; at += CHUNK)
        narrow_in_place(c, at, CHUNK, to, &side);
    if (whole < count)
        narrow_in_place(c, whole, count - whole, to, &side);
    free(c->wide->e);
    *c->wide = side;
    c->shift = to;
    size_t bytes = count ? count << to : 1;
    void *kept = bytes < c->bytes ? pp_column_shrink(c->p, c->bytes, bytes) : NULL;
    if (kept) { /* else the narrowed slots stay at the front of the larger column */
        c->p = kept;
        c->bytes = bytes;
    }
    return 0;
}

/* The columns a thread narrows: every other one from `first`. */
typedef struct narrow_job {
    pp_narrow_col *c;
    size_t n, first, count;
} narrow_job;

static void *narrow_every_other(void *arg) {
    narrow_job *j = arg;
    for (size_t k = j->first; k < j->n; k += 2)
        (void)column_narrow(&j->c[k], j->count); /* on no memory it stays as it was */
    return NULL;
}

void pp_columns_narrow(pp_narrow_col *c, size_t n, size_t count) {
    narrow_job odd = {c, n, 1, count}, even = {c, n, 0, count};
    pthread_t helper;
    int beside = pthread_create(&helper, NULL, narrow_every_other, &odd) == 0;
    narrow_every_other(&even);
    if (beside)
        pthread_join(helper, NULL);
    else
        narrow_every_other(&odd);
}
