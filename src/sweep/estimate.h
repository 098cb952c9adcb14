/* estimate.h — the time of a stage on a device at a size the lookup table
 * may not have measured (docs/sweep.md, "Time of a stage on a device"). */
#ifndef PP_SWEEP_ESTIMATE_H
#define PP_SWEEP_ESTIMATE_H

#include "sweep/lookup.h"

/* How a device runs a stage: its measured sizes as points (bytes, wall,
 * busy, spread of wall) in order of bytes, equal byte counts averaged, and
 * the least-squares slopes that carry the last point beyond the largest
 * size. */
typedef struct sw_point {
    double x, wall, busy, sd;
} sw_point;

typedef struct sw_estimator {
    const lk_entry *const *e; /* the stage's entries on the device */
    size_t n;
    int by_nodes; /* model files: points by nodes (their bytes count inputs a pipeline
                   * stage does not describe) */
    sw_point *pts;
    size_t npts;
    double slope_wall, slope_busy; /* >= 0: time never falls as bytes grow */
    const char *unstable; /* why one of its ok entries is unstable, or NULL */
} sw_estimator;

typedef struct sw_estimate {
    double wall_ns, busy_ns;
    double sd_ns; /* spread of wall from run to run (lk_entry.wall_sd_ns) */
    int interpolated, extrapolated;
} sw_estimate;

/* Orders the ok entries of es->e[0 .. n) into points and fits the slopes;
 * PP_ENOMEM when it cannot. The caller frees es->pts. */
int sw_estimator_init(sw_estimator *es);
/* The estimate for (nodes, edges) of workload w on this device; 0 when the
 * table cannot tell, else 1 (estimate.c says how). */
int sw_estimate_at(const sw_estimator *es, const pp_workload *w, sw_estimate *out);

/* The expected largest of n independent normal times N(mean[i], sd[i]) (an
 * sd of 0 is a fixed time): what a stage or cycle that waits for the last
 * of several parts takes on average, more than the largest mean when the
 * parts vary from run to run. 0 for n == 0. */
double sw_expected_max(const double *mean, const double *sd, size_t n);

#endif
