/* whatif_impl.h — what the files of the whatif layer share: the changes
 * applied to a description of costs (a plan the engine runs), the engine,
 * and small helpers. The layer reads the public analysis API and the
 * statistics layer only (docs/architecture.md §2). */
#ifndef PP_WHATIF_IMPL_H
#define PP_WHATIF_IMPL_H

#include "pipeprof/whatif.h"
#include "stats/stats.h"

/* What the changes make of each stage: the engine makes each part's wall
 * fixed x fixed_scale + work x work_scale + wait x wait_scale (a speed-up
 * divides fixed and work, a new share scales work by new / old, requests
 * by the slots' parallelism; other stages' work on a shared device scales
 * the wait), the partition and merge by stage_scale; a moved stage draws
 * its one part's wall from move_samples. servers and queue_depth are the
 * simulated counts. */
typedef struct wi_stage_plan {
    double fixed_scale[PP_WHATIF_MAX_PARTS], work_scale[PP_WHATIF_MAX_PARTS];
    double wait_scale[PP_WHATIF_MAX_PARTS];
    double stage_scale;
    const int64_t *move_samples;
    size_t nmove;
    int move_device;           /* index into costs->devices, or -1 (not in the model) */
    uint32_t servers;
} wi_stage_plan;

typedef struct wi_plan {
    wi_stage_plan stages[PP_WHATIF_MAX_STAGES];
    uint32_t queue_depth;
} wi_plan;

/* The plan of `changes` over `c` (plan.c); PP_EINVAL naming an unknown
 * stage or device, or a bad split. */
int wi_plan_make(const pp_whatif_costs *c, const pp_whatif_change *changes, size_t n,
                 wi_plan *out, pp_error *err);

/* One simulation (engine.c): `batches` batches through plan p of c, drawn
 * with the generator seeded by `seed`; figures into *out. */
int wi_simulate(const pp_whatif_costs *c, const wi_plan *p, uint64_t seed, uint64_t batches,
                pp_whatif_figures *out);

/* The index of device `name` in c->devices, or -1. */
int wi_device_index(const pp_whatif_costs *c, const char *name);
/* The index of stage `name`, or -1. */
int wi_stage_index(const pp_whatif_costs *c, const char *name);

/* Fills err (when given) with the message and returns code: the layer's
 * pp_set_error (core's is below the public API it may use). */
int wi_error(pp_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* malloc'd copy of a printf result; NULL on no memory. */
char *wi_strdupf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
