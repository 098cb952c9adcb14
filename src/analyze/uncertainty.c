/* uncertainty.c — the 95% intervals across batches that findings rest on
 * (docs/analysis.md, "Uncertainty"), through src/stats's percentile
 * bootstrap.
 *
 * Resampled units are batches. A trace of more than AN_BOOT_UNITS batches
 * is resampled in AN_BOOT_UNITS runs of consecutive batches instead (their
 * sums): a block bootstrap, which keeps the cost of an interval to a few
 * milliseconds on a trace of a million batches (single batches would take
 * the stats layer's floor of 200 resamples of all of them, seconds per
 * interval), and keeps a slow drift inside a block rather than pretending
 * batches minutes apart are exchangeable. The estimate is always the one
 * of all batches. */
#include <stdlib.h>

#include "analyze/report.h"
#include "stats/stats.h"

/* Σ num / Σ den over a resample of units (x: unit indexes). */
typedef struct ratio_ctx {
    const double *num, *den;
} ratio_ctx;

static double ratio_of(double *x, size_t n, void *ctx) {
    const ratio_ctx *c = ctx;
    double a = 0, b = 0;
    for (size_t i = 0; i < n; i++)
        a += c->num[(size_t)x[i]], b += c->den[(size_t)x[i]];
    return b != 0 ? a / b : 0.0;
}

/* The interval of Σ num / Σ den; den NULL: 1 each (a mean). */
static int interval(const double *num, const double *den, size_t n, pp_interval_3 *out);

int an_ratio_interval(const double *num, const double *den, size_t n, pp_interval_3 *out) {
    return interval(num, den, n, out);
}

int an_mean_interval(const double *v, size_t n, pp_interval_3 *out) {
    return interval(v, NULL, n, out);
}

static int interval(const double *num, const double *den, size_t n, pp_interval_3 *out) {
    double a = 0, b = 0;
    for (size_t i = 0; i < n; i++)
        a += num[i], b += den ? den[i] : 1.0;
    double est = b != 0 ? a / b : 0.0;
    *out = (pp_interval_3){est, est, est};
    if (n < 2)
        return PP_OK;
    size_t k = n > AN_BOOT_UNITS ? AN_BOOT_UNITS : n;
    double *sn = calloc(k, sizeof *sn), *sd = calloc(k, sizeof *sd), *idx = malloc(k * sizeof *idx);
    int rc = sn && sd && idx ? PP_OK : PP_ENOMEM;
    for (size_t i = 0; rc == PP_OK && i < n; i++) { /* unit u holds [u n / k, (u+1) n / k) */
        size_t u = (size_t)((uint64_t)i * k / n); /* i < 2^32 (pp_report_build), k <= 4096 */
        sn[u] += num[i], sd[u] += den ? den[i] : 1.0;
    }
    for (size_t u = 0; rc == PP_OK && u < k; u++)
        idx[u] = (double)u;
    pp_interval iv;
    pp_boot_opts o;
    pp_boot_opts_init(&o);
    ratio_ctx c = {sn, sd};
    if (rc == PP_OK)
        rc = pp_bootstrap(idx, k, ratio_of, &c, &o, &iv);
    if (rc == PP_OK)
        out->lo = iv.lo, out->hi = iv.hi;
    free(sn), free(sd), free(idx);
    return rc;
}

