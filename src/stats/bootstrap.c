/* bootstrap.c — percentile bootstrap intervals and interpolated quantiles.
 *
 * The percentile bootstrap (Efron) is used because the samples pipeprof
 * judges — per-batch stage times, cycle latencies — are skewed and often
 * bimodal, where a normal-theory interval would be wrong, and because it
 * serves every statistic (mean, p95, a ratio of two means) with one method.
 * Its cost is reps * n draws; PP_BOOT_MAX_DRAWS bounds it on long traces. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pipeprof/common.h"
#include "stats/stats.h"

void pp_boot_opts_init(pp_boot_opts *o) {
    o->seed = PP_STATS_SEED;
    o->reps = 1000;
    o->level = 0.95;
}

double pp_stat_mean(double *x, size_t n, void *ctx) {
    (void)ctx;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    return n ? sum / (double)n : NAN;
}

/* Wirth's selection: the k-th smallest (0-based) of x, reordering x.
 * Signed indices: j steps below i, and below 0, by design. */
static double select_kth(double *x, size_t n, size_t k) {
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k;
    while (lo < hi) {
        double pivot = x[want];
        ptrdiff_t i = lo, j = hi;
        do {
            while (x[i] < pivot)
                i++;
            while (pivot < x[j])
                j--;
            if (i <= j) {
                double t = x[i];
                x[i] = x[j], x[j] = t;
                i++, j--;
            }
        } while (i <= j);
        if (j < want)
            lo = i;
        if (want < i)
            hi = j;
    }
    return x[want];
}

double pp_stat_quantile(double *x, size_t n, void *ctx) {
    double q = *(const double *)ctx;
    if (n == 0)
        return NAN;
    double rank = ceil(q * (double)n);
    size_t k = rank < 1 ? 0 : rank > (double)n ? n - 1 : (size_t)rank - 1;
    return select_kth(x, n, k);
}

double pp_stat_mean_change(double *x, size_t nx, double *y, size_t ny, void *ctx) {
    double mx = pp_stat_mean(x, nx, ctx), my = pp_stat_mean(y, ny, ctx);
    return mx == 0 ? NAN : my / mx - 1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pp_quantile_interp(double *v, size_t n, double q) {
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    double h = (double)(n - 1) * (q < 0 ? 0 : q > 1 ? 1 : q);
    size_t i = (size_t)h;
    return i + 1 < n ? v[i] + (h - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

static unsigned reps_for(const pp_boot_opts *o, size_t draws_per_rep) {
    unsigned reps = o->reps ? o->reps : 1000;
    if (draws_per_rep && (uint64_t)reps * draws_per_rep > PP_BOOT_MAX_DRAWS) {
        uint64_t fit = PP_BOOT_MAX_DRAWS / draws_per_rep;
        reps = fit < PP_BOOT_MIN_REPS ? PP_BOOT_MIN_REPS : (unsigned)fit;
    }
    return reps;
}

static void resample(pp_rng *rng, const double *x, size_t n, double *into) {
    for (size_t i = 0; i < n; i++)
        into[i] = x[pp_rng_below(rng, n)];
}

/* lo and hi from the replicate statistics (NaN replicates are left out: a
 * ratio whose resampled denominator was 0). */
static int finish(double *stats, unsigned reps, double level, pp_interval *out) {
    size_t kept = 0;
    for (unsigned i = 0; i < reps; i++)
        if (!isnan(stats[i]))
            stats[kept++] = stats[i];
    if (kept == 0) {
        out->lo = out->hi = NAN;
        return 0;
    }
    double tail = (1 - level) / 2;
    out->lo = pp_quantile_interp(stats, kept, tail);
    out->hi = pp_quantile_interp(stats, kept, 1 - tail);
    return 0;
}

static int check(size_t n, const pp_boot_opts *o) {
    return n == 0 || !(o->level > 0 && o->level < 1) ? PP_EINVAL : 0;
}

int pp_bootstrap(const double *x, size_t n, pp_stat_fn fn, void *ctx, const pp_boot_opts *o,
                 pp_interval *out) {
    pp_boot_opts defaults;
    if (!o)
        pp_boot_opts_init(&defaults), o = &defaults;
    if (check(n, o))
        return PP_EINVAL;
    unsigned reps = reps_for(o, n);
    double *scratch = malloc(n * sizeof *scratch), *stats = malloc(reps * sizeof *stats);
    if (!scratch || !stats) {
        free(scratch), free(stats);
        return PP_ENOMEM;
    }
    memcpy(scratch, x, n * sizeof *scratch);
    out->est = fn(scratch, n, ctx);
    pp_rng rng;
    pp_rng_seed(&rng, o->seed);
    for (unsigned r = 0; r < reps; r++) {
        resample(&rng, x, n, scratch);
        stats[r] = fn(scratch, n, ctx);
    }
    int rc = finish(stats, reps, o->level, out);
    free(scratch), free(stats);
    return rc;
}

int pp_bootstrap2(const double *x, size_t nx, const double *y, size_t ny, pp_stat2_fn fn,
                  void *ctx, const pp_boot_opts *o, pp_interval *out) {
    pp_boot_opts defaults;
    if (!o)
        pp_boot_opts_init(&defaults), o = &defaults;
    if (check(nx, o) || ny == 0)
        return PP_EINVAL;
    unsigned reps = reps_for(o, nx + ny);
    double *sx = malloc(nx * sizeof *sx), *sy = malloc(ny * sizeof *sy);
    double *stats = malloc(reps * sizeof *stats);
    if (!sx || !sy || !stats) {
        free(sx), free(sy), free(stats);
        return PP_ENOMEM;
    }
    memcpy(sx, x, nx * sizeof *sx);
    memcpy(sy, y, ny * sizeof *sy);
    out->est = fn(sx, nx, sy, ny, ctx);
    pp_rng rng;
    pp_rng_seed(&rng, o->seed);
    for (unsigned r = 0; r < reps; r++) {
        resample(&rng, x, nx, sx);
        resample(&rng, y, ny, sy);
        stats[r] = fn(sx, nx, sy, ny, ctx);
    }
    int rc = finish(stats, reps, o->level, out);
    free(sx), free(sy), free(stats);
    return rc;
}
