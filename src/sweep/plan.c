/* Plan search: which device (or pair of devices, data parallel, at which
 * split) should run each stage of a pipeline, ranked by the cycle latency
 * estimated from a lookup table (docs/sweep.md §plan).
 *
 * Estimate of one plan:
 *   time(stage on d)      = the table's mean wall at the stage's size, or
 *                           linear between the measured sizes around it
 *                           (by bytes), outside them clamped (estimate.c)
 *   time(stage on d1, d2) = partition + max(time on d1 of its rows,
 *                           time on d2 of its rows) + merge, partition and
 *                           merge being host copies of the batch's input and
 *                           output at the host copy rate
 *   busy(d)               = sum over the stages on d of its hardware time
 *                           (the wall where the device reports none): stages
 *                           sharing a device take turns on it
 *   cores                 = sum of busy over the devices sharing the host's
 *                           cores, plus the host copies, when the plan uses
 *                           any of them (the table's "shared")
 *   mean cycle            = max(max over stages of time, max over devices of
 *                           busy, cores);
 *   cycle latency         = the same with the expected largest stage time of
 *                           a batch in place of the largest mean (expect()),
 *                           and throughput = 1 / cycle latency;
 *   stages on devices sharing hardware are slowed by the co-run slowdowns.
 * Plans of equal cycle rank by the sum of their stage times (less work
 * first). A plan of the same mean cycle as a better one, held to it by the same
 * bottleneck run the same way, or differing from it only in stages that
 * are free there (each run the other plan's way, the better plan's cycle
 * stays), is not listed: it is folded into the better plan, which marks
 * the stages where they differ and says how many other ways each of its
 * stages has that keep its mean cycle. The cycle and the sum only grow as
 * stages are added, and the mean-time figures bound the expected ones from
 * below, so a depth-first search that drops every partial plan already
 * ranking after the k-th best finds the exact best k. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "device/workload.h"
#include "pipeline/pipeline_impl.h"
#include "sweep/estimate.h"

void pp_plan_options_init(pp_plan_options *o) {
    *o = (pp_plan_options){.top = 5, .splits = 9};
}

/* One way to run one stage, with what it adds to each device's busy time. */
typedef struct option {
    pp_plan_stage st;
    int dev[PP_PLAN_MAX_DP]; /* device indices */
    double busy[PP_PLAN_MAX_DP];
    double sd[PP_PLAN_MAX_DP];    /* spread of each device's wall (sw_estimate.sd_ns) */
    int64_t rows[PP_PLAN_MAX_DP]; /* the batch rows each device gets */
} option;

typedef struct search {
    const pp_lookup *l; /* its co-run slowdowns of devices sharing hardware */
    int (*best_choice)[PP_PIPELINE_MAX_STAGES]; /* the options of each kept plan */
    unsigned *best_varied; /* per kept plan: stages where plans folded into it differ */
    double *scratch; /* per device: cycle_for's sums */
    uint64_t evaluated, cut; /* pp_plan_search_info */
    int *on_cores;   /* per device: it shares the host's cores (the table's "shared",
                      * or a device that runs there: parallel) */
    int *parallel;   /* per device: it runs each stage on threads of its own, so its
                      * stages do not take turns on it: they share the cores */
    size_t ndevices;
    const char *const *devices;
    int nstages;
    option **opts; /* per stage, sorted by time */
    size_t *nopts;
    int top;
    pp_plan *best; /* sorted, nbest <= top */
    size_t nbest;
    int choice[PP_PIPELINE_MAX_STAGES];
    double *busy; /* per device, of the partial plan */
    const char *names[PP_PIPELINE_MAX_STAGES];
} search;

/* The devices the table has, in order of first appearance. */
static size_t table_devices(const pp_lookup *l, const char **out) {
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        size_t j = 0;
        while (j < n && strcmp(out[j], l->entries[i].device) != 0)
            j++;
        if (j == n)
            out[n++] = l->entries[i].device;
    }
    return n;
}

/* The entries of stage i of p on device `dev`; PP_EINVAL when the table
 * measured a stage of that name with another model or other dims. */
static int stage_entries(const pp_lookup *l, const char *name, const pp_workload *w,
                         const char *dev, const lk_entry **out, size_t *n, pp_error *err) {
    *n = 0;
    for (size_t i = 0; i < l->n; i++) {
        const lk_entry *e = &l->entries[i];
        if (strcmp(e->stage, name) != 0)
            continue;
        /* a model file is the pipeline's when its stage runs a model file
         * too: the file itself is the user's to keep the same */
        const char *runs = w->model_path ? "file" : pp_workload_kind_name(w->kind);
        if (strcmp(e->model, runs) != 0 || e->in_dim != w->in_dim ||
            e->out_dim != w->out_dim || e->layers != w->layers)
            return pp_set_error(err, PP_EINVAL,
                                "stage \"%s\": the table measured %s %lld->%lld x%d, the pipeline "
                                "runs %s %lld->%lld x%d; sweep the pipeline's stages",
                                name, e->model, (long long)e->in_dim, (long long)e->out_dim,
                                e->layers, runs, (long long)w->in_dim, (long long)w->out_dim,
                                w->layers);
        if (strcmp(e->device, dev) == 0)
            out[(*n)++] = e;
    }
    return PP_OK;
}

/* Every way to run one stage: each device alone, each pair at each split. */
static int stage_options(const pp_pipeline *p, int s, const sw_estimator *es, size_t nd,
                         const char *const *devices, const pp_plan_options *o, double copy_rate,
                         option **out, size_t *nout, pp_error *err) {
    pp_workload w;
    pp_pipeline_stage_workload(p, s, &w);
    size_t cap = nd + nd * (nd - 1) / 2 * (size_t)o->splits, n = 0;
    option *opt = calloc(cap ? cap : 1, sizeof *opt);
    if (!opt)
        return pp_set_error(err, PP_ENOMEM, "plan: out of memory");
    for (size_t d = 0; d < nd; d++) {
        sw_estimate e;
        if (!sw_estimate_at(&es[d], &w, &e))
            continue;
        option *op = &opt[n++];
        op->st.ndevices = 1;
        snprintf(op->st.devices[0], sizeof op->st.devices[0], "%s", devices[d]);
        op->st.split[0] = 1.0;
        op->st.time_ns = op->st.device_ns[0] = llround(e.wall_ns);
        op->st.interpolated = e.interpolated, op->st.extrapolated = e.extrapolated;
        op->dev[0] = (int)d, op->dev[1] = -1;
        op->busy[0] = op->st.busy_ns[0] = e.busy_ns;
        op->sd[0] = op->st.sd_ns[0] = e.sd_ns;
        if (es[d].unstable)
            snprintf(op->st.unstable, sizeof op->st.unstable, "%s: %s", devices[d], es[d].unstable);
        op->rows[0] = w.nodes;
    }
    double part = (double)pp_wl_input_bytes(&w) / copy_rate * 1e9;
    double merge = (double)pp_wl_output_bytes(&w) / copy_rate * 1e9;
    int requests = p->stages[s].spec.requests > 0 ? p->stages[s].spec.requests : 1;
    for (size_t a = 0; a < nd; a++) {
        for (size_t b = a + 1; b < nd; b++) {
            for (int k = 1; k <= o->splits; k++) {
                double r = (double)k / (o->splits + 1);
                /* the rows the stage gives each device (pipeline/stage.c) */
                int64_t rows_a = (int64_t)(r * (double)w.nodes + 0.5);
                pp_workload wa = w, wb = w;
                wa.nodes = rows_a, wb.nodes = w.nodes - rows_a;
                if (wa.nodes < requests || wb.nodes < requests)
                    continue;
                wa.edges = w.edges * wa.nodes / w.nodes, wb.edges = w.edges * wb.nodes / w.nodes;
                sw_estimate ea, eb;
                if (!sw_estimate_at(&es[a], &wa, &ea) || !sw_estimate_at(&es[b], &wb, &eb))
                    continue;
                option *op = &opt[n++];
                op->st.ndevices = 2;
                snprintf(op->st.devices[0], sizeof op->st.devices[0], "%s", devices[a]);
                snprintf(op->st.devices[1], sizeof op->st.devices[1], "%s", devices[b]);
                op->st.split[0] = r, op->st.split[1] = 1.0 - r;
                op->st.device_ns[0] = llround(ea.wall_ns);
                op->st.device_ns[1] = llround(eb.wall_ns);
                op->st.partition_ns = llround(part), op->st.merge_ns = llround(merge);
                op->st.time_ns = llround(part + fmax(ea.wall_ns, eb.wall_ns) + merge);
                op->st.interpolated = ea.interpolated || eb.interpolated;
                op->st.extrapolated = ea.extrapolated || eb.extrapolated;
                op->dev[0] = (int)a, op->dev[1] = (int)b;
                op->busy[0] = op->st.busy_ns[0] = ea.busy_ns;
                op->busy[1] = op->st.busy_ns[1] = eb.busy_ns;
                if (es[a].unstable || es[b].unstable)
                    snprintf(op->st.unstable, sizeof op->st.unstable, "%s: %s",
                             es[a].unstable ? devices[a] : devices[b],
                             es[a].unstable ? es[a].unstable : es[b].unstable);
                op->sd[0] = op->st.sd_ns[0] = ea.sd_ns;
                op->sd[1] = op->st.sd_ns[1] = eb.sd_ns;
                op->rows[0] = wa.nodes, op->rows[1] = wb.nodes;
            }
        }
    }
    /* insertion sort: stable, so equal times keep enumeration order (single
     * devices first) and the ranking never depends on qsort's choices */
    for (size_t i = 1; i < n; i++) {
        option x = opt[i];
        size_t j = i;
        while (j > 0 && opt[j - 1].st.time_ns > x.st.time_ns) {
            opt[j] = opt[j - 1];
            j--;
        }
        opt[j] = x;
    }
    *out = opt;
    *nout = n;
    return PP_OK;
}

/* A lower bound on the cycle of every plan that completes the partial plan
 * with `upto` stages chosen: its largest stage time, device busy time
 * (devices whose stages take turns) and host cores' time, each of which
 * only grows as stages are added. */
static double cycle_of(const search *S, int upto) {
    double worst = 0.0, cores = 0.0, copies = 0.0;
    for (int s = 0; s < upto; s++) {
        const option *op = &S->opts[s][S->choice[s]];
        worst = fmax(worst, (double)op->st.time_ns);
        copies += (double)(op->st.partition_ns + op->st.merge_ns);
    }
    for (size_t d = 0; d < S->ndevices; d++) {
        if (!S->parallel[d])
            worst = fmax(worst, S->busy[d]);
        cores += S->on_cores[d] ? S->busy[d] : 0.0;
    }
    return fmax(worst, cores > 0.0 ? cores + copies : 0.0);
}

/* The sum of the chosen stages' times: among plans of one cycle, the one
 * that does less work in all is ranked first. */
static int64_t work_of(const search *S, int upto) {
    int64_t total = 0;
    for (int s = 0; s < upto; s++)
        total += S->opts[s][S->choice[s]].st.time_ns;
    return total;
}

/* Whether (cycle, work) ranks strictly before plan p. */
static int before(int64_t cycle, int64_t work, const pp_plan *p) {
    return cycle < p->cycle_ns || (cycle == p->cycle_ns && work < p->work_ns);
}

/* evaluation.device when the host's shared cores attain the cycle */
#define CORES (-2)

/* A complete plan with the slowdowns of devices that share hardware. */
typedef struct evaluation {
    int64_t cycle, work; /* of mean times: the bounds the search prunes and folds by */
    int64_t expected_cycle, expected_work; /* with each part's spread (expect()) */
    double resources; /* the largest of the devices' busy and the host cores */
    int stage, device; /* what attains the cycle: a stage (upstream on ties), else a device */
    int uncalibrated;  /* two of its devices share hardware the table has no co-run for */
    double cores;      /* busy time alone on devices sharing the host's cores */
    double slowdown[PP_PIPELINE_MAX_STAGES][PP_PLAN_MAX_DP];
    int64_t time[PP_PIPELINE_MAX_STAGES]; /* stage times, slowed down */
    int64_t expected_time[PP_PIPELINE_MAX_STAGES]; /* and with their parts' spread */
} evaluation;

/* How much part k of stage s slows down in plan `choice`: 1 plus the sum
 * of the excess (slowdown - 1) of its co-run slowdowns (sweep --co-run)
 * beside each other part of the plan on a device sharing hardware with its
 * own, or on its own device where that runs stages at once (S->parallel):
 * each runs beside it at once and takes its own share of what they share,
 * as each thread more on a core lengthens the others' turns. A measured
 * slowdown below 1 counts as 1 (running beside another never speeds a
 * stage up; below 1 is noise). */
static double slowdown_of(const search *S, const int *choice, int s, int k, int *uncalibrated) {
    const option *op = &S->opts[s][choice[s]];
    const char *d = S->devices[op->dev[k]];
    double f = 1.0;
    for (int t = 0; t < S->nstages; t++) {
        const option *ot = &S->opts[t][choice[t]];
        for (int j = 0; j < ot->st.ndevices; j++) {
            const char *e = S->devices[ot->dev[j]];
            int same = ot->dev[j] == op->dev[k];
            if ((t == s && j == k) ||
                (same ? !S->parallel[op->dev[k]] : !lk_shared(S->l, d, e)))
                continue;
            double m = lk_slowdown(S->l, S->names[s], d, S->names[t], e, op->rows[k]);
            *uncalibrated |= m == 0.0;
            f += fmax(0.0, m - 1.0);
        }
    }
    return f;
}

/* Evaluates the complete plan `choice`; busy has room for every device. */
static void evaluate(const search *S, const int *choice, double *busy, evaluation *ev) {
    double worst = -1.0;
    ev->stage = ev->device = -1;
    ev->uncalibrated = 0;
    ev->work = 0;
    ev->cores = 0.0;
    memset(busy, 0, S->ndevices * sizeof *busy);
    for (int s = 0; s < S->nstages; s++) {
        const option *op = &S->opts[s][choice[s]];
        double longest = 0.0;
        int slowed = 0;
        for (int k = 0; k < op->st.ndevices; k++)
            ev->cores += S->on_cores[op->dev[k]] ? op->busy[k] : 0.0;
        for (int k = 0; k < op->st.ndevices; k++) {
            double f = slowdown_of(S, choice, s, k, &ev->uncalibrated);
            ev->slowdown[s][k] = f;
            slowed |= f > 1.0;
            longest = fmax(longest, (double)op->st.device_ns[k] * f);
            busy[op->dev[k]] += op->busy[k] * f;
        }
        double t = !slowed              ? (double)op->st.time_ns
                   : op->st.ndevices == 1 ? longest
                                        : (double)(op->st.partition_ns + op->st.merge_ns) + longest;
        ev->time[s] = llround(t);
        ev->work += ev->time[s];
        if ((double)ev->time[s] > worst)
            worst = (double)ev->time[s], ev->stage = s;
    }
    ev->resources = 0.0;
    for (size_t d = 0; d < S->ndevices; d++) {
        if (S->parallel[d])
            continue;
        ev->resources = fmax(ev->resources, busy[d]);
        if (busy[d] > worst)
            worst = busy[d], ev->device = (int)d, ev->stage = -1;
    }
    /* Devices sharing the host's cores take turns on them, and so do the
     * host copies of data-parallel stages: their summed time alone bounds
     * the cycle like one device's (alone: the slowdowns are what sharing
     * does to each stage's latency, not more work for the cores). */
    double cores = ev->cores;
    int used = cores > 0.0;
    for (int s = 0; used && s < S->nstages; s++) {
        const option *op = &S->opts[s][choice[s]];
        cores += (double)(op->st.partition_ns + op->st.merge_ns);
    }
    ev->resources = used ? fmax(ev->resources, cores) : ev->resources;
    if (used && cores > worst)
        worst = cores, ev->stage = -1, ev->device = CORES;
    ev->cycle = llround(worst);
}

/* The expected figures of an evaluated plan. A batch's cycle latency is
 * the largest of its stage times (docs/architecture.md §4), and a stage's
 * time the largest of its parts (a data-parallel stage: partition + device
 * + merge per device), so the mean cycle is the expected largest of every
 * part: above the largest mean when the parts vary from run to run (the
 * sweep's quartiles), taken as independent and normal. The devices' busy
 * time and the host cores bound it from below as they bound the cycle. */
static void expect(const search *S, const int *choice, evaluation *ev) {
    double mean[PP_PIPELINE_MAX_STAGES * PP_PLAN_MAX_DP], sd[PP_PIPELINE_MAX_STAGES * PP_PLAN_MAX_DP];
    size_t n = 0;
    ev->expected_work = 0;
    for (int s = 0; s < S->nstages; s++) {
        const option *op = &S->opts[s][choice[s]];
        double copies = op->st.ndevices > 1 ? (double)(op->st.partition_ns + op->st.merge_ns) : 0.0;
        for (int k = 0; k < op->st.ndevices; k++) {
            double f = ev->slowdown[s][k];
            mean[n + (size_t)k] = copies + (double)op->st.device_ns[k] * f;
            sd[n + (size_t)k] = op->sd[k] * f;
        }
        /* never below the mean estimate, which the integration can miss by
         * its rounding when nothing varies much */
        double t = fmax((double)ev->time[s], sw_expected_max(mean + n, sd + n, (size_t)op->st.ndevices));
        ev->expected_time[s] = llround(t);
        ev->expected_work += ev->expected_time[s];
        n += (size_t)op->st.ndevices;
    }
    double parts = sw_expected_max(mean, sd, n);
    ev->expected_cycle = llround(fmax((double)ev->cycle, fmax(parts, ev->resources)));
}

static int64_t cycle_for(const search *S, const int *choice, double *busy) {
    evaluation ev;
    evaluate(S, choice, busy, &ev);
    return ev.cycle;
}

/* Whether kept plan k keeps its cycle with stage s run as option i. */
static int stage_is_free(const search *S, size_t k, int s, int i) {
    int choice[PP_PIPELINE_MAX_STAGES];
    memcpy(choice, S->best_choice[k], sizeof choice);
    choice[s] = i;
    return cycle_for(S, choice, S->scratch) == S->best[k].mean_cycle_ns;
}

/* Whether the complete plan in S->choice and kept plan k are held to the
 * same cycle by the same thing: the bottleneck stage run the same way, or
 * the bottleneck device running the same stages the same way. */
static int same_binding(const search *S, size_t k, int stage, int device) {
    const pp_plan *pl = &S->best[k];
    if (pl->bottleneck_stage != stage)
        return 0;
    if (stage >= 0)
        return S->best_choice[k][stage] == S->choice[stage];
    if (strcmp(pl->bottleneck_device, device == CORES ? PP_PLAN_HOST_CORES : S->devices[device]) != 0)
        return 0;
    for (int s = 0; s < S->nstages; s++) {
        const option *mine = &S->opts[s][S->choice[s]];
        const option *theirs = &S->opts[s][S->best_choice[k][s]];
        int on = 0;
        for (int d = 0; d < PP_PLAN_MAX_DP; d++)
            on |= (d < mine->st.ndevices && (mine->dev[d] == device ||
                                             (device == CORES && S->on_cores[mine->dev[d]]))) ||
                  (d < theirs->st.ndevices && (theirs->dev[d] == device ||
                                               (device == CORES && S->on_cores[theirs->dev[d]])));
        if (on && S->choice[s] != S->best_choice[k][s])
            return 0;
    }
    return 1;
}

/* The kept plan that the complete plan in S->choice is a variant of: the
 * same mean cycle, and either the same binding or every stage where the two
 * differ free in the kept plan (run its way there, the kept plan's cycle
 * stays); nbest when none. *diff gets the stages where they differ. */
static size_t variant_of(const search *S, int64_t cycle, int stage, int device,
                         unsigned *diff) {
    for (size_t k = 0; k < S->nbest; k++) {
        if (S->best[k].mean_cycle_ns != cycle)
            continue;
        *diff = 0;
        for (int s = 0; s < S->nstages; s++)
            *diff |= (unsigned)(S->best_choice[k][s] != S->choice[s]) << s;
        if (same_binding(S, k, stage, device))
            return k;
        int s = 0;
        while (s < S->nstages && (!(*diff >> s & 1u) || stage_is_free(S, k, s, S->choice[s])))
            s++;
        if (s == S->nstages)
            return k;
    }
    return S->nbest;
}

static void keep(search *S) {
    evaluation ev;
    S->evaluated++;
    evaluate(S, S->choice, S->scratch, &ev);
    int stage = ev.stage, device = ev.device;
    /* the figures of mean times bound the expected ones from below */
    if (S->nbest == (size_t)S->top && !before(ev.cycle, ev.work, &S->best[S->nbest - 1]))
        return;
    expect(S, S->choice, &ev);
    int64_t ns = ev.expected_cycle, work = ev.expected_work;
    /* a variant of a kept plan is folded into it: it replaces it only when it
     * ranks before it, and the stages where they differ are marked */
    unsigned diff = 0, varied = 0;
    size_t at = variant_of(S, ev.cycle, stage, device, &diff);
    if (at < S->nbest) {
        S->best_varied[at] |= diff;
        if (!before(ns, work, &S->best[at]))
            return;
        varied = S->best_varied[at];
    }
    if (at == S->nbest)
        at = S->nbest < (size_t)S->top ? S->nbest++ : S->nbest - 1;
    while (at > 0 && before(ns, work, &S->best[at - 1])) {
        S->best[at] = S->best[at - 1];
        memcpy(S->best_choice[at], S->best_choice[at - 1], sizeof S->best_choice[at]);
        S->best_varied[at] = S->best_varied[at - 1];
        at--;
    }
    memcpy(S->best_choice[at], S->choice, sizeof S->best_choice[at]);
    S->best_varied[at] = varied;
    pp_plan *pl = &S->best[at];
    memset(pl, 0, sizeof *pl);
    pl->nstages = S->nstages;
    for (int s = 0; s < S->nstages; s++) {
        pp_plan_stage *st = &pl->stages[s];
        *st = S->opts[s][S->choice[s]].st;
        snprintf(st->stage, sizeof st->stage, "%s", S->names[s]);
        pl->extrapolated |= st->extrapolated;
        st->time_ns = ev.expected_time[s];
        for (int k = 0; k < st->ndevices; k++) {
            st->slowdown[k] = ev.slowdown[s][k];
            st->device_ns[k] = llround((double)st->device_ns[k] * ev.slowdown[s][k]);
        }
    }
    pl->uncalibrated_sharing = ev.uncalibrated;
    pl->cycle_ns = ns;
    pl->mean_cycle_ns = ev.cycle;
    pl->work_ns = work;
    pl->throughput = ns > 0 ? 1e9 / (double)ns : 0.0;
    pl->bottleneck_stage = stage;
    if (device != -1)
        snprintf(pl->bottleneck_device, sizeof pl->bottleneck_device, "%s",
                 device == CORES ? PP_PLAN_HOST_CORES : S->devices[device]);
}

static void descend(search *S, int s) {
    if (s == S->nstages) {
        keep(S);
        return;
    }
    for (size_t i = 0; i < S->nopts[s]; i++) {
        const option *op = &S->opts[s][i];
        S->choice[s] = (int)i;
        for (int k = 0; k < op->st.ndevices; k++)
            S->busy[op->dev[k]] += op->busy[k];
        double partial = cycle_of(S, s + 1);
        if (S->nbest < (size_t)S->top ||
            before(llround(partial), work_of(S, s + 1), &S->best[S->nbest - 1]))
            descend(S, s + 1);
        else
            S->cut++;
        for (int k = 0; k < op->st.ndevices; k++)
            S->busy[op->dev[k]] -= op->busy[k];
    }
}

/* For each stage of kept plan k, how many of its other options leave the
 * plan's cycle unchanged (pp_plan_stage.free_options). */
static void count_free(search *S, size_t k) {
    for (int s = 0; s < S->nstages; s++) {
        int same = 0;
        for (size_t i = 0; i < S->nopts[s]; i++)
            same += (int)i != S->best_choice[k][s] && stage_is_free(S, k, s, (int)i);
        S->best[k].stages[s].free_options = same;
        S->best[k].stages[s].collapsed = (S->best_varied[k] >> s) & 1u;
    }
}

/* Bytes per second of a plain memcpy on this machine, the best of a few
 * rounds over a buffer larger than the caches. */
static double measure_copy_rate(void) {
    size_t len = (size_t)32 << 20;
    char *a = malloc(len), *b = malloc(len);
    double best = 1e9; /* a floor if memory is short */
    if (a && b) {
        memset(a, 1, len);
        memset(b, 2, len);
        for (int i = 0; i < 5; i++) {
            int64_t t0 = pp_now();
            memcpy(b, a, len);
            int64_t t1 = pp_now();
            double rate = (double)len / ((double)(t1 - t0 > 0 ? t1 - t0 : 1) / 1e9);
            best = rate > best ? rate : best;
        }
    }
    free(a);
    free(b);
    return best;
}

static int build_options(const pp_lookup *l, const pp_pipeline *p, const pp_plan_options *o,
                         double rate, search *S, pp_error *err) {
    const char **devices = (const char **)S->devices;
    const lk_entry **buf = calloc(l->n, sizeof *buf);
    sw_estimator *es = calloc(S->ndevices, sizeof *es);
    int rc = buf && es ? PP_OK : pp_set_error(err, PP_ENOMEM, "plan: out of memory");
    for (int s = 0; rc == PP_OK && s < S->nstages; s++) {
        const pp_stage_spec *spec = &p->stages[s].spec;
        S->names[s] = spec->name;
        if (spec->ndevices == 0) {
            rc = pp_set_error(err, PP_EINVAL, "stage \"%s\" runs on the host; plans map device "
                                              "stages", spec->name);
            break;
        }
        pp_workload w;
        pp_pipeline_stage_workload(p, s, &w);
        size_t used = 0, total = 0;
        for (size_t d = 0; rc == PP_OK && d < S->ndevices; d++) {
            es[d] = (sw_estimator){.e = buf + used};
            rc = stage_entries(l, spec->name, &w, devices[d], buf + used, &es[d].n, err);
            used += es[d].n;
            total += es[d].n;
        }
        if (rc == PP_OK && total == 0)
            rc = pp_set_error(err, PP_EINVAL, "stage \"%s\" is not in the table; sweep it first",
                              spec->name);
        for (size_t d = 0; rc == PP_OK && d < S->ndevices; d++)
            if (sw_estimator_init(&es[d]) != PP_OK)
                rc = pp_set_error(err, PP_ENOMEM, "plan: out of memory");
        if (rc == PP_OK)
            rc = stage_options(p, s, es, S->ndevices, S->devices, o, rate, &S->opts[s],
                               &S->nopts[s], err);
        for (size_t d = 0; d < S->ndevices; d++) {
            free(es[d].pts);
            es[d].pts = NULL;
        }
        if (rc == PP_OK && S->nopts[s] == 0)
            rc = pp_set_error(err, PP_EINVAL,
                              "stage \"%s\": no device in the table can run it at %lld nodes "
                              "(failed there, or fewer than two sizes measured to interpolate)",
                              spec->name, (long long)w.nodes);
    }
    free(buf);
    free(es);
    return rc;
}

int pp_plan_search(const pp_lookup *l, const pp_pipeline *p, const pp_plan_options *o,
                   pp_plan *plans, size_t *nplans, double *copy_bytes_per_s, pp_error *err) {
    if (o->top < 1 || o->splits < 1 || o->splits > 99)
        return pp_set_error(err, PP_EINVAL, "plan: top %d, splits %d (expected >= 1 and 1..99)",
                            o->top, o->splits);
    double rate = o->copy_bytes_per_s > 0 ? o->copy_bytes_per_s : measure_copy_rate();
    search S = {.l = l, .nstages = p->nstages, .top = o->top, .best = plans};
    const char **devices = calloc(l->n, sizeof *devices);
    S.opts = calloc((size_t)p->nstages, sizeof *S.opts);
    S.nopts = calloc((size_t)p->nstages, sizeof *S.nopts);
    S.busy = calloc(l->n, sizeof *S.busy);
    S.best_choice = calloc((size_t)o->top, sizeof *S.best_choice);
    S.scratch = calloc(l->n, sizeof *S.scratch);
    S.on_cores = calloc(l->n, sizeof *S.on_cores);
    S.parallel = calloc(l->n, sizeof *S.parallel);
    S.best_varied = calloc((size_t)o->top, sizeof *S.best_varied);
    int rc = devices && S.opts && S.nopts && S.busy && S.best_choice && S.scratch &&
                     S.on_cores && S.parallel && S.best_varied
                 ? PP_OK
                 : pp_set_error(err, PP_ENOMEM, "plan: out of memory");
    if (rc == PP_OK) {
        S.ndevices = table_devices(l, devices);
        S.devices = devices;
        for (size_t d = 0; d < S.ndevices; d++) {
            S.parallel[d] = sw_spec_on_host_cores(devices[d]);
            S.on_cores[d] = lk_on_cores(l, devices[d]) || S.parallel[d];
        }
        rc = build_options(l, p, o, rate, &S, err);
    }
    if (rc == PP_OK)
        descend(&S, 0);
    for (size_t k = 0; rc == PP_OK && k < S.nbest; k++)
        count_free(&S, k);
    if (rc == PP_OK && o->info) {
        o->info->plans = 1.0;
        for (int s = 0; s < p->nstages; s++)
            o->info->plans *= (double)S.nopts[s];
        o->info->evaluated = S.evaluated;
        o->info->cut = S.cut;
    }
    for (int s = 0; S.opts && s < p->nstages; s++)
        free(S.opts[s]);
    free(S.opts);
    free(S.nopts);
    free(S.busy);
    free(S.best_choice);
    free(S.scratch);
    free(S.on_cores);
    free(S.parallel);
    free(S.best_varied);
    free(devices);
    if (rc != PP_OK)
        return rc;
    *nplans = S.nbest;
    if (copy_bytes_per_s)
        *copy_bytes_per_s = rate;
    return PP_OK;
}
