/* Estimating a stage's time on a device from the sizes the sweep measured
 * there: exact where measured, linear between the two measured sizes
 * around a size, and outside them never below the nearest measurement;
 * its spread from run to run by the same rules. And the expected largest
 * of several such times, which is what a batch waiting for its slowest
 * stage takes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/estimate.h"

int sw_estimator_init(sw_estimator *es) {
    es->pts = calloc(es->n + 1, sizeof *es->pts);
    double *x = malloc(4 * (es->n + 1) * sizeof *x);
    if (!es->pts || !x) {
        free(x);
        return PP_ENOMEM;
    }
    double *yw = x + es->n + 1, *yb = yw + es->n + 1, *ys = yb + es->n + 1;
    size_t ok = 0;
    int hw_known = 1;
    for (size_t i = 0; i < es->n; i++)
        hw_known &= !es->e[i]->ok || es->e[i]->hw_ns >= 0;
    for (size_t i = 0; i < es->n; i++) {
        const lk_entry *e = es->e[i];
        if (!e->ok)
            continue;
        if (e->unstable[0] && !es->unstable)
            es->unstable = e->unstable;
        es->by_nodes = strcmp(e->model, "file") == 0;
        x[ok] = (double)(es->by_nodes ? e->nodes : e->bytes);
        yw[ok] = (double)e->wall_ns;
        yb[ok] = (double)(hw_known ? e->hw_ns : e->wall_ns);
        ys[ok] = e->wall_sd_ns;
        /* insert by bytes; a second size of the same bytes (another edge
         * count) is averaged into its point */
        size_t j = 0;
        while (j < es->npts && es->pts[j].x < x[ok])
            j++;
        if (j < es->npts && es->pts[j].x == x[ok]) {
            size_t same = 1;
            for (size_t k = 0; k < ok; k++)
                same += x[k] == x[ok];
            es->pts[j].wall += (yw[ok] - es->pts[j].wall) / (double)same;
            es->pts[j].busy += (yb[ok] - es->pts[j].busy) / (double)same;
            es->pts[j].sd += (ys[ok] - es->pts[j].sd) / (double)same;
        } else {
            memmove(&es->pts[j + 1], &es->pts[j], (es->npts - j) * sizeof *es->pts);
            es->pts[j] = (sw_point){x[ok], yw[ok], yb[ok], ys[ok]};
            es->npts++;
        }
        ok++;
    }
    pp_fit fw, fb;
    es->slope_wall = pp_fit_linear(x, yw, ok, &fw) == PP_OK ? fmax(0.0, fw.a) : 0.0;
    es->slope_busy = pp_fit_linear(x, yb, ok, &fb) == PP_OK ? fmax(0.0, fb.a) : 0.0;
    free(x);
    return PP_OK;
}

/* The estimate for (nodes, edges) of workload w on this device; 0 when the
 * table cannot tell (the size failed there, or fewer than two sizes).
 * Between measured sizes: linear between the two around it. Outside them
 * (extrapolated): below the smallest, the smallest's time, since no
 * prediction may undercut a measurement (a fitted line's negative
 * intercept would); above the largest, the largest's time plus the
 * least-squares slope (>= 0) times the extra bytes. */
int sw_estimate_at(const sw_estimator *es, const pp_workload *w, sw_estimate *out) {
    for (size_t i = 0; i < es->n; i++) {
        const lk_entry *e = es->e[i];
        if (e->nodes == w->nodes && e->edges == w->edges) {
            if (!e->ok)
                return 0;
            *out = (sw_estimate){.wall_ns = (double)e->wall_ns,
                              .busy_ns = (double)(e->hw_ns >= 0 ? e->hw_ns : e->wall_ns),
                              .sd_ns = e->wall_sd_ns};
            return 1;
        }
    }
    if (es->npts < 2)
        return 0;
    double x = (double)(es->by_nodes ? (uint64_t)w->nodes : sw_bytes(w));
    const sw_point *lo = &es->pts[0], *hi = &es->pts[es->npts - 1];
    *out = (sw_estimate){.interpolated = 1, .extrapolated = x < lo->x || x > hi->x};
    if (x <= lo->x) {
        out->wall_ns = lo->wall, out->busy_ns = lo->busy, out->sd_ns = lo->sd;
    } else if (x >= hi->x) {
        out->wall_ns = hi->wall + es->slope_wall * (x - hi->x);
        out->busy_ns = hi->busy + es->slope_busy * (x - hi->x);
        /* the spread grows with the time, in proportion */
        out->sd_ns = hi->wall > 0 ? hi->sd * out->wall_ns / hi->wall : hi->sd;
    } else {
        size_t j = 1;
        while (es->pts[j].x < x)
            j++;
        const sw_point *a = &es->pts[j - 1], *b = &es->pts[j];
        double t = (x - a->x) / (b->x - a->x);
        out->wall_ns = a->wall + t * (b->wall - a->wall);
        out->busy_ns = a->busy + t * (b->busy - a->busy);
        out->sd_ns = a->sd + t * (b->sd - a->sd);
    }
    return 1;
}


/* P(X <= x) for X = N(mean, sd); a step at mean for sd 0. */
static double normal_cdf(double x, double mean, double sd) {
    if (sd <= 0.0)
        return x >= mean ? 1.0 : 0.0;
    return 0.5 * erfc((mean - x) / (sd * M_SQRT2));
}

/* E[max] = lo + integral from lo to hi of P(max > x) dx, where below lo one
 * part (a fixed time, or a normal 8 sd above x) exceeds x almost surely and
 * above hi none does; Simpson's rule on 128 steps. */
double sw_expected_max(const double *mean, const double *sd, size_t n) {
    double lo = -INFINITY, hi = -INFINITY;
    int varies = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fmax(lo, mean[i] - 8.0 * sd[i]);
        hi = fmax(hi, mean[i] + 8.0 * sd[i]);
        varies |= sd[i] > 0.0;
    }
    if (n == 0)
        return 0.0;
    if (!varies || hi <= lo)
        return lo;
    enum { STEPS = 128 };
    double h = (hi - lo) / STEPS, area = 0.0;
    for (int k = 0; k <= STEPS; k++) {
        double x = lo + h * k, below = 1.0;
        /* a part 8 sd below lo is below every x integrated: its factor is 1
         * (most stages of a long pipeline), and erfc is the cost here */
        for (size_t i = 0; i < n; i++)
            if (mean[i] + 8.0 * sd[i] > lo)
                below *= normal_cdf(x, mean[i], sd[i]);
        area += (k == 0 || k == STEPS ? 1.0 : k % 2 ? 4.0 : 2.0) * (1.0 - below);
    }
    return lo + area * h / 3.0;
}
