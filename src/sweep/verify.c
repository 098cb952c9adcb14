/* Running a plan: the pipeline with its stages mapped as the plan says, and
 * its mean cycle latency measured the way `pipeprof analyze` computes it
 * (docs/architecture.md §4), so predicted and measured figures mean the same thing. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/pipeline_impl.h"
#include "pipeprof/analyze.h"
#include "pipeprof/model.h"
#include "pipeprof/sweep.h"

/* pp_plan_verify runs at least this much of predicted cycles, so that one
 * preemption of a loaded machine (a few ms) cannot move a mean of short
 * cycles; and at most this many batches */
#define VERIFY_MIN_NS 250000000LL
#define VERIFY_MAX_BATCHES 100000

int pp_plan_apply(const pp_pipeline *p, const pp_plan *plan, pp_pipeline **out, pp_error *err) {
    if (plan->nstages != p->nstages)
        return pp_set_error(err, PP_EINVAL, "plan: %d stages for a pipeline of %d", plan->nstages,
                            p->nstages);
    pp_pipeline *q = NULL;
    int rc = pp_pipeline_create(&p->cfg, &q, err);
    for (int s = 0; rc == PP_OK && s < p->nstages; s++) {
        pp_stage_spec spec = p->stages[s].spec;
        const pp_plan_stage *ps = &plan->stages[s];
        spec.ndevices = ps->ndevices;
        for (int d = 0; d < PP_STAGE_MAX_DEVICES; d++) {
            spec.devices[d] = d < ps->ndevices ? ps->devices[d] : NULL;
            spec.split[d] = d < ps->ndevices ? ps->split[d] : 0.0;
        }
        rc = pp_pipeline_add_stage(q, &spec, err);
    }
    if (rc != PP_OK) {
        pp_pipeline_free(q);
        return rc;
    }
    *out = q;
    return PP_OK;
}

static int analyze(const pp_pipeline *p, pp_session *s, pp_plan_measured *out, pp_error *err) {
    pp_model *m = NULL;
    int rc = pp_model_from_session(s, &m);
    if (rc != PP_OK)
        return pp_set_error(err, rc, "plan: cannot read back the recording: %s", pp_strerror(rc));
    pp_analyze_options opt;
    pp_analyze_options_init(&opt);
    opt.exclude_region = p->cfg.warmup > 0 ? "warm up" : NULL;
    pp_report *r = NULL;
    rc = pp_report_build(m, &opt, &r, err);
    if (rc == PP_OK) {
        out->batches = pp_report_cycles(r)->batches;
        out->cycle_ns = pp_report_cycles(r)->cycle.mean;
        out->throughput_per_s = pp_report_cycles(r)->throughput_measured;
        size_t n = 0;
        const pp_stage_stats *st = pp_report_stages(r, &n);
        for (int i = 0; i < p->nstages; i++) {
            out->stage_ns[i] = -1;
            for (size_t k = 0; k < n; k++)
                if (strcmp(st[k].name, p->stages[i].spec.name) == 0)
                    out->stage_ns[i] = st[k].time.mean;
        }
    }
    pp_report_free(r);
    pp_model_free(m);
    return rc;
}

int pp_plan_measure(pp_pipeline *p, pp_plan_measured *out, pp_error *err) {
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    scfg.level = 1;
    scfg.process_name = p->cfg.name;
    pp_session *s = NULL;
    int rc = pp_session_open(&scfg, &s);
    if (rc == PP_OK)
        rc = pp_session_start(s);
    if (rc != PP_OK) {
        pp_session_close(s);
        return pp_set_error(err, rc, "plan: cannot start recording: %s", pp_strerror(rc));
    }
    pp_pipeline_result res;
    rc = pp_pipeline_run(p, s, NULL, &res, err);
    if (rc == PP_OK)
        rc = pp_session_stop(s, err);
    if (rc == PP_OK)
        rc = analyze(p, s, out, err);
    pp_session_close(s);
    return rc;
}

int pp_plan_verify(const pp_pipeline *p, const pp_plan *plan, pp_plan_measured *out,
                   pp_error *err) {
    pp_pipeline *q = NULL;
    int rc = pp_plan_apply(p, plan, &q, err);
    if (rc != PP_OK)
        return rc;
    if (plan->cycle_ns > 0 && (int64_t)q->cfg.batches * plan->cycle_ns < VERIFY_MIN_NS)
        q->cfg.batches = VERIFY_MIN_NS / plan->cycle_ns < VERIFY_MAX_BATCHES
                             ? (int)(VERIFY_MIN_NS / plan->cycle_ns) + 1
                             : VERIFY_MAX_BATCHES;
    rc = pp_plan_measure(q, out, err);
    pp_pipeline_free(q);
    return rc;
}
