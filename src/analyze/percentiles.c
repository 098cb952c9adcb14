/* percentiles.c — nearest-rank percentiles and the standard summary.
 *
 * Integer arithmetic only (docs/architecture.md §4): the rank of quantile q (thousandths
 * of a percent) among n values is ceil(q * n / 100000), so p99.9 of 1000
 * values is exactly the 999th, with no floating-point rounding.
 *
 * A summary needs six ranks, not a sorted array. For large sets an_summary
 * selects them: a histogram over the top 16 bits of the value range finds the
 * bucket of each wanted rank, and only the values of those few buckets are
 * gathered and sorted (bench/bench_analyze.c: a 10M-event report takes some
 * 30 summaries of a million values each). */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"

static const uint32_t quantiles[6] = {50000, 90000, 95000, 97000, 99000, 99900};

static uint64_t rank_of(size_t n, uint32_t q_milli) {
    uint64_t rank = ((uint64_t)q_milli * n + 99999u) / 100000u;
    return rank < 1 ? 1 : rank > n ? n : rank;
}

int64_t pp_percentile(const int64_t *sorted, size_t n, uint32_t q_milli) {
    return n == 0 ? 0 : sorted[rank_of(n, q_milli) - 1];
}

/* The mean is the floor of total / n, also for negative totals (a
 * concurrency penalty can be negative when a device reports more hardware
 * time than wall time). */
static int64_t floor_mean(int64_t total, size_t n) {
    int64_t mean = total / (int64_t)n;
    return total % (int64_t)n != 0 && total < 0 ? mean - 1 : mean;
}

static void set_percentiles(pp_summary *out, const int64_t p[6]) {
    out->p50 = p[0], out->p90 = p[1], out->p95 = p[2];
    out->p97 = p[3], out->p99 = p[4], out->p999 = p[5];
}

/* The total of n values, exact in 128 bits and saturated at the int64
 * range: a total of hardware times or penalties the input made huge reads
 * as the largest time, never as a wrapped negative one. */
static int64_t sum_of(const int64_t *v, size_t n) {
    __extension__ __int128 total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i];
    return total > INT64_MAX ? INT64_MAX : total < INT64_MIN ? INT64_MIN : (int64_t)total;
}

/* The summary of n > 0 ascending values. */
static void summarize_sorted(const int64_t *v, size_t n, pp_summary *out) {
    int64_t total = sum_of(v, n), p[6];
    *out = (pp_summary){.n = n, .total = total, .mean = floor_mean(total, n), .min = v[0],
                        .max = v[n - 1]};
    for (size_t j = 0; j < 6; j++)
        p[j] = v[rank_of(n, quantiles[j]) - 1];
    set_percentiles(out, p);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The public entry allocates its own scratch, and sorts with qsort when
 * that cannot be had: a caller's summary never fails. */
void pp_summary_compute(int64_t *values, size_t n, pp_summary *out) {
    *out = (pp_summary){0};
    if (n == 0)
        return;
    int64_t *tmp = malloc(n * sizeof *tmp);
    if (tmp)
        an_i64_sort(values, n, tmp);
    else
        qsort(values, n, sizeof *values, cmp_i64);
    free(tmp);
    summarize_sorted(values, n, out);
}

#define BUCKET_BITS 16

/* The six percentiles of v[0..n) (min and max given, min < max) by
 * selection. v is used as scratch afterwards. */
static int select_percentiles(pp_report *r, int64_t *v, size_t n, int64_t min, int64_t max,
                              int64_t p[6]) {
    uint64_t range = (uint64_t)max - (uint64_t)min;
    unsigned bits = 0;
    while (bits < 64 && (range >> bits) != 0)
        bits++;
    unsigned shift = bits > BUCKET_BITS ? bits - BUCKET_BITS : 0;
    size_t nbuckets = (size_t)(range >> shift) + 1;
    size_t *count = an_buf_get(&r->hist, nbuckets * sizeof *count);
    int64_t *gathered = an_buf_get(&r->sort_tmp, n * sizeof *gathered);
    if (!count || !gathered)
        return PP_ENOMEM;
    memset(count, 0, nbuckets * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[((uint64_t)v[i] - (uint64_t)min) >> shift]++;
    /* the bucket of each rank and the rank inside it; ranks ascend */
    size_t bucket[6], inner[6], below = 0, b = 0;
    for (size_t j = 0; j < 6; j++) {
        size_t rank = rank_of(n, quantiles[j]);
        while (below + count[b] < rank)
            below += count[b++];
        bucket[j] = b, inner[j] = rank - below;
    }
    if (shift == 0) { /* a bucket is one value */
        for (size_t j = 0; j < 6; j++)
            p[j] = (int64_t)((uint64_t)min + bucket[j]);
        return PP_OK;
    }
    /* gather the distinct target buckets, each into its own run */
    size_t first[6], len[6], nrun = 0, at = 0;
    for (size_t j = 0; j < 6; j++) {
        if (j > 0 && bucket[j] == bucket[j - 1])
            continue;
        first[nrun] = at, len[nrun] = 0;
        at += count[bucket[j]];
        count[bucket[j]] = SIZE_MAX - nrun++; /* marks the bucket with its run */
    }
    for (size_t i = 0; i < n; i++) {
        size_t c = count[((uint64_t)v[i] - (uint64_t)min) >> shift];
        if (c > SIZE_MAX - 6) {
            size_t run = SIZE_MAX - c;
            gathered[first[run] + len[run]++] = v[i];
        }
    }
    for (size_t j = 0, run = 0; j < 6; j++) {
        if (j > 0 && bucket[j] != bucket[j - 1])
            run++;
        if (j == 0 || bucket[j] != bucket[j - 1])
            an_i64_sort(gathered + first[run], len[run], v); /* v is free now */
        p[j] = gathered[first[run] + inner[j] - 1];
    }
    return PP_OK;
}

int an_summary(pp_report *r, int64_t *values, size_t n, pp_summary *out) {
    *out = (pp_summary){0};
    if (n == 0)
        return PP_OK;
    if (n < 4096) { /* a sort is cheaper than the histogram */
        int64_t *tmp = an_buf_get(&r->sort_tmp, n * sizeof *tmp);
        if (!tmp)
            return PP_ENOMEM;
        an_i64_sort(values, n, tmp);
        summarize_sorted(values, n, out);
        return PP_OK;
    }
    int64_t total = 0, min = values[0], max = values[0], p[6];
    int wrapped = 0; /* one pass: an int64 total is exact unless some partial sum overflowed */
    for (size_t i = 0; i < n; i++) {
        min = values[i] < min ? values[i] : min;
        max = values[i] > max ? values[i] : max;
        wrapped |= __builtin_add_overflow(total, values[i], &total);
    }
    if (wrapped)
        total = sum_of(values, n);
    *out = (pp_summary){.n = n, .total = total, .mean = floor_mean(total, n), .min = min,
                        .max = max};
    for (size_t j = 0; j < 6; j++)
        p[j] = min;
    int rc = min < max ? select_percentiles(r, values, n, min, max, p) : PP_OK;
    set_percentiles(out, p);
    return rc;
}
