/* compare.c — two summaries matched sample by sample and figure by figure,
 * each change with its bootstrap interval and its significance after
 * Holm's correction (docs/diff.md, "Significance"). The statistics are
 * stats/stats.h's; this file decides which samples pair up and which
 * statistic of them each figure is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "diff/diff_impl.h"
#include "stats/stats.h"

void pp_diff_options_init(pp_diff_options *o) {
    memset(o, 0, sizeof *o);
    o->min_change = 0.01;
}

const char *diff_keep(pp_diff *d, const char *s) {
    if (!s)
        return NULL;
    if (d->nstrings == d->capstrings) {
        size_t cap = d->capstrings ? 2 * d->capstrings : 64;
        char **g = realloc(d->strings, cap * sizeof *g);
        if (!g)
            return NULL;
        d->strings = g, d->capstrings = cap;
    }
    char *c = strdup(s);
    if (c)
        d->strings[d->nstrings++] = c;
    return c;
}

/* The new run's name of a base device. */
static const char *mapped(const pp_diff_options *o, const char *device) {
    for (size_t i = 0; device && i < o->nmap; i++)
        if (strcmp(o->map[i].base, device) == 0)
            return o->map[i].new_name;
    return device;
}

static int same(const char *a, const char *b) {
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The sample of `b` matching base sample `a` (device through the map). */
static const diff_sample *find_pair(const pp_diff_summary *b, const diff_sample *a,
                                    const pp_diff_options *o) {
    const char *dev = mapped(o, a->device);
    for (size_t i = 0; i < b->nsamples; i++) {
        const diff_sample *x = &b->samples[i];
        if (x->kind == a->kind && same(x->stage, a->stage) && same(x->device, dev) &&
            same(x->op, a->op))
            return x;
    }
    return NULL;
}

/* Whether new sample `x` has a partner in the base (the map read backwards). */
static int has_base_pair(const pp_diff_summary *base, const diff_sample *x,
                         const pp_diff_options *o) {
    for (size_t i = 0; i < base->nsamples; i++) {
        const diff_sample *a = &base->samples[i];
        if (a->kind == x->kind && same(a->stage, x->stage) && same(mapped(o, a->device), x->device) &&
            same(a->op, x->op))
            return 1;
    }
    return 0;
}

static int common_stage(const pp_diff_summary *a, const pp_diff_summary *b) {
    for (size_t i = 0; i < a->nstages; i++)
        for (size_t j = 0; j < b->nstages; j++)
            if (strcmp(a->stages[i].name, b->stages[j].name) == 0)
                return 1;
    return 0;
}

static void stage_list(const pp_diff_summary *s, char *buf, size_t cap) {
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < s->nstages && at + 1 < cap; i++) {
        int w = snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", s->stages[i].name);
        at += w > 0 ? (size_t)w : 0;
    }
    if (s->nstages == 0)
        snprintf(buf, cap, "none");
}

/* ---- statistics of two samples ------------------------------------------ */

/* q(new) / q(base) - 1 for the quantile *(double *)ctx. */
static double quantile_change(double *x, size_t nx, double *y, size_t ny, void *ctx) {
    double qx = pp_stat_quantile(x, nx, ctx), qy = pp_stat_quantile(y, ny, ctx);
    return qx == 0 ? NAN : qy / qx - 1;
}

static double sample_stat(const diff_sample *s, pp_diff_stat stat) {
    if (s->n == 0)
        return NAN;
    double *tmp = malloc(s->n * sizeof *tmp);
    if (!tmp)
        return NAN;
    memcpy(tmp, s->v, s->n * sizeof *tmp);
    double q = stat == PP_DIFF_P50 ? 0.5 : 0.95;
    double v = stat == PP_DIFF_MEAN ? pp_stat_mean(tmp, s->n, NULL) : pp_stat_quantile(tmp, s->n, &q);
    free(tmp);
    return v;
}

static const char *const stat_names[] = {"mean", "p50", "p95", ""};

/* ---- building figures ---------------------------------------------------- */

typedef struct figure_spec {
    pp_diff_kind kind;
    const char *stage, *device, *op;
    pp_diff_stat stat;
} figure_spec;

static void make_key(const figure_spec *f, char *key, size_t cap, char *label, size_t lcap) {
    const char *st = stat_names[f->stat];
    const char *dot = f->stat == PP_DIFF_VALUE ? "" : ".";
    switch (f->kind) {
    case PP_DIFF_THROUGHPUT:
        snprintf(key, cap, "throughput");
        snprintf(label, lcap, "throughput (1 / mean cycle)");
        break;
    case PP_DIFF_CYCLE:
    case PP_DIFF_E2E:
        snprintf(key, cap, "%s%s%s", diff_kind_name(f->kind), dot, st);
        snprintf(label, lcap, "%s %s", f->kind == PP_DIFF_CYCLE ? "cycle" : "end-to-end", st);
        break;
    case PP_DIFF_STAGE:
        snprintf(key, cap, "stage:%s%s%s", f->stage, dot, st);
        snprintf(label, lcap, "%s time %s", f->stage, st);
        break;
    case PP_DIFF_EXEC:
        snprintf(key, cap, "exec:%s@%s%s%s", f->stage, f->device, dot, st);
        snprintf(label, lcap, "%s on %s, wall per exec %s", f->stage, f->device, st);
        break;
    case PP_DIFF_PENALTY:
        snprintf(key, cap, "penalty:%s%s%s", f->device, dot, st);
        snprintf(label, lcap, "%s penalty per exec %s", f->device, st);
        break;
    case PP_DIFF_OP:
        snprintf(key, cap, "op:%s/%s%s%s", f->device, f->op, dot, st);
        snprintf(label, lcap, "%s: %s per op %s", f->device, f->op, st);
        break;
    case PP_DIFF_MEASURED:
        snprintf(key, cap, "measured");
        snprintf(label, lcap, "measured throughput (batches / |W|)");
        break;
    case PP_DIFF_BUSY:
        snprintf(key, cap, "busy:%s", f->device);
        snprintf(label, lcap, "%s busy (of W)", f->device);
        break;
    default:
        snprintf(key, cap, "bubbles:%s", f->device);
        snprintf(label, lcap, "%s bubbles per batch", f->device);
        break;
    }
}

static pp_diff_figure *new_figure(pp_diff *d, const figure_spec *f, double base, double nv) {
    pp_diff_figure *g = realloc(d->figures, (d->nfigures + 1) * sizeof *g);
    if (!g)
        return NULL;
    d->figures = g;
    char key[512], label[512];
    make_key(f, key, sizeof key, label, sizeof label);
    pp_diff_figure *x = &g[d->nfigures];
    memset(x, 0, sizeof *x);
    x->key = diff_keep(d, key), x->label = diff_keep(d, label);
    x->stage = diff_keep(d, f->stage), x->device = diff_keep(d, f->device);
    x->op = diff_keep(d, f->op);
    if (!x->key || !x->label || (f->stage && !x->stage) || (f->device && !x->device) ||
        (f->op && !x->op))
        return NULL;
    x->kind = f->kind, x->stat = f->stat;
    x->higher_is_better = f->kind == PP_DIFF_THROUGHPUT || f->kind == PP_DIFF_MEASURED ||
                          f->kind == PP_DIFF_BUSY;
    x->base = base, x->new_value = nv;
    x->abs = nv - base;
    x->rel = base == 0 ? NAN : nv / base - 1;
    x->ci_lo = x->ci_hi = NAN;
    x->p = NAN;
    d->nfigures++;
    return x;
}

/* The statistics each kind of sample is compared by. */
static size_t stats_of(pp_diff_kind k, pp_diff_stat out[3]) {
    switch (k) {
    case PP_DIFF_CYCLE:
    case PP_DIFF_E2E:
    case PP_DIFF_STAGE:
        out[0] = PP_DIFF_MEAN, out[1] = PP_DIFF_P50, out[2] = PP_DIFF_P95;
        return 3;
    case PP_DIFF_EXEC:
        out[0] = PP_DIFF_MEAN, out[1] = PP_DIFF_P95;
        return 2;
    default:
        out[0] = PP_DIFF_MEAN;
        return 1;
    }
}

/* The interval of the relative change of `f` between samples a and b. */
static int bootstrap_figure(pp_diff_figure *f, const diff_sample *a, const diff_sample *b,
                            const pp_boot_opts *bo) {
    pp_interval iv;
    double q = f->stat == PP_DIFF_P50 ? 0.5 : 0.95;
    int rc;
    if (f->kind == PP_DIFF_THROUGHPUT) /* mean(base) / mean(new) - 1 */
        rc = pp_bootstrap2(b->v, b->n, a->v, a->n, pp_stat_mean_change, NULL, bo, &iv);
    else if (f->stat == PP_DIFF_MEAN)
        rc = pp_bootstrap2(a->v, a->n, b->v, b->n, pp_stat_mean_change, NULL, bo, &iv);
    else
        rc = pp_bootstrap2(a->v, a->n, b->v, b->n, quantile_change, &q, bo, &iv);
    if (rc != PP_OK)
        return rc;
    f->ci_lo = iv.lo, f->ci_hi = iv.hi;
    return PP_OK;
}

typedef struct pair {
    const diff_sample *a, *b;  /* base, new; one may be NULL */
    double p;
    int tested, reject;
} pair;

static int figures_of_pair(pp_diff *d, const pair *pr, const pp_boot_opts *bo,
                           double min_change) {
    const diff_sample *s = pr->a ? pr->a : pr->b;
    pp_diff_stat stats[3];
    size_t ns = stats_of(s->kind, stats);
    int throughput = s->kind == PP_DIFF_CYCLE;
    for (size_t k = 0; k < ns + (size_t)throughput; k++) {
        figure_spec f = {s->kind, s->stage, s->device, s->op, k < ns ? stats[k] : PP_DIFF_VALUE};
        if (k == ns)
            f.kind = PP_DIFF_THROUGHPUT, f.stat = PP_DIFF_VALUE;
        double va = pr->a ? sample_stat(pr->a, f.stat == PP_DIFF_VALUE ? PP_DIFF_MEAN : f.stat) : NAN;
        double vb = pr->b ? sample_stat(pr->b, f.stat == PP_DIFF_VALUE ? PP_DIFF_MEAN : f.stat) : NAN;
        if (f.kind == PP_DIFF_THROUGHPUT)
            va = va > 0 ? 1e9 / va : NAN, vb = vb > 0 ? 1e9 / vb : NAN;
        pp_diff_figure *x = new_figure(d, &f, pr->a ? va : 0, pr->b ? vb : 0);
        if (!x)
            return PP_ENOMEM;
        x->only_in = pr->a && pr->b ? 0 : pr->a ? 1 : 2;
        if (x->only_in) /* no change to speak of: "new" or "gone" */
            x->abs = x->rel = NAN;
        x->n_base = pr->a ? pr->a->n : 0, x->n_new = pr->b ? pr->b->n : 0;
        if (!pr->tested)
            continue;
        x->tested = 1, x->p = pr->p;
        int rc = bootstrap_figure(x, pr->a, pr->b, bo);
        if (rc != PP_OK)
            return rc;
        x->significant = pr->reject && (x->ci_lo > 0 || x->ci_hi < 0) &&
                         fabs(x->rel) >= min_change;
    }
    return PP_OK;
}

/* Keeps a copy of a per-batch pair (cycle, e2e, a stage) for the HTML page. */
static int keep_dist(pp_diff *d, const pair *pr) {
    const diff_sample *s = pr->a;
    if (!pr->a || !pr->b || (s->kind != PP_DIFF_CYCLE && s->kind != PP_DIFF_E2E && s->kind != PP_DIFF_STAGE))
        return PP_OK;
    diff_dist *g = realloc(d->dists, (d->ndists + 1) * sizeof *g);
    if (!g)
        return PP_ENOMEM;
    d->dists = g;
    diff_dist *x = &g[d->ndists];
    char title[300];
    snprintf(title, sizeof title, "%s", s->kind == PP_DIFF_CYCLE ? "cycle latency"
                                        : s->kind == PP_DIFF_E2E ? "end-to-end latency" : s->stage);
    if (s->kind == PP_DIFF_STAGE)
        snprintf(title, sizeof title, "%s time", s->stage);
    x->title = diff_keep(d, title);
    const diff_sample *side[2] = {pr->a, pr->b};
    for (int k = 0; k < 2; k++) {
        x->n[k] = side[k]->n;
        x->v[k] = malloc((x->n[k] ? x->n[k] : 1) * sizeof *x->v[k]);
        if (x->v[k])
            memcpy(x->v[k], side[k]->v, x->n[k] * sizeof *x->v[k]);
    }
    d->ndists++; /* counted first: pp_diff_free frees what was made */
    return x->title && x->v[0] && x->v[1] ? PP_OK : PP_ENOMEM;
}

/* Every sample pair (and unpaired sample), throughput's cycle pair first. */
static int collect_pairs(const pp_diff_summary *base, const pp_diff_summary *nw,
                         const pp_diff_options *o, pair **out, size_t *n) {
    pair *p = calloc(base->nsamples + nw->nsamples + 1, sizeof *p);
    if (!p)
        return PP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < base->nsamples; i++)
        p[k].a = &base->samples[i], p[k].b = find_pair(nw, p[k].a, o), k++;
    for (size_t i = 0; i < nw->nsamples; i++)
        if (!has_base_pair(base, &nw->samples[i], o))
            p[k++].b = &nw->samples[i];
    *out = p, *n = k;
    return PP_OK;
}

/* Mann-Whitney per pair, then Holm over every tested pair. */
static int test_pairs(pair *p, size_t n, double alpha, size_t *ntests) {
    double *pv = malloc((n ? n : 1) * sizeof *pv);
    int *rej = malloc((n ? n : 1) * sizeof *rej);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    int rc = pv && rej && idx ? PP_OK : PP_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; rc == PP_OK && i < n; i++) {
        if (!p[i].a || !p[i].b || p[i].a->n < 2 || p[i].b->n < 2)
            continue;
        pp_rank_test t;
        rc = pp_mann_whitney(p[i].a->v, p[i].a->n, p[i].b->v, p[i].b->n, &t);
        p[i].tested = 1, p[i].p = t.p;
        pv[m] = t.p, idx[m++] = i;
    }
    if (rc == PP_OK && m)
        rc = pp_holm(pv, m, alpha, rej);
    for (size_t j = 0; rc == PP_OK && j < m; j++)
        p[idx[j]].reject = rej[j];
    *ntests = m;
    free(pv), free(rej), free(idx);
    return rc;
}

static int window_figures(pp_diff *d, const pp_diff_summary *base, const pp_diff_summary *nw,
                          const pp_diff_options *o) {
    for (size_t i = 0; i < base->nvalues; i++) {
        const diff_value *a = &base->values[i];
        const char *dev = mapped(o, a->device);
        for (size_t j = 0; j < nw->nvalues; j++) {
            const diff_value *b = &nw->values[j];
            if (b->kind != a->kind || !same(b->device, dev))
                continue;
            figure_spec f = {a->kind, NULL, a->device, NULL, PP_DIFF_VALUE};
            pp_diff_figure *x = new_figure(d, &f, a->value, b->value);
            if (!x)
                return PP_ENOMEM;
            x->n_base = x->n_new = 1;
            break;
        }
    }
    return PP_OK;
}

static void bottleneck_of(const pp_diff_summary *s, pp_diff_bottleneck *out) {
    out->stage = NULL, out->cycles = 0, out->of = s->cycles;
    for (size_t i = 0; i < s->nstages; i++)
        if (s->stages[i].bottleneck > out->cycles)
            out->stage = s->stages[i].name, out->cycles = s->stages[i].bottleneck;
}

int pp_diff_compare(const pp_diff_summary *base, const pp_diff_summary *nw,
                    const pp_diff_options *opt, pp_diff **out, pp_error *err) {
    *out = NULL;
    pp_diff_options o0;
    pp_diff_options_init(&o0);
    const pp_diff_options *o = opt ? opt : &o0;
    if (!common_stage(base, nw)) {
        char a[200], b[200];
        stage_list(base, a, sizeof a), stage_list(nw, b, sizeof b);
        return pp_set_error(err, PP_EINVAL,
                            "%s and %s have no stage in common (base: %s; new: %s): not runs of "
                            "one pipeline, or labeled differently (give both the same "
                            "--batch-pattern / --stage-pattern)",
                            base->source, nw->source, a, b);
    }
    pp_diff *d = calloc(1, sizeof *d);
    if (!d)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    d->alpha = o->alpha > 0 ? o->alpha : 0.05;
    d->min_change = o->min_change;
    pp_boot_opts bo;
    pp_boot_opts_init(&bo);
    if (o->reps)
        bo.reps = o->reps;
    if (o->seed)
        bo.seed = o->seed;
    pair *p = NULL;
    size_t np = 0;
    int rc = collect_pairs(base, nw, o, &p, &np);
    if (rc == PP_OK)
        rc = test_pairs(p, np, d->alpha, &d->ntests);
    /* throughput first: the cycle pair makes it after its own figures, so
     * it is moved to the front below */
    for (size_t i = 0; rc == PP_OK && i < np; i++) {
        rc = figures_of_pair(d, &p[i], &bo, o->min_change);
        if (rc == PP_OK)
            rc = keep_dist(d, &p[i]);
    }
    if (rc == PP_OK)
        rc = window_figures(d, base, nw, o);
    free(p);
    for (size_t i = 0; rc == PP_OK && i < d->nfigures; i++) {
        if (d->figures[i].kind != PP_DIFF_THROUGHPUT)
            continue;
        pp_diff_figure t = d->figures[i];
        memmove(d->figures + 1, d->figures, i * sizeof t);
        d->figures[0] = t;
        break;
    }
    bottleneck_of(base, &d->bottleneck[0]);
    bottleneck_of(nw, &d->bottleneck[1]);
    for (int k = 0; k < 2; k++) /* the summaries may go before the diff */
        if (d->bottleneck[k].stage && !(d->bottleneck[k].stage = diff_keep(d, d->bottleneck[k].stage)))
            rc = PP_ENOMEM;
    d->source[0] = diff_keep(d, base->source), d->source[1] = diff_keep(d, nw->source);
    if (rc == PP_OK && (!d->source[0] || !d->source[1]))
        rc = PP_ENOMEM;
    if (rc == PP_OK)
        rc = diff_findings_build(d);
    if (rc != PP_OK) {
        pp_diff_free(d);
        return pp_set_error(err, rc, "comparing %s and %s: %s", base->source, nw->source,
                            pp_strerror(rc));
    }
    *out = d;
    return PP_OK;
}

void pp_diff_free(pp_diff *d) {
    if (!d)
        return;
    for (size_t i = 0; i < d->nstrings; i++)
        free(d->strings[i]);
    for (size_t i = 0; i < d->nfindings; i++)
        free(d->findings[i]);
    for (size_t i = 0; i < d->nnoise; i++)
        free(d->noise[i]);
    for (size_t i = 0; i < d->ndists; i++)
        free(d->dists[i].v[0]), free(d->dists[i].v[1]);
    free(d->dists);
    free(d->strings), free(d->findings), free(d->noise), free(d->figures);
    free(d);
}

const pp_diff_figure *pp_diff_figures(const pp_diff *d, size_t *n) {
    *n = d->nfigures;
    return d->figures;
}

const pp_diff_figure *pp_diff_find(const pp_diff *d, const char *key) {
    for (size_t i = 0; i < d->nfigures; i++)
        if (strcmp(d->figures[i].key, key) == 0)
            return &d->figures[i];
    return NULL;
}

const char *const *pp_diff_findings(const pp_diff *d, size_t *n) {
    *n = d->nfindings;
    return (const char *const *)d->findings;
}

void pp_diff_bottlenecks(const pp_diff *d, pp_diff_bottleneck *base, pp_diff_bottleneck *nw) {
    if (base)
        *base = d->bottleneck[0];
    if (nw)
        *nw = d->bottleneck[1];
}
