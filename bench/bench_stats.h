/* bench_stats.h — what several benchmarks measure the same way: the CPU
 * time the whole process has used, and the median of a run of samples
 * (docs/architecture.md §8: each figure beside its baseline, taken in the same run). */
#ifndef PP_BENCH_STATS_H
#define PP_BENCH_STATS_H

#include <stddef.h>
#include <stdlib.h>
#include <sys/resource.h>

/* User + system CPU time of this process so far, in microseconds. */
static inline double bench_process_cpu_us(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static inline int bench_by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (the upper one for even n); sorts v. */
static inline double bench_median(double *v, size_t n) {
    qsort(v, n, sizeof v[0], bench_by_value);
    return v[n / 2];
}

#endif
