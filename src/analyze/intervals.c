/* intervals.c — unions of busy intervals and the bubbles between them.
 *
 * busy(d) is the length of the union, never the sum, of a device's exec
 * intervals: two streams running at once count once (docs/architecture.md §4). */
#include "analyze/report.h"

/* Merges the sorted iv[0..n) that touch or overlap, in place; returns how
 * many are left. */
static size_t merge_sorted(an_span *iv, size_t n) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && iv[i].start <= iv[m - 1].end) { /* touching or overlapping */
            if (iv[i].end > iv[m - 1].end)
                iv[m - 1].end = iv[i].end;
        } else {
            iv[m++] = iv[i];
        }
    }
    return m;
}

int an_intervals_merge(pp_report *r, an_span *iv, size_t n, int64_t w0, int64_t w1,
                       size_t *merged, int64_t *busy) {
    /* One stream in time order, the usual case, is clipped to W and merged
     * in one pass; the first interval out of order ends it, and the rest are
     * clipped behind what it merged, then all are sorted and merged again
     * (the union is the same). */
    size_t m = 0, i = 0;
    for (; i < n; i++) {
        int64_t s = iv[i].start < w0 ? w0 : iv[i].start;
        int64_t e = iv[i].end > w1 ? w1 : iv[i].end;
        if (e <= s) /* outside W */
            continue;
        if (m > 0 && s < iv[m - 1].start)
            break;
        if (m > 0 && s <= iv[m - 1].end) {
            if (e > iv[m - 1].end)
                iv[m - 1].end = e;
        } else {
            iv[m++] = (an_span){s, e};
        }
    }
    if (i < n) {
        size_t k = m;
        for (; i < n; i++) {
            int64_t s = iv[i].start < w0 ? w0 : iv[i].start;
            int64_t e = iv[i].end > w1 ? w1 : iv[i].end;
            if (e > s)
                iv[k++] = (an_span){s, e};
        }
        an_span *tmp = an_buf_get(&r->sort_tmp, k * sizeof *tmp);
        if (!tmp)
            return PP_ENOMEM;
        an_span_sort(iv, k, tmp);
        m = merge_sorted(iv, k);
    }
    int64_t total = 0;
    for (size_t j = 0; j < m; j++)
        total += iv[j].end - iv[j].start;
    *merged = m;
    *busy = total;
    return PP_OK;
}

/* Restores the heap order of runs[0..n) (by the start of each run's next
 * interval) below slot i. */
static void sift_down(an_run *runs, size_t n, size_t i) {
    for (;;) {
        size_t least = i, l = 2 * i + 1, r = l + 1;
        if (l < n && runs[l].at->start < runs[least].at->start)
            least = l;
        if (r < n && runs[r].at->start < runs[least].at->start)
            least = r;
        if (least == i)
            return;
        an_run t = runs[i];
        runs[i] = runs[least];
        runs[least] = t;
        i = least;
    }
}

void an_runs_union(an_run *runs, size_t k, an_span *out, size_t *merged, int64_t *busy) {
    size_t n = 0, m = 0;
    for (size_t i = 0; i < k; i++) /* a min-heap of the runs that are not empty */
        if (runs[i].at < runs[i].end)
            runs[n++] = runs[i];
    for (size_t i = n / 2; i-- > 0;)
        sift_down(runs, n, i);
    int64_t total = 0;
    while (n > 0) {
        an_span s = *runs[0].at++;
        if (runs[0].at == runs[0].end)
            runs[0] = runs[--n];
        sift_down(runs, n, 0);
        if (m > 0 && s.start <= out[m - 1].end) { /* touching or overlapping */
            if (s.end > out[m - 1].end)
                out[m - 1].end = s.end;
        } else {
            out[m++] = s;
        }
    }
    for (size_t i = 0; i < m; i++)
        total += out[i].end - out[i].start;
    *merged = m;
    *busy = total;
}

int an_gaps_summarize(pp_report *r, const an_span *merged, size_t n, int64_t w0, int64_t w1,
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
    int64_t *gaps = an_buf_get(&r->values, (n - 1) * sizeof *gaps);
    if (!gaps)
        return PP_ENOMEM;
    for (size_t i = 1; i < n; i++)
        gaps[i - 1] = merged[i].start - merged[i - 1].end;
    pp_summary s;
    int rc = an_summary(r, gaps, n - 1, &s);
    out->count = s.n;
    out->mean = s.mean;
    out->p50 = s.p50;
    out->p95 = s.p95;
    out->max = s.max;
    out->total = s.total;
    return rc;
}
