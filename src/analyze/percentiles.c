/* percentiles.c — nearest-rank percentiles and the standard summary.
 *
 * Integer arithmetic only (DESIGN.md §4): the rank of quantile q (thousandths
 * of a percent) among n values is ceil(q * n / 100000), so p99.9 of 1000
 * values is exactly the 999th, with no floating-point rounding. */
#include <stdlib.h>

#include "analyze/report.h"

int64_t pp_percentile(const int64_t *sorted, size_t n, uint32_t q_milli) {
    if (n == 0)
        return 0;
    uint64_t rank = ((uint64_t)q_milli * n + 99999u) / 100000u;
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Radix sort for large sets (linear), qsort for small ones or when the
 * scratch space cannot be had. */
static void sort_values(int64_t *values, size_t n) {
    an_kv *kv = n >= 4096 ? malloc(n * sizeof *kv) : NULL;
    if (kv) {
        for (size_t i = 0; i < n; i++)
            kv[i] = (an_kv){an_key_i64(values[i]), 0};
        if (an_kv_sort(kv, n) == PP_OK) {
            for (size_t i = 0; i < n; i++)
                values[i] = (int64_t)(kv[i].key ^ (UINT64_C(1) << 63));
            free(kv);
            return;
        }
        free(kv);
    }
    qsort(values, n, sizeof *values, cmp_i64);
}

void pp_summary_compute(int64_t *values, size_t n, pp_summary *out) {
    *out = (pp_summary){0};
    if (n == 0)
        return;
    sort_values(values, n);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += values[i];
    out->n = n;
    out->total = total;
    out->min = values[0];
    out->max = values[n - 1];
    /* floor division; values are non-negative durations */
    out->mean = total / (int64_t)n;
    out->p50 = pp_percentile(values, n, 50000);
    out->p90 = pp_percentile(values, n, 90000);
    out->p95 = pp_percentile(values, n, 95000);
    out->p97 = pp_percentile(values, n, 97000);
    out->p99 = pp_percentile(values, n, 99000);
    out->p999 = pp_percentile(values, n, 99900);
}
