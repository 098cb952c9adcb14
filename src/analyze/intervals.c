/* intervals.c — unions of busy intervals and the bubbles between them.
 *
 * busy(d) is the length of the union, never the sum, of a device's exec
 * intervals: two streams running at once count once (DESIGN.md §4). */
#include <stdlib.h>

#include "analyze/report.h"

static int cmp_span(const void *a, const void *b) {
    const an_span *x = a, *y = b;
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return (x->end > y->end) - (x->end < y->end);
}

/* Radix sort by start when the scratch space can be had (millions of
 * execs), else qsort. */
static void sort_by_start(an_span *iv, size_t n) {
    an_kv *kv = n >= 4096 ? malloc(n * sizeof *kv) : NULL;
    if (kv) {
        for (size_t i = 0; i < n; i++)
            kv[i] = (an_kv){an_key_i64(iv[i].start), (uint64_t)iv[i].end};
        if (an_kv_sort(kv, n) == PP_OK) {
            for (size_t i = 0; i < n; i++)
                iv[i] = (an_span){(int64_t)(kv[i].key ^ (UINT64_C(1) << 63)), (int64_t)kv[i].val};
            free(kv);
            return;
        }
        free(kv);
    }
    qsort(iv, n, sizeof *iv, cmp_span);
}

size_t an_intervals_merge(an_span *iv, size_t n, int64_t w0, int64_t w1, int64_t *busy) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) { /* clip to W, drop what falls outside */
        int64_t s = iv[i].start < w0 ? w0 : iv[i].start;
        int64_t e = iv[i].end > w1 ? w1 : iv[i].end;
        if (e > s)
            iv[k++] = (an_span){s, e};
    }
    sort_by_start(iv, k);
    size_t m = 0;
    int64_t total = 0;
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && iv[i].start <= iv[m - 1].end) { /* touching or overlapping */
            if (iv[i].end > iv[m - 1].end)
                iv[m - 1].end = iv[i].end;
        } else {
            iv[m++] = iv[i];
        }
    }
    for (size_t i = 0; i < m; i++)
        total += iv[i].end - iv[i].start;
    *busy = total;
    return m;
}

int an_gaps_summarize(const an_span *merged, size_t n, int64_t w0, int64_t w1,
                      pp_gap_stats *out) {
    *out = (pp_gap_stats){0};
    if (n == 0) {
        out->leading_ns = w1 - w0;
        return PP_OK;
    }
    out->leading_ns = merged[0].start - w0;
    out->trailing_ns = w1 - merged[n - 1].end;
    if (n < 2)
        return PP_OK;
    int64_t *gaps = malloc((n - 1) * sizeof *gaps);
    if (!gaps)
        return PP_ENOMEM;
    for (size_t i = 1; i < n; i++)
        gaps[i - 1] = merged[i].start - merged[i - 1].end;
    pp_summary s;
    pp_summary_compute(gaps, n - 1, &s);
    free(gaps);
    out->count = s.n;
    out->mean = s.mean;
    out->p50 = s.p50;
    out->p95 = s.p95;
    out->max = s.max;
    out->total = s.total;
    return PP_OK;
}
