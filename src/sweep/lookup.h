/* lookup.h — a lookup table in memory: one entry per measured combination,
 * as the planner and the contention factor read it. */
#ifndef PP_SWEEP_LOOKUP_H
#define PP_SWEEP_LOOKUP_H

#include "sweep/sweep_impl.h"

typedef struct lk_entry {
    char device[SW_NAME_MAX];      /* the spec: "sim:NPU" */
    char device_name[SW_NAME_MAX]; /* its track name: "NPU"; "" if it never opened */
    char stage[SW_NAME_MAX];
    char model[16];
    int64_t nodes, edges, in_dim, out_dim, bytes;
    int layers;
    int ok;                /* measured; else the device could not run it */
    int simulated;
    int64_t wall_ns, hw_ns; /* means; hw -1 when the device reports none */
    /* the spread of wall from run to run: (p75 - p25) / 1.349, the standard
     * deviation of a normal distribution of those quartiles; 0 in tables of
     * sweeps from before the quartiles */
    double wall_sd_ns;
    /* its runs are unstable (docs/sweep.md, "Unstable cells"): why, e.g.
     * "CV 0.41 above 0.25"; "" when stable or not known */
    char unstable[64];
} lk_entry;

/* Two stages measured together on two devices sharing hardware
 * (sweep --co-run): how much each slowed down. */
typedef struct lk_corun {
    int64_t nodes;
    char device[2][SW_NAME_MAX], stage[2][SW_NAME_MAX];
    double slowdown[2];
} lk_corun;

struct pp_lookup {
    lk_entry *entries;
    size_t n;
    lk_corun *corun;
    size_t ncorun;
    char (*shared)[SW_NAME_MAX]; /* devices sharing hardware with another */
    int *group;                  /* shared[i]'s group */
    int *cores;                  /* shared[i]'s group shares the host's cores */
    size_t nshared;
};

/* The slowdown of stage s1 on d1 while stage s2 runs on d2, measured at
 * the size of nodes nearest `nodes`; 0 when not measured. */
double lk_slowdown(const pp_lookup *l, const char *s1, const char *d1, const char *s2,
                   const char *d2, int64_t nodes);
/* Whether the table says d1 and d2 share hardware. */
int lk_shared(const pp_lookup *l, const char *d1, const char *d2);
/* Whether the table says device d shares the host's cores with others. */
int lk_on_cores(const pp_lookup *l, const char *d);

#endif
