/* summary.c — what a comparison takes from one report: the per-batch and
 * per-exec samples its tests resample, and the window figures it only
 * lists (docs/diff.md, "Figures"). Everything comes through the public
 * analysis API, so a summary means exactly what the report means. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "diff/diff_impl.h"

/* The ops compared per run: the first this many rows of the report's op
 * table (sorted by total), so the samples stay small on level-2 traces. */
#define DIFF_TOP_OPS 10

static const char *const kind_names[PP_DIFF_KINDS] = {
    "throughput", "cycle", "e2e", "stage", "exec", "penalty", "op", "measured", "busy", "bubbles",
};

const char *diff_kind_name(pp_diff_kind k) { return k < PP_DIFF_KINDS ? kind_names[k] : "?"; }

pp_diff_kind diff_kind_from_name(const char *name) {
    for (int k = 0; k < PP_DIFF_KINDS; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return (pp_diff_kind)k;
    return PP_DIFF_KINDS;
}

char *diff_strdup(const char *s, int *failed) {
    if (!s)
        return NULL;
    char *c = strdup(s);
    if (!c)
        *failed = 1;
    return c;
}

pp_diff_summary *diff_summary_new(const char *source) {
    pp_diff_summary *s = calloc(1, sizeof *s);
    int failed = 0;
    if (s)
        s->source = diff_strdup(source ? source : "", &failed);
    if (s && failed) {
        free(s);
        return NULL;
    }
    return s;
}

int diff_summary_add_sample(pp_diff_summary *s, pp_diff_kind kind, const char *stage,
                            const char *device, const char *op, double *v, size_t n) {
    if (s->nsamples == s->capsamples) {
        size_t cap = s->capsamples ? 2 * s->capsamples : 16;
        diff_sample *g = realloc(s->samples, cap * sizeof *g);
        if (!g) {
            free(v);
            return PP_ENOMEM;
        }
        s->samples = g, s->capsamples = cap;
    }
    int failed = 0;
    diff_sample x = {kind, diff_strdup(stage, &failed), diff_strdup(device, &failed),
                     diff_strdup(op, &failed), v, n};
    s->samples[s->nsamples++] = x; /* freed with the summary, even half made */
    return failed ? PP_ENOMEM : PP_OK;
}

int diff_summary_add_value(pp_diff_summary *s, pp_diff_kind kind, const char *device,
                           double value) {
    if (s->nvalues == s->capvalues) {
        size_t cap = s->capvalues ? 2 * s->capvalues : 16;
        diff_value *g = realloc(s->values, cap * sizeof *g);
        if (!g)
            return PP_ENOMEM;
        s->values = g, s->capvalues = cap;
    }
    int failed = 0;
    s->values[s->nvalues++] = (diff_value){kind, diff_strdup(device, &failed), value};
    return failed ? PP_ENOMEM : PP_OK;
}

int diff_summary_add_stage(pp_diff_summary *s, const char *name, uint64_t bottleneck) {
    diff_stage *g = realloc(s->stages, (s->nstages + 1) * sizeof *g);
    if (!g)
        return PP_ENOMEM;
    s->stages = g;
    int failed = 0;
    s->stages[s->nstages++] = (diff_stage){diff_strdup(name, &failed), bottleneck};
    return failed ? PP_ENOMEM : PP_OK;
}

void pp_diff_summary_free(pp_diff_summary *s) {
    if (!s)
        return;
    for (size_t i = 0; i < s->nsamples; i++) {
        free(s->samples[i].stage), free(s->samples[i].device), free(s->samples[i].op);
        free(s->samples[i].v);
    }
    for (size_t i = 0; i < s->nvalues; i++)
        free(s->values[i].device);
    for (size_t i = 0; i < s->nstages; i++)
        free(s->stages[i].name);
    free(s->samples), free(s->values), free(s->stages), free(s->source);
    free(s);
}

const char *pp_diff_summary_source(const pp_diff_summary *s) { return s->source; }

/* The per-batch samples: cycle and end-to-end latency, each stage's time. */
static int add_batch_samples(pp_diff_summary *s, const pp_report *r) {
    size_t nb = 0, nt = 0, nstages = 0;
    const pp_batch_stats *b = pp_report_batches(r, &nb);
    const pp_stage_time *t = pp_report_stage_times(r, &nt);
    const pp_stage_stats *st = pp_report_stages(r, &nstages);
    double *cycle = malloc((nb ? nb : 1) * sizeof *cycle);
    double *e2e = malloc((nb ? nb : 1) * sizeof *e2e);
    if (!cycle || !e2e || (nb && !b)) {
        free(cycle), free(e2e);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < nb; i++)
        cycle[i] = (double)b[i].cycle_ns, e2e[i] = (double)b[i].e2e_ns;
    int rc = diff_summary_add_sample(s, PP_DIFF_CYCLE, NULL, NULL, NULL, cycle, nb);
    if (rc == PP_OK)
        rc = diff_summary_add_sample(s, PP_DIFF_E2E, NULL, NULL, NULL, e2e, nb);
    else
        free(e2e);
    for (size_t k = 0; rc == PP_OK && k < nstages; k++) {
        size_t n = 0;
        for (size_t i = 0; i < nt; i++)
            n += t[i].stage == k;
        double *v = malloc((n ? n : 1) * sizeof *v);
        if (!v)
            return PP_ENOMEM;
        n = 0;
        for (size_t i = 0; i < nt; i++)
            if (t[i].stage == k)
                v[n++] = (double)t[i].time_ns;
        rc = diff_summary_add_sample(s, PP_DIFF_STAGE, st[k].name, NULL, NULL, v, n);
        if (rc == PP_OK)
            rc = diff_summary_add_stage(s, st[k].name, st[k].bottleneck_count);
    }
    return rc;
}

/* Per (stage, device): the wall of each exec; per device with hardware
 * times of its own: each exec's penalty (wall - hw). From the report's
 * per-exec parts, which need the model. */
static int add_exec_samples(pp_diff_summary *s, const pp_report *r) {
    size_t nparts = 0, ndec = 0, ndev = 0, nstages = 0;
    const pp_exec_parts *p = pp_report_exec_parts(r, &nparts);
    const pp_decomp_stats *dec = pp_report_decomposition(r, &ndec);
    const pp_device_stats *dev = pp_report_devices(r, &ndev);
    const pp_stage_stats *st = pp_report_stages(r, &nstages);
    if (!p)
        return nparts ? PP_ENOMEM : PP_OK;
    /* the parts come grouped as the decomposition lists its pairs */
    size_t at = 0;
    for (size_t g = 0; g < ndec; g++) {
        size_t n = (size_t)dec[g].execs;
        if (dec[g].stage >= nstages || at + n > nparts) {
            at += n;
            continue;
        }
        double *v = malloc((n ? n : 1) * sizeof *v);
        if (!v)
            return PP_ENOMEM;
        for (size_t i = 0; i < n; i++)
            v[i] = (double)p[at + i].parts.wall_ns;
        at += n;
        int rc = diff_summary_add_sample(s, PP_DIFF_EXEC, st[dec[g].stage].name,
                                         dev[dec[g].device].name, NULL, v, n);
        if (rc != PP_OK)
            return rc;
    }
    for (size_t d = 0; d < ndev; d++) {
        if (dev[d].hw_quality & (PP_HW_HOST | PP_HW_IS_WALL))
            continue; /* a penalty of 0 by construction says nothing */
        double *v = malloc((nparts ? nparts : 1) * sizeof *v);
        if (!v)
            return PP_ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < nparts; i++)
            if (p[i].device == d && p[i].parts.device_ns > 0)
                v[n++] = (double)(p[i].parts.wall_ns - p[i].parts.device_ns);
        if (n == 0) {
            free(v);
            continue;
        }
        int rc = diff_summary_add_sample(s, PP_DIFF_PENALTY, NULL, dev[d].name, NULL, v, n);
        if (rc != PP_OK)
            return rc;
    }
    return PP_OK;
}

/* The durations of the top ops (by total) inside W, by device and name. */
static int add_op_samples(pp_diff_summary *s, const pp_report *r, const pp_model *m) {
    size_t nops = 0, ntracks = 0, ndev = 0;
    const pp_op_stats *ops = pp_report_ops(r, &nops);
    const pp_track_stats *tr = pp_report_tracks(r, &ntracks);
    const pp_device_stats *dev = pp_report_devices(r, &ndev);
    const pp_window *w = pp_report_window(r);
    if (nops == 0)
        return PP_OK;
    size_t ntop = nops < DIFF_TOP_OPS ? nops : DIFF_TOP_OPS;
    pp_event_columns c;
    int rc = pp_model_columns(m, &c);
    if (rc != PP_OK)
        return rc;
    /* model track -> report device */
    size_t nmt = pp_model_track_count(m);
    uint32_t *dev_of = malloc((nmt ? nmt : 1) * sizeof *dev_of);
    if (!dev_of)
        return PP_ENOMEM;
    for (size_t i = 0; i < nmt; i++)
        dev_of[i] = UINT32_MAX;
    for (size_t i = 0; i < ntracks; i++)
        if (tr[i].track < nmt)
            dev_of[tr[i].track] = tr[i].device;
    for (size_t k = 0; rc == PP_OK && k < ntop; k++) {
        uint32_t name = pp_model_find_string(m, ops[k].name);
        double *v = malloc((ops[k].count ? ops[k].count : 1) * sizeof *v);
        if (!v) {
            rc = PP_ENOMEM;
            break;
        }
        size_t n = 0;
        for (size_t i = 0; i < c.count && n < ops[k].count; i++) {
            if (c.role[i] != PP_ROLE_OP || c.kind[i] != PP_EV_SPAN || c.name[i] != name ||
                c.track[i] >= nmt || dev_of[c.track[i]] != ops[k].device)
                continue;
            if (c.ts_ns[i] < w->start_ns || c.ts_ns[i] + c.dur_ns[i] > w->end_ns)
                continue;
            v[n++] = (double)c.dur_ns[i];
        }
        rc = diff_summary_add_sample(s, PP_DIFF_OP, NULL, dev[ops[k].device].name, ops[k].name,
                                     v, n);
    }
    free(dev_of);
    return rc;
}

static int add_window_values(pp_diff_summary *s, const pp_report *r) {
    size_t ndev = 0;
    const pp_device_stats *dev = pp_report_devices(r, &ndev);
    const pp_cycle_stats *cyc = pp_report_cycles(r);
    int rc = diff_summary_add_value(s, PP_DIFF_MEASURED, NULL, cyc->throughput_measured);
    for (size_t d = 0; rc == PP_OK && d < ndev; d++) {
        rc = diff_summary_add_value(s, PP_DIFF_BUSY, dev[d].name, dev[d].wall_util);
        if (rc == PP_OK)
            rc = diff_summary_add_value(s, PP_DIFF_BUBBLES, dev[d].name,
                                        (double)dev[d].bubbles.total / (double)cyc->batches);
    }
    return rc;
}

int pp_diff_summary_build(const pp_report *r, const pp_model *m, pp_diff_summary **out,
                          pp_error *err) {
    *out = NULL;
    const pp_cycle_stats *cyc = pp_report_cycles(r);
    if (cyc->batches == 0)
        return pp_set_error(err, PP_EINVAL, "%s: no batches in the window: nothing to compare",
                            pp_report_source(r));
    pp_diff_summary *s = diff_summary_new(pp_report_source(r));
    if (!s)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    s->cycles = cyc->batches;
    int rc = add_batch_samples(s, r);
    if (rc == PP_OK && m)
        rc = add_exec_samples(s, r);
    if (rc == PP_OK && m)
        rc = add_op_samples(s, r, m);
    if (rc == PP_OK)
        rc = add_window_values(s, r);
    if (rc != PP_OK) {
        pp_diff_summary_free(s);
        return pp_set_error(err, rc, "summarizing %s: out of memory", pp_report_source(r));
    }
    *out = s;
    return PP_OK;
}
