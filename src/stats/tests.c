/* tests.c — the rank test, the sign test and Holm's correction.
 *
 * Mann-Whitney rather than a t-test: per-batch times are skewed and have
 * outliers (a page fault, a preempted thread), and a rank test is not moved
 * by one huge value. The sign test answers the data-parallel question "is
 * one part really the slower one" from the count of batches each part was
 * slowest in. Holm controls the family-wise error when a diff tests dozens
 * of figures at once, and is never less powerful than Bonferroni. */
#include <math.h>
#include <stdlib.h>

#include "pipeprof/common.h"
#include "stats/stats.h"

typedef struct tagged {
    double v;
    int from_y;
} tagged;

static int cmp_tagged(const void *a, const void *b) {
    double x = ((const tagged *)a)->v, y = ((const tagged *)b)->v;
    return (x > y) - (x < y);
}

int pp_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, pp_rank_test *out) {
    if (nx == 0 || ny == 0)
        return PP_EINVAL;
    size_t n = nx + ny;
    tagged *all = malloc(n * sizeof *all);
    if (!all)
        return PP_ENOMEM;
    for (size_t i = 0; i < nx; i++)
        all[i] = (tagged){x[i], 0};
    for (size_t i = 0; i < ny; i++)
        all[nx + i] = (tagged){y[i], 1};
    qsort(all, n, sizeof *all, cmp_tagged);
    /* Ranks with ties sharing their mean rank; ties also shrink the
     * variance by sum(t^3 - t) / (n (n - 1)). */
    double rank_sum_y = 0, tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && all[j + 1].v == all[i].v)
            j++;
        double mean_rank = (double)(i + j) / 2 + 1, t = (double)(j - i + 1);
        for (size_t k = i; k <= j; k++)
            if (all[k].from_y)
                rank_sum_y += mean_rank;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    free(all);
    double dx = (double)nx, dy = (double)ny, dn = (double)n;
    double u = rank_sum_y - dy * (dy + 1) / 2; /* pairs (x, y) with y > x, ties half */
    double mu = dx * dy / 2;
    double var = dx * dy / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
    out->u = u;
    out->superiority = u / (dx * dy);
    if (var <= 0) { /* every value equal: no evidence either way */
        out->z = 0, out->p = 1;
        return 0;
    }
    double d = fabs(u - mu) - 0.5;
    out->z = (d < 0 ? 0 : d) / sqrt(var) * (u < mu ? -1 : 1);
    out->p = erfc(fabs(out->z) / sqrt(2));
    return 0;
}

/* log C(n, k) through lgamma: exact enough for tail sums at any n. */
static double log_choose(uint64_t n, uint64_t k) {
    return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1);
}

double pp_sign_test(uint64_t k, uint64_t n) {
    if (n == 0)
        return 1;
    uint64_t low = k < n - k ? k : n - k; /* the rarer side */
    double tail = 0;
    for (uint64_t i = 0; i <= low; i++)
        tail += exp(log_choose(n, i) - (double)n * log(2));
    double p = 2 * tail;
    return p > 1 ? 1 : p;
}

typedef struct ranked_p {
    double p;
    size_t at;
} ranked_p;

static int cmp_p(const void *a, const void *b) {
    double x = ((const ranked_p *)a)->p, y = ((const ranked_p *)b)->p;
    return (x > y) - (x < y);
}

int pp_holm(const double *p, size_t n, double alpha, int *reject) {
    if (n == 0)
        return 0;
    ranked_p *order = malloc(n * sizeof *order);
    if (!order)
        return PP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        order[i] = (ranked_p){p[i], i}, reject[i] = 0;
    qsort(order, n, sizeof *order, cmp_p);
    for (size_t i = 0; i < n; i++) {
        if (!(order[i].p <= alpha / (double)(n - i)))
            break; /* step-down: every larger p-value is kept too */
        reject[order[i].at] = 1;
    }
    free(order);
    return 0;
}
