/* stats/stats.h — the statistics behind every uncertain statement pipeprof
 * makes: a seeded random generator, bootstrap confidence intervals, rank and
 * sign tests, and the correction for many comparisons.
 *
 * Why a layer of its own: the findings (is one stage really slower than
 * another, is a data-parallel split really unbalanced), the diff (did a
 * figure really change between two runs) and the what-if simulation (how
 * wide is a predicted throughput) must judge noise the same way, with one
 * documented method (docs/analysis.md, "Uncertainty"). The functions are
 * plain numerics over arrays of doubles; they know nothing of traces.
 *
 * Every result is deterministic for a seed: the same input and seed give
 * the same interval on every machine (xoshiro256** seeded by splitmix64,
 * integer draws without modulo bias). Functions return 0 or a negative
 * PP_E* code (pipeprof/common.h): PP_EINVAL for an empty sample or a bad
 * level, PP_ENOMEM. */
#ifndef PP_STATS_H
#define PP_STATS_H

#include <stddef.h>
#include <stdint.h>

/* ---- random numbers --------------------------------------------------- */

typedef struct pp_rng {
    uint64_t s[4];
} pp_rng;

/* Seeds the generator; every seed (0 included) gives a good state. */
void pp_rng_seed(pp_rng *r, uint64_t seed);
uint64_t pp_rng_next(pp_rng *r);
/* Uniform in [0, n), without modulo bias (Lemire's method); n > 0. */
uint64_t pp_rng_below(pp_rng *r, uint64_t n);
/* Uniform in [0, 1), 53 random bits. */
double pp_rng_unit(pp_rng *r);

/* ---- intervals ---------------------------------------------------------- */

/* A point estimate with a two-sided confidence interval [lo, hi]. */
typedef struct pp_interval {
    double est, lo, hi;
} pp_interval;

/* How a bootstrap runs. `reps` resamples (default 1000); `level` the
 * interval's coverage (default 0.95); `seed` (default PP_STATS_SEED). To
 * bound the cost on long traces, reps is lowered so that reps * n stays
 * under PP_BOOT_MAX_DRAWS, never below PP_BOOT_MIN_REPS. */
typedef struct pp_boot_opts {
    uint64_t seed;
    unsigned reps;
    double level;
} pp_boot_opts;

#define PP_STATS_SEED 0x9e3779b97f4a7c15ull
#define PP_BOOT_MAX_DRAWS 50000000ull
#define PP_BOOT_MIN_REPS 200u

void pp_boot_opts_init(pp_boot_opts *o);

/* A statistic of one sample. It may reorder x (a resample is scratch). */
typedef double (*pp_stat_fn)(double *x, size_t n, void *ctx);
/* A statistic of two samples (a difference, a ratio). */
typedef double (*pp_stat2_fn)(double *x, size_t nx, double *y, size_t ny, void *ctx);

/* The mean; ctx unused. */
double pp_stat_mean(double *x, size_t n, void *ctx);
/* The nearest-rank quantile *(const double *)ctx in (0, 1], the same rank
 * rule as pp_percentile (ceil(q n)); reorders x. */
double pp_stat_quantile(double *x, size_t n, void *ctx);
/* mean(y) / mean(x) - 1: the relative change of the mean from x to y (NaN
 * when mean(x) is 0); ctx unused. */
double pp_stat_mean_change(double *x, size_t nx, double *y, size_t ny, void *ctx);

/* Percentile bootstrap: est = fn(x), [lo, hi] the (1-level)/2 and
 * (1+level)/2 quantiles of fn over resamples of x with replacement. x is
 * not changed. */
int pp_bootstrap(const double *x, size_t n, pp_stat_fn fn, void *ctx,
                 const pp_boot_opts *o, pp_interval *out);
/* The same for a statistic of two independent samples, each resampled on
 * its own. */
int pp_bootstrap2(const double *x, size_t nx, const double *y, size_t ny, pp_stat2_fn fn,
                  void *ctx, const pp_boot_opts *o, pp_interval *out);

/* The quantile `q` in [0, 1] of n values by linear interpolation between
 * order statistics (Hyndman-Fan type 7); sorts v in place. For summarizing
 * simulated replicas, where ranks of a few values would jump. */
double pp_quantile_interp(double *v, size_t n, double q);

/* ---- tests ------------------------------------------------------------- */

/* Mann-Whitney U (Wilcoxon rank-sum) of two independent samples, with the
 * normal approximation corrected for ties and continuity. p is two-sided.
 * superiority = P(Y > X) + P(Y = X) / 2: 0.5 when neither tends to exceed. */
typedef struct pp_rank_test {
    double u, z, p, superiority;
} pp_rank_test;

int pp_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, pp_rank_test *out);

/* Two-sided exact sign (binomial, p = 1/2) test: the probability of a split
 * at least as uneven as k of n. 1 for n == 0. "Device A was the slower one
 * in 21 of 40 batches" gives p = 0.87: no evidence of imbalance. */
double pp_sign_test(uint64_t k, uint64_t n);

/* Holm's step-down correction of n p-values for a family-wise error rate
 * alpha: reject[i] = 1 for the p-values still significant. Returns
 * PP_ENOMEM, else 0. */
int pp_holm(const double *p, size_t n, double alpha, int *reject);

#endif
