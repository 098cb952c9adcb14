/* The least-squares line behind every bandwidth figure: exact data gives
 * back its a and b with R^2 = 1; noise orthogonal to the line leaves a and
 * b alone and lowers R^2 by exactly its share of the variance. */
#include "pipeprof/sweep.h"
#include "testutil.h"

/* latency = 0.25 ns/byte * bytes + 5000 ns, at byte counts like a sweep's. */
static void test_exact_line_is_recovered(void) {
    double x[4] = {8192, 16384, 65536, 262144}, y[4];
    for (int i = 0; i < 4; i++)
        y[i] = 0.25 * x[i] + 5000.0;
    pp_fit f;
    EXPECT_EQ_I64(pp_fit_linear(x, y, 4, &f), PP_OK);
    EXPECT_NEAR(f.a, 0.25, 1e-12);
    EXPECT_NEAR(f.b, 5000.0, 1e-6);
    EXPECT_NEAR(f.r2, 1.0, 1e-12);
    EXPECT_EQ_U64(f.n, 4);
    EXPECT_NEAR(f.x_min, 8192, 0);
    EXPECT_NEAR(f.x_max, 262144, 0);
}

/* y = 2x + 1 + e with e = (+1, -1, -1, +1): e sums to 0 and to 0 against x,
 * so the fit is still a = 2, b = 1; SS_res = 4 of SS_tot = 24 (y = 4, 4, 6,
 * 10 around 6), so R^2 = 1 - 4/24. */
static void test_noise_lowers_r2_by_its_share(void) {
    double x[4] = {1, 2, 3, 4}, y[4] = {4, 4, 6, 10};
    pp_fit f;
    EXPECT_EQ_I64(pp_fit_linear(x, y, 4, &f), PP_OK);
    EXPECT_NEAR(f.a, 2.0, 1e-12);
    EXPECT_NEAR(f.b, 1.0, 1e-12);
    EXPECT_NEAR(f.r2, 1.0 - 4.0 / 24.0, 1e-12);
}

/* A line needs two distinct x: one point, or one x repeated, is refused
 * rather than answered with a division by zero. */
static void test_degenerate_inputs_are_refused(void) {
    double x[3] = {5, 5, 5}, y[3] = {1, 2, 3};
    pp_fit f;
    EXPECT_EQ_I64(pp_fit_linear(x, y, 1, &f), PP_EINVAL);
    EXPECT_EQ_I64(pp_fit_linear(x, y, 3, &f), PP_EINVAL);
}

/* A flat line (a device whose time does not depend on size) is fitted
 * exactly: a = 0, R^2 = 1. */
static void test_flat_line_fits_exactly(void) {
    double x[3] = {1, 2, 3}, y[3] = {7, 7, 7};
    pp_fit f;
    EXPECT_EQ_I64(pp_fit_linear(x, y, 3, &f), PP_OK);
    EXPECT_NEAR(f.a, 0.0, 0);
    EXPECT_NEAR(f.b, 7.0, 0);
    EXPECT_NEAR(f.r2, 1.0, 0);
}

int main(void) {
    RUN(test_exact_line_is_recovered);
    RUN(test_noise_lowers_r2_by_its_share);
    RUN(test_degenerate_inputs_are_refused);
    RUN(test_flat_line_fits_exactly);
    return pp_test_finish();
}
