/* test_stats.c — the statistics every uncertain statement rests on
 * (src/stats): the same seed gives the same answer, intervals cover what
 * they claim, and the tests reject exactly what they should. */
#include <math.h>
#include <stdlib.h>

#include "pipeprof/common.h"
#include "stats/stats.h"
#include "testutil.h"

/* A seed fixes the sequence: the bootstrap and the simulation are
 * reproducible run to run and machine to machine. */
static void test_rng_is_deterministic_and_uniform(void) {
    pp_rng a, b;
    pp_rng_seed(&a, 42);
    pp_rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++)
        EXPECT(pp_rng_next(&a) == pp_rng_next(&b));
    pp_rng_seed(&b, 43);
    EXPECT(pp_rng_next(&a) != pp_rng_next(&b));
    /* 100000 draws below 10: each value within 5% of its 10000 share. */
    unsigned count[10] = {0};
    for (int i = 0; i < 100000; i++)
        count[pp_rng_below(&a, 10)]++;
    for (int v = 0; v < 10; v++)
        EXPECT(count[v] > 9500 && count[v] < 10500);
    for (int i = 0; i < 1000; i++) {
        double u = pp_rng_unit(&a);
        EXPECT(u >= 0 && u < 1);
    }
}

/* A sample with no spread has an interval of zero width. */
static void test_bootstrap_of_constant_is_exact(void) {
    double x[30];
    for (int i = 0; i < 30; i++)
        x[i] = 7.5;
    pp_interval ci;
    EXPECT_EQ_I64(pp_bootstrap(x, 30, pp_stat_mean, NULL, NULL, &ci), 0);
    EXPECT(ci.est == 7.5 && ci.lo == 7.5 && ci.hi == 7.5);
}

/* 1..100: mean 50.5, standard error 29.01 / sqrt(100) = 2.9, so a 95%
 * interval about +-5.7 wide each side. */
static void test_bootstrap_mean_interval_width(void) {
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = i + 1;
    pp_interval ci;
    EXPECT_EQ_I64(pp_bootstrap(x, 100, pp_stat_mean, NULL, NULL, &ci), 0);
    EXPECT(ci.est == 50.5);
    EXPECT(ci.lo > 43 && ci.lo < 47.5);
    EXPECT(ci.hi > 53.5 && ci.hi < 58);
    /* the same seed gives the same interval */
    pp_interval again;
    pp_bootstrap(x, 100, pp_stat_mean, NULL, NULL, &again);
    EXPECT(again.lo == ci.lo && again.hi == ci.hi);
}

/* Coverage: 200 samples of 50 exponential(1) values; the 95% interval of
 * the mean holds the true mean 1 in most of them (the percentile bootstrap
 * covers skewed means a little below nominal: at least 88% here). */
static void test_bootstrap_covers_true_mean(void) {
    pp_rng rng;
    pp_rng_seed(&rng, 7);
    pp_boot_opts o;
    pp_boot_opts_init(&o);
    o.reps = 400;
    int covered = 0;
    for (int s = 0; s < 200; s++) {
        double x[50];
        for (int i = 0; i < 50; i++)
            x[i] = -log(1 - pp_rng_unit(&rng));
        pp_interval ci;
        o.seed = (uint64_t)s;
        pp_bootstrap(x, 50, pp_stat_mean, NULL, &o, &ci);
        covered += ci.lo <= 1 && 1 <= ci.hi;
    }
    EXPECT(covered >= 176);
    EXPECT(covered <= 198);
}

/* The quantile statistic uses pp_percentile's nearest rank. */
static void test_quantile_is_nearest_rank(void) {
    double x[100];
    for (int i = 0; i < 100; i++)
        x[(i * 37) % 100] = i + 1; /* 1..100, shuffled */
    double q = 0.95;
    EXPECT(pp_stat_quantile(x, 100, &q) == 95);
    q = 0.5;
    EXPECT(pp_stat_quantile(x, 100, &q) == 50);
    q = 1;
    EXPECT(pp_stat_quantile(x, 100, &q) == 100);
    double v[5] = {5, 1, 4, 2, 3};
    EXPECT(pp_quantile_interp(v, 5, 0.5) == 3);
    EXPECT(pp_quantile_interp(v, 5, 0.125) == 1.5);
}

/* Two samples: y 10% above x in mean; the interval of the change holds 0.1
 * and excludes 0. */
static void test_bootstrap2_relative_change(void) {
    double x[200], y[200];
    for (int i = 0; i < 200; i++)
        x[i] = 100 + (i % 20), y[i] = 1.1 * x[i];
    pp_interval ci;
    EXPECT_EQ_I64(pp_bootstrap2(x, 200, y, 200, pp_stat_mean_change, NULL, NULL, &ci), 0);
    EXPECT(fabs(ci.est - 0.1) < 1e-12);
    EXPECT(ci.lo > 0.08 && ci.lo < 0.1 && ci.hi > 0.1 && ci.hi < 0.12);
}

static void test_bootstrap_rejects_bad_input(void) {
    double x[1] = {1};
    pp_interval ci;
    pp_boot_opts o;
    pp_boot_opts_init(&o);
    EXPECT_EQ_I64(pp_bootstrap(x, 0, pp_stat_mean, NULL, NULL, &ci), PP_EINVAL);
    o.level = 1;
    EXPECT_EQ_I64(pp_bootstrap(x, 1, pp_stat_mean, NULL, &o, &ci), PP_EINVAL);
    EXPECT_EQ_I64(pp_bootstrap2(x, 1, x, 0, pp_stat_mean_change, NULL, NULL, &ci), PP_EINVAL);
}

/* Every y above every x: U = nx * ny, superiority 1, p tiny; the same
 * sample twice: superiority 0.5, p = 1. */
static void test_mann_whitney(void) {
    double x[10], y[10];
    for (int i = 0; i < 10; i++)
        x[i] = i + 1, y[i] = i + 11;
    pp_rank_test t;
    EXPECT_EQ_I64(pp_mann_whitney(x, 10, y, 10, &t), 0);
    EXPECT(t.u == 100 && t.superiority == 1);
    EXPECT(t.p < 0.001 && t.z > 3);
    EXPECT_EQ_I64(pp_mann_whitney(x, 10, x, 10, &t), 0);
    EXPECT(t.superiority == 0.5 && t.p == 1);
    double same[4] = {3, 3, 3, 3};
    EXPECT_EQ_I64(pp_mann_whitney(same, 4, same, 4, &t), 0);
    EXPECT(t.p == 1);
    EXPECT_EQ_I64(pp_mann_whitney(x, 0, y, 10, &t), PP_EINVAL);
}

/* 21 of 40 is what chance gives (p = 0.875); 0 of 10 happens twice in 1024. */
static void test_sign_test(void) {
    EXPECT(fabs(pp_sign_test(21, 40) - 0.8746) < 1e-3);
    EXPECT(fabs(pp_sign_test(19, 40) - 0.8746) < 1e-3);
    EXPECT(fabs(pp_sign_test(0, 10) - 2.0 / 1024) < 1e-12);
    EXPECT(pp_sign_test(5, 10) == 1);
    EXPECT(pp_sign_test(0, 0) == 1);
}

/* Sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2: stop there. */
static void test_holm(void) {
    double p[4] = {0.01, 0.04, 0.03, 0.005};
    int reject[4];
    EXPECT_EQ_I64(pp_holm(p, 4, 0.05, reject), 0);
    EXPECT(reject[0] == 1 && reject[1] == 0 && reject[2] == 0 && reject[3] == 1);
}

int main(void) {
    RUN(test_rng_is_deterministic_and_uniform);
    RUN(test_bootstrap_of_constant_is_exact);
    RUN(test_bootstrap_mean_interval_width);
    RUN(test_bootstrap_covers_true_mean);
    RUN(test_quantile_is_nearest_rank);
    RUN(test_bootstrap2_relative_change);
    RUN(test_bootstrap_rejects_bad_input);
    RUN(test_mann_whitney);
    RUN(test_sign_test);
    RUN(test_holm);
    return pp_test_finish();
}
