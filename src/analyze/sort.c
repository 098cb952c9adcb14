/* sort.c — radix sorting for the large arrays of an analysis.
 *
 * A 10M-event trace sorts millions of durations, gaps and interval starts;
 * comparison sorts spent most of the analysis time in qsort's callbacks. An
 * LSD radix sort on a 64-bit key is linear and stable. A first pass finds
 * the byte positions where keys differ (the high bytes of durations and
 * timestamps usually agree); one more pass counts their histograms, and one
 * scatter pass per such byte sorts.
 *
 * Records are 8 bytes (an int64 value) or 16 bytes (an an_kv or an an_span:
 * the key first). The record size is a constant at each call of
 * radix_records, so the compiler builds one specialized loop per size.
 *
 * Lookups in sorted tables that come nearly in ascending order (the execs
 * of a stage by batch, annotations by event) search outward from the last
 * answer (an_lower_bound_near), a few steps each instead of a binary search
 * over the whole table, whose cache misses dominated. */
#include <string.h>

#include "analyze/report.h"

#define SIGN (UINT64_C(1) << 63)

static inline uint64_t key_at(const unsigned char *rec, uint64_t flip) {
    uint64_t k;
    memcpy(&k, rec, sizeof k);
    return k ^ flip;
}

/* Sorts n records of `size` bytes by their leading 64-bit key; `flip` is
 * SIGN for signed keys (negative values first), 0 for unsigned ones. */
static inline void radix_records(void *a, size_t n, size_t size, uint64_t flip, void *tmp) {
    if (n < 2)
        return;
    const unsigned char *in = a;
    uint64_t all = ~UINT64_C(0), any = 0; /* bits set in every key, in some key */
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(in + i * size, flip);
        all &= k;
        any |= k;
    }
    unsigned shift[8], nshift = 0; /* the byte positions where keys differ */
    for (unsigned b = 0; b < 8; b++)
        if (((all ^ any) >> (8 * b)) & 0xff)
            shift[nshift++] = 8 * b;
    size_t count[8][256] = {{0}}; /* 16 KiB of stack; no state between calls */
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(in + i * size, flip);
        for (unsigned p = 0; p < nshift; p++)
            count[p][(k >> shift[p]) & 0xff]++;
    }
    unsigned char *src = a, *dst = tmp;
    for (unsigned p = 0; p < nshift; p++) {
        size_t *c = count[p], pos = 0;
        for (size_t v = 0; v < 256; v++) {
            size_t k = c[v];
            c[v] = pos;
            pos += k;
        }
        for (size_t i = 0; i < n; i++) {
            const unsigned char *rec = src + i * size;
            memcpy(dst + c[(key_at(rec, flip) >> shift[p]) & 0xff]++ * size, rec, size);
        }
        unsigned char *t = src;
        src = dst;
        dst = t;
    }
    if (src != (unsigned char *)a)
        memcpy(a, src, n * size);
}

void an_kv_sort(an_kv *a, size_t n, an_kv *tmp) {
    radix_records(a, n, sizeof *a, 0, tmp);
}

void an_span_sort(an_span *a, size_t n, an_span *tmp) {
    radix_records(a, n, sizeof *a, SIGN, tmp);
}

void an_i64_sort(int64_t *a, size_t n, int64_t *tmp) {
    radix_records(a, n, sizeof *a, SIGN, tmp);
}

static uint64_t key_of(const unsigned char *a, size_t size, size_t at, size_t width, size_t i) {
    if (width == sizeof(uint32_t)) {
        uint32_t k;
        memcpy(&k, a + i * size + at, sizeof k);
        return k;
    }
    uint64_t k;
    memcpy(&k, a + i * size + at, sizeof k);
    return k;
}

size_t an_lower_bound_near(const void *records, size_t size, size_t at, size_t width, size_t lo,
                           size_t hi, size_t from, uint64_t v) {
    const unsigned char *a = records;
    size_t l = lo, h = hi; /* the answer lies in [l, h] */
    if (from < hi && key_of(a, size, at, width, from) < v) {
        l = from + 1;
        for (size_t step = 1; l + step - 1 < h; step *= 2) {
            size_t q = l + step - 1;
            if (key_of(a, size, at, width, q) >= v) {
                h = q;
                break;
            }
            l = q + 1;
        }
    } else if (from < hi) {
        h = from;
        for (size_t step = 1; h >= l + step; step *= 2) {
            size_t q = h - step;
            if (key_of(a, size, at, width, q) < v) {
                l = q + 1;
                break;
            }
            h = q;
        }
    }
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (key_of(a, size, at, width, mid) < v)
            l = mid + 1;
        else
            h = mid;
    }
    return l;
}

uint64_t an_key_i64(int64_t v) {
    return (uint64_t)v ^ SIGN; /* negative values sort first */
}
