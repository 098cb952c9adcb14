/* plan_costs.c — a plan as the description of costs the what-if
 * simulation takes (pipeprof/whatif.h), so that a plan from a lookup table
 * and a trace are predicted by one engine (docs/whatif.md, docs/sweep.md). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/pipeline_impl.h"
#include "pipeprof/sweep.h"
#include "pipeprof/whatif.h"

#define ROWS 64 /* quantiles of each device's wall */

static char *dup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

/* The device index of spec `name` in c->devices, added when new; -1 on no
 * memory. */
static int device_of(pp_whatif_costs *c, const char *name) {
    for (size_t d = 0; d < c->ndevices; d++)
        if (strcmp(c->devices[d], name) == 0)
            return (int)d;
    if (c->ndevices == PP_WHATIF_MAX_DEVICES || !(c->devices[c->ndevices] = dup(name)))
        return -1;
    c->units[c->ndevices] = 1;
    return (int)c->ndevices++;
}

/* Part k of stage s: ROWS quantiles of its device's wall, in an order of
 * their own (i * a + b mod ROWS, a odd: a permutation), so that the parts
 * and stages of one drawn batch are not all slow together. */
static int part_rows(pp_whatif_part *pt, double mean, double sd, double busy, size_t s,
                     size_t k) {
    pp_whatif_change q;
    memset(&q, 0, sizeof q);
    if (pp_whatif_change_move_samples(&q, mean, sd, 0) != PP_OK)
        return PP_ENOMEM;
    pt->wall_ns = malloc(ROWS * sizeof *pt->wall_ns);
    pt->work_ns = malloc(ROWS * sizeof *pt->work_ns);
    pt->fixed_ns = calloc(ROWS, sizeof *pt->fixed_ns);
    int ok = pt->wall_ns && pt->work_ns && pt->fixed_ns && q.nsamples == ROWS;
    size_t a = 2 * (s * PP_PLAN_MAX_DP + k) + 1, b = 17 * (s + k);
    /* of each wall, the hardware's share is work (the device is held), the
     * rest fixed (launch, copies: beside other stages' work) */
    double hw_share = mean > 0 && busy > 0 && busy < mean ? busy / mean : 1;
    for (size_t i = 0; ok && i < ROWS; i++) {
        int64_t wall = q.samples[(i * a + b) % ROWS];
        pt->wall_ns[i] = wall;
        pt->work_ns[i] = (int64_t)((double)wall * hw_share);
        pt->fixed_ns[i] = wall - pt->work_ns[i];
    }
    pp_whatif_change_clear(&q);
    return ok ? PP_OK : PP_ENOMEM;
}

static int stage_of(pp_whatif_costs *c, const pp_plan_stage *ps, size_t s, int requests) {
    pp_whatif_stage *st = &c->stages[s];
    st->name = dup(ps->stage);
    st->nrows = ROWS;
    st->servers = 1;
    st->data_parallel = ps->ndevices > 1;
    st->partition_ns = malloc(ROWS * sizeof(int64_t));
    st->merge_ns = malloc(ROWS * sizeof(int64_t));
    st->overhead_ns = calloc(ROWS, sizeof(int64_t));
    st->handoff_ns = calloc(ROWS, sizeof(int64_t));
    st->nhandoff = ROWS;
    st->parts = calloc((size_t)ps->ndevices, sizeof *st->parts);
    if (!st->name || !st->partition_ns || !st->merge_ns || !st->overhead_ns || !st->handoff_ns ||
        !st->parts)
        return PP_ENOMEM;
    for (size_t i = 0; i < ROWS; i++) {
        st->partition_ns[i] = st->data_parallel ? ps->partition_ns : 0;
        st->merge_ns[i] = st->data_parallel ? ps->merge_ns : 0;
    }
    for (int k = 0; k < ps->ndevices; k++) {
        pp_whatif_part *pt = &st->parts[st->nparts++];
        int d = device_of(c, ps->devices[k]);
        if (d < 0 || !(pt->device = dup(c->devices[d])))
            return PP_ENOMEM;
        pt->share = ps->split[k];
        pt->requests = (uint32_t)requests;
        /* the plan's device time has its co-run slowdown: so has its hardware part */
        double slow = ps->slowdown[k] > 0 ? ps->slowdown[k] : 1;
        int rc = part_rows(pt, (double)ps->device_ns[k], ps->sd_ns[k], ps->busy_ns[k] * slow, s,
                           (size_t)k);
        if (rc != PP_OK)
            return rc;
    }
    return PP_OK;
}

int pp_plan_costs(const pp_plan *plan, const pp_pipeline *p, pp_whatif_costs **out,
                  pp_error *err) {
    *out = NULL;
    if (plan->nstages < 1 || plan->nstages > PP_WHATIF_MAX_STAGES)
        return pp_set_error(err, PP_EINVAL, "plan: %d stages to model", plan->nstages);
    pp_whatif_costs *c = calloc(1, sizeof *c);
    int rc = c ? PP_OK : PP_ENOMEM;
    if (rc == PP_OK) {
        c->stages = calloc((size_t)plan->nstages, sizeof *c->stages);
        c->devices = calloc(PP_WHATIF_MAX_DEVICES, sizeof *c->devices);
        c->units = calloc(PP_WHATIF_MAX_DEVICES, sizeof *c->units);
        rc = c->stages && c->devices && c->units ? PP_OK : PP_ENOMEM;
    }
    if (rc == PP_OK) {
        c->queue_depth = p ? (uint32_t)p->cfg.queue_depth : 2;
        c->timed = 1;
        c->exclusive = 1;
        c->batches = ROWS * 4;
    }
    for (int s = 0; rc == PP_OK && s < plan->nstages; s++) {
        int requests = p && s < p->nstages && p->stages[s].spec.requests > 0
                           ? p->stages[s].spec.requests : 1;
        c->nstages++;
        rc = stage_of(c, &plan->stages[s], (size_t)s, requests);
    }
    if (rc == PP_OK)
        rc = pp_whatif_costs_complete(c);
    if (rc != PP_OK) {
        pp_whatif_costs_free(c);
        return pp_set_error(err, rc, "plan: out of memory");
    }
    *out = c;
    return PP_OK;
}
