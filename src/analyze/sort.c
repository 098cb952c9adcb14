/* sort.c — radix sorting for the large arrays of an analysis.
 *
 * A 10M-event trace sorts millions of durations and (stage, batch) keys;
 * comparison sorts spent most of the analysis time in qsort's callbacks. An
 * LSD radix sort on 64-bit keys is linear, stable, and skips every byte
 * position where all keys agree (the high bytes of durations and batch
 * numbers usually do). */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"

int an_kv_sort(an_kv *a, size_t n) {
    if (n < 2)
        return PP_OK;
    an_kv *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return PP_ENOMEM;
    an_kv *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i].key >> shift) & 0xff]++;
        if (count[(src[0].key >> shift) & 0xff] == n)
            continue; /* every key has this byte: the pass would change nothing */
        size_t pos = 0;
        for (size_t b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = pos;
            pos += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].key >> shift) & 0xff]++] = src[i];
        an_kv *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    free(tmp);
    return PP_OK;
}

uint64_t an_key_i64(int64_t v) {
    return (uint64_t)v ^ (UINT64_C(1) << 63); /* negative values sort first */
}
