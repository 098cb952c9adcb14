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
} lk_entry;

struct pp_lookup {
    lk_entry *entries;
    size_t n;
};

#endif
