/* predict.c — the replay check, predictions over many seeds, and the causal
 * profile (docs/whatif.md, "Replay check", "Predictions").
 *
 * Every scenario runs with the same seeds as the replay (common random
 * numbers): seed i draws the same rows for the same batches in both, so a
 * change's gain, predicted / replayed throughput - 1 seed by seed, is the
 * change's effect and not the difference of two draws. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif_impl.h"

const double pp_whatif_causal_factors[PP_WHATIF_CAUSAL_STEPS] = {1.1, 1.25, 1.5, 2.0};

void pp_whatif_options_init(pp_whatif_options *o) {
    memset(o, 0, sizeof *o);
    o->seed = PP_WHATIF_SEED;
    o->seeds = 0; /* as many as 20,000 simulated batches take (seeds_of) */
    o->threshold = PP_WHATIF_REPLAY_THRESHOLD;
}

/* The seeds a figure is simulated with: o->seeds, or by default enough
 * for 20,000 simulated batches (20 at least, 1000 at most): a short
 * trace's rare stalls are drawn often enough that their mean is steady. */
static unsigned seeds_of(const pp_whatif_costs *c, const pp_whatif_options *o) {
    if (o->seeds)
        return o->seeds;
    uint64_t b = o->batches ? o->batches : c->batches;
    uint64_t n = b ? (20000 + b - 1) / b : 20;
    return n < 20 ? 20 : n > 1000 ? 1000 : (unsigned)n;
}

static uint64_t seed_of(const pp_whatif_options *o, unsigned i) {
    return o->seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
}

static uint64_t batches_of(const pp_whatif_costs *c, const pp_whatif_options *o) {
    return o->batches ? o->batches : c->batches;
}

/* The harmonic mean of n rates over equal batch counts: the batches over
 * the mean time they took. A rate's plain mean over seeds overstates it
 * when a rare long stall (a few rows of a short trace) is drawn by some
 * seeds and not others: the time is what adds up. */
static double rate_mean(const double *v, size_t n) {
    double inv = 0;
    for (size_t i = 0; i < n; i++)
        inv += v[i] > 0 ? 1 / v[i] : 0;
    return inv > 0 ? (double)n / inv : 0;
}

/* mean and the 2.5% / 97.5% quantiles of v[0 .. n) (reorders v). */
static pp_whatif_estimate estimate(double *v, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    pp_whatif_estimate e = {sum / (double)n, 0, 0};
    e.lo = pp_quantile_interp(v, n, 0.025);
    e.hi = pp_quantile_interp(v, n, 0.975);
    return e;
}

/* The plan run once per seed: the result, and each seed's throughput in tp
 * (room for o->seeds). */
static int run_seeds(const pp_whatif_costs *c, const wi_plan *p, const pp_whatif_options *o,
                     pp_whatif_result *res, double *tp) {
    unsigned n = seeds_of(c, o);
    double *v = malloc(5 * (size_t)n * sizeof *v);
    if (!v)
        return PP_ENOMEM;
    memset(res, 0, sizeof *res);
    double *cm = v, *cp = v + n, *e50 = v + 2 * n, *e95 = v + 3 * n, *t = v + 4 * n;
    for (unsigned i = 0; i < n; i++) {
        pp_whatif_figures f;
        int rc = wi_simulate(c, p, seed_of(o, i), batches_of(c, o), &f);
        if (rc != PP_OK) {
            free(v);
            return rc;
        }
        t[i] = tp[i] = f.throughput_per_s;
        cm[i] = f.cycle_mean_ns, cp[i] = f.cycle_p95_ns;
        e50[i] = f.e2e_p50_ns, e95[i] = f.e2e_p95_ns;
        for (size_t d = 0; d < PP_WHATIF_MAX_DEVICES; d++)
            res->busy[d] += f.busy[d] / n;
        for (size_t s = 0; s < PP_WHATIF_MAX_STAGES; s++)
            res->bottleneck[s] += f.bottleneck[s] / n;
    }
    double tmean = rate_mean(t, n);
    res->throughput_per_s = estimate(t, n);
    res->throughput_per_s.mean = tmean;
    res->cycle_mean_ns = estimate(cm, n);
    res->cycle_p95_ns = estimate(cp, n);
    res->e2e_p50_ns = estimate(e50, n);
    res->e2e_p95_ns = estimate(e95, n);
    free(v);
    return PP_OK;
}

/* gain[i] = tp[i] / base[i] - 1 summarized: its interval over the seeds,
 * its mean the ratio of the two rates' means (rate_mean). */
static pp_whatif_estimate gain_of(const double *tp, const double *base, size_t n, double *tmp) {
    for (size_t i = 0; i < n; i++)
        tmp[i] = base[i] > 0 ? tp[i] / base[i] - 1 : 0;
    pp_whatif_estimate e = estimate(tmp, n);
    double b = rate_mean(base, n);
    e.mean = b > 0 ? rate_mean(tp, n) / b - 1 : 0;
    return e;
}

/* What the replay could not explain, in words. */
static void refusal_reason(const pp_whatif_costs *c, const pp_whatif_replay *rp, char *buf,
                           size_t len) {
    double measured = c->measured.throughput_per_s, replayed = rp->replayed.throughput_per_s.mean;
    if (!c->timed) {
        snprintf(buf, len, "%s", c->nnotes ? c->notes[0] : "per-batch start times unknown");
        return;
    }
    if (measured <= 0 || replayed <= 0) {
        snprintf(buf, len, "no measured throughput to compare with");
        return;
    }
    double per_measured = 1e9 / measured, per_replayed = 1e9 / replayed;
    double extra = per_measured - per_replayed;
    if (extra > 0)
        snprintf(buf, len,
                 "the pipeline took %.3f ms per batch more than its stages' server times, "
                 "hand-offs and queues explain (%.3f ms measured, %.3f ms replayed): time "
                 "outside every stage, or on threads and devices the trace does not label, is "
                 "not modeled",
                 extra / 1e6, per_measured / 1e6, per_replayed / 1e6);
    else
        snprintf(buf, len,
                 "the replay took %.3f ms per batch more than measured (%.3f ms measured, %.3f "
                 "ms replayed): the stages overlapped more than the model's servers and queue "
                 "depth %u%s allow",
                 -extra / 1e6, per_measured / 1e6, per_replayed / 1e6, c->queue_depth,
                 c->queue_depth_inferred ? " (inferred)" : "");
}

static int replay_run(const pp_whatif_costs *c, const pp_whatif_options *o,
                      pp_whatif_replay *rp, double *base, pp_error *err) {
    wi_plan p;
    int rc = wi_plan_make(c, NULL, 0, &p, err);
    if (rc == PP_OK)
        rc = run_seeds(c, &p, o, &rp->replayed, base);
    if (rc != PP_OK)
        return rc == PP_ENOMEM ? wi_error(err, rc, "whatif: out of memory") : rc;
    double m = c->measured.throughput_per_s, mc = c->measured.cycle_mean_ns;
    rp->error = m > 0 ? rp->replayed.throughput_per_s.mean / m - 1 : NAN;
    rp->cycle_error = mc > 0 ? rp->replayed.cycle_mean_ns.mean / mc - 1 : NAN;
    rp->reason[0] = '\0';
    if (!(m > 0)) { /* a plan's description: nothing measured to check against */
        rp->refused = 0;
        snprintf(rp->reason, sizeof rp->reason,
                 "no measurement to replay (a description from a lookup table)");
        return PP_OK;
    }
    double bound = o->threshold > 0 ? o->threshold : PP_WHATIF_REPLAY_THRESHOLD;
    rp->refused = !(fabs(rp->error) <= bound);
    if (rp->refused)
        refusal_reason(c, rp, rp->reason, sizeof rp->reason);
    return PP_OK;
}

int pp_whatif_predict(const pp_whatif_costs *c, const pp_whatif_change *const *changes,
                      const size_t *nchanges, size_t nscenarios, const pp_whatif_options *o,
                      pp_whatif_replay *replay, pp_whatif_scenario *out, pp_error *err) {
    pp_whatif_options defaults;
    if (!o) {
        pp_whatif_options_init(&defaults);
        o = &defaults;
    }
    unsigned n = seeds_of(c, o);
    double *base = malloc(3 * (size_t)n * sizeof *base);
    if (!base)
        return wi_error(err, PP_ENOMEM, "whatif: out of memory");
    double *tp = base + n, *tmp = tp + n;
    /* every scenario's changes are checked before anything is simulated */
    wi_plan *plans = malloc((nscenarios ? nscenarios : 1) * sizeof *plans);
    int rc = plans ? PP_OK : wi_error(err, PP_ENOMEM, "whatif: out of memory");
    for (size_t i = 0; rc == PP_OK && i < nscenarios; i++)
        rc = wi_plan_make(c, changes[i], nchanges[i], &plans[i], err);
    if (rc == PP_OK)
        rc = replay_run(c, o, replay, base, err);
    for (size_t i = 0; rc == PP_OK && !replay->refused && i < nscenarios; i++) {
        rc = run_seeds(c, &plans[i], o, &out[i].result, tp);
        if (rc == PP_OK)
            out[i].gain = gain_of(tp, base, n, tmp);
        else
            rc = wi_error(err, rc, "whatif: out of memory");
    }
    free(plans);
    free(base);
    return rc;
}

int pp_whatif_simulate(const pp_whatif_costs *c, const pp_whatif_change *changes,
                       size_t nchanges, uint64_t seed, uint64_t batches,
                       pp_whatif_figures *out, pp_error *err) {
    wi_plan p;
    int rc = wi_plan_make(c, changes, nchanges, &p, err);
    if (rc == PP_OK)
        rc = wi_simulate(c, &p, seed, batches ? batches : c->batches, out);
    if (rc == PP_ENOMEM)
        return wi_error(err, rc, "whatif: out of memory");
    if (rc == PP_EINVAL && err && !err->msg[0])
        return wi_error(err, rc, "whatif: nothing to simulate (no stage or no batch)");
    return rc;
}

int pp_whatif_causal(const pp_whatif_costs *c, const pp_whatif_options *o,
                     pp_whatif_causal_row *rows, size_t *n, pp_error *err) {
    pp_whatif_options defaults;
    if (!o) {
        pp_whatif_options_init(&defaults);
        o = &defaults;
    }
    *n = 0;
    unsigned ns = seeds_of(c, o);
    double *base = malloc(3 * (size_t)ns * sizeof *base);
    if (!base)
        return wi_error(err, PP_ENOMEM, "whatif: out of memory");
    double *tp = base + ns, *tmp = tp + ns;
    wi_plan p;
    pp_whatif_result res;
    int rc = wi_plan_make(c, NULL, 0, &p, err);
    if (rc == PP_OK)
        rc = run_seeds(c, &p, o, &res, base);
    size_t total = c->nstages + c->ndevices;
    for (size_t i = 0; rc == PP_OK && i < total; i++) {
        int is_device = i >= c->nstages;
        const char *name = is_device ? c->devices[i - c->nstages] : c->stages[i].name;
        pp_whatif_causal_row *row = &rows[*n];
        *row = (pp_whatif_causal_row){.is_device = is_device, .name = name};
        int used = !is_device;
        for (size_t s = 0; is_device && s < c->nstages; s++)
            for (size_t q = 0; q < c->stages[s].nparts; q++)
                used |= strcmp(c->stages[s].parts[q].device, name) == 0;
        if (!used) /* a device no stage's part runs on (an idle host thread) */
            continue;
        for (int k = 0; rc == PP_OK && k < PP_WHATIF_CAUSAL_STEPS; k++) {
            pp_whatif_change ch = {.kind = PP_WHATIF_SPEEDUP,
                                   .factor = pp_whatif_causal_factors[k]};
            snprintf(is_device ? ch.device : ch.stage, sizeof ch.stage, "%s", name);
            rc = wi_plan_make(c, &ch, 1, &p, err);
            if (rc == PP_OK)
                rc = run_seeds(c, &p, o, &res, tp);
            if (rc == PP_OK)
                row->gain[k] = gain_of(tp, base, ns, tmp);
        }
        (*n)++;
    }
    free(base);
    return rc == PP_ENOMEM ? wi_error(err, rc, "whatif: out of memory") : rc;
}
