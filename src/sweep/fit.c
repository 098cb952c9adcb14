/* Least-squares line y = a*x + b (docs/sweep.md §fit).
 *
 * Centred sums (x - mean x) keep the arithmetic well conditioned when x is
 * a byte count in the millions and the spread is small beside it. */
#include "core/error.h"
#include "pipeprof/sweep.h"

int pp_fit_linear(const double *x, const double *y, size_t n, pp_fit *out) {
    if (n < 2)
        return PP_EINVAL;
    double mx = 0.0, my = 0.0, lo = x[0], hi = x[0];
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    if (lo == hi)
        return PP_EINVAL;
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0.0, sxy = 0.0, syy = 0.0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    double a = sxy / sxx, b = my - a * mx, ss_res = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = y[i] - (a * x[i] + b);
        ss_res += r * r;
    }
    *out = (pp_fit){.n = n, .a = a, .b = b, .r2 = syy > 0.0 ? 1.0 - ss_res / syy : 1.0,
                    .x_min = lo, .x_max = hi};
    return PP_OK;
}
