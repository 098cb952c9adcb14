/* findings.c — the plain statements of a diff: the significant changes,
 * largest first, after the throughput and the bottleneck shift; and the
 * changes that stayed within noise, which are listed as such and never
 * as findings (docs/diff.md, "Findings"). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_impl.h"

/* Changes smaller than this are not worth a "within noise" line. */
#define NOISE_LINE_MIN 0.01

void diff_format_value(const pp_diff_figure *f, double v, char *buf, size_t cap) {
    if (isnan(v))
        snprintf(buf, cap, "-");
    else if (f->kind == PP_DIFF_THROUGHPUT || f->kind == PP_DIFF_MEASURED)
        snprintf(buf, cap, "%.1f/s", v);
    else if (f->kind == PP_DIFF_BUSY)
        snprintf(buf, cap, "%.1f%%", 100 * v);
    else if (fabs(v) >= 1e9)
        snprintf(buf, cap, "%.3f s", v / 1e9);
    else if (fabs(v) >= 1e6)
        snprintf(buf, cap, "%.3f ms", v / 1e6);
    else if (fabs(v) >= 1e3)
        snprintf(buf, cap, "%.1f us", v / 1e3);
    else
        snprintf(buf, cap, "%.0f ns", v);
}

void diff_format_change(const pp_diff_figure *f, char *buf, size_t cap) {
    if (isnan(f->rel))
        snprintf(buf, cap, f->only_in == 2 ? "new" : f->only_in == 1 ? "gone" : "-");
    else if (!f->tested || isnan(f->ci_lo))
        snprintf(buf, cap, "%+.1f%%", 100 * f->rel);
    else
        snprintf(buf, cap, "%+.1f%% (%+.1f..%+.1f%%)", 100 * f->rel, 100 * f->ci_lo,
                 100 * f->ci_hi);
}

static int append(char ***list, size_t *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int append(char ***list, size_t *n, const char *fmt, ...) {
    char line[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char **g = realloc(*list, (*n + 1) * sizeof *g);
    if (!g)
        return PP_ENOMEM;
    *list = g;
    if (!(g[*n] = strdup(line)))
        return PP_ENOMEM;
    (*n)++;
    return PP_OK;
}

/* One statement of a significant figure. */
static int state(pp_diff *d, const pp_diff_figure *f) {
    char b[64], n[64], ch[96];
    diff_format_value(f, f->base, b, sizeof b);
    diff_format_value(f, f->new_value, n, sizeof n);
    diff_format_change(f, ch, sizeof ch);
    if (f->kind == PP_DIFF_EXEC && f->stat == PP_DIFF_MEAN) {
        double ratio = f->rel >= 0 ? 1 + f->rel : 1 / (1 + f->rel);
        return append(&d->findings, &d->nfindings, "%s on %s %.2fx %s per exec (%s -> %s; %s)",
                      f->stage, f->device, ratio, f->rel >= 0 ? "slower" : "faster", b, n, ch);
    }
    return append(&d->findings, &d->nfindings, "%s %s: %s -> %s", f->label, ch, b, n);
}

/* Sample pairs give several figures (mean, p50, p95); one statement each:
 * the mean when it is significant, else the most changed significant one. */
static int is_spokesman(const pp_diff *d, size_t i) {
    const pp_diff_figure *f = &d->figures[i];
    for (size_t j = 0; j < d->nfigures; j++) {
        const pp_diff_figure *g = &d->figures[j];
        if (j == i || !g->significant || g->kind != f->kind || g->kind == PP_DIFF_THROUGHPUT)
            continue;
        if (!(g->stage == f->stage || (g->stage && f->stage && !strcmp(g->stage, f->stage))) ||
            !(g->device == f->device || (g->device && f->device && !strcmp(g->device, f->device))) ||
            !(g->op == f->op || (g->op && f->op && !strcmp(g->op, f->op))))
            continue;
        if (f->stat == PP_DIFF_MEAN)
            return 1;
        if (g->stat == PP_DIFF_MEAN || fabs(g->rel) > fabs(f->rel) ||
            (fabs(g->rel) == fabs(f->rel) && j < i))
            return 0;
    }
    return 1;
}

/* An exec figure of a stage that ran on one device in both runs says what
 * the stage's own figure says: its statement would repeat it. */
static int echoes_its_stage(const pp_diff *d, const pp_diff_figure *f) {
    if (f->kind != PP_DIFF_EXEC)
        return 0;
    size_t devices = 0;
    for (size_t j = 0; j < d->nfigures; j++) {
        const pp_diff_figure *g = &d->figures[j];
        devices += g->kind == PP_DIFF_EXEC && g->stat == PP_DIFF_MEAN && !strcmp(g->stage, f->stage);
    }
    return devices == 1;
}

static int cmp_by_change(const void *a, const void *b, void *ctx) {
    const pp_diff_figure *f = ctx;
    double x = fabs(f[*(const size_t *)a].rel), y = fabs(f[*(const size_t *)b].rel);
    return x < y ? 1 : x > y ? -1 : 0;
}

int diff_findings_build(pp_diff *d) {
    int rc = PP_OK;
    const pp_diff_figure *tp = pp_diff_find(d, "throughput");
    if (tp && tp->significant)
        rc = state(d, tp);
    const pp_diff_bottleneck *b = d->bottleneck;
    if (rc == PP_OK && b[0].stage && b[1].stage && strcmp(b[0].stage, b[1].stage) != 0)
        rc = append(&d->findings, &d->nfindings,
                    "bottleneck moved from %s (%llu of %llu cycles) to %s (%llu of %llu)",
                    b[0].stage, (unsigned long long)b[0].cycles, (unsigned long long)b[0].of,
                    b[1].stage, (unsigned long long)b[1].cycles, (unsigned long long)b[1].of);
    size_t *order = malloc((d->nfigures ? d->nfigures : 1) * sizeof *order), m = 0;
    if (!order)
        return PP_ENOMEM;
    for (size_t i = 0; i < d->nfigures; i++)
        if (d->figures[i].significant && d->figures[i].kind != PP_DIFF_THROUGHPUT &&
            is_spokesman(d, i) && !echoes_its_stage(d, &d->figures[i]))
            order[m++] = i;
    qsort_r(order, m, sizeof *order, cmp_by_change, d->figures);
    for (size_t k = 0; rc == PP_OK && k < m; k++)
        rc = state(d, &d->figures[order[k]]);
    free(order);
    /* stages and ops that only one run has: facts, not estimates */
    for (size_t i = 0; rc == PP_OK && i < d->nfigures; i++) {
        const pp_diff_figure *f = &d->figures[i];
        if (!f->only_in || f->stat != PP_DIFF_MEAN ||
            (f->kind != PP_DIFF_STAGE && f->kind != PP_DIFF_OP))
            continue;
        char v[64];
        diff_format_value(f, f->only_in == 2 ? f->new_value : f->base, v, sizeof v);
        const char *which = f->only_in == 2 ? "new: not in the base run" : "gone: only in the base run";
        if (f->kind == PP_DIFF_STAGE)
            rc = append(&d->findings, &d->nfindings, "stage %s, %s per batch, %s", f->stage, v, which);
        else
            rc = append(&d->findings, &d->nfindings, "%s: %s, %s per op, %s", f->device, f->op, v,
                        which);
    }
    for (size_t i = 0; rc == PP_OK && i < d->nfigures; i++) {
        const pp_diff_figure *f = &d->figures[i];
        if (!f->tested || f->significant || !(fabs(f->rel) >= NOISE_LINE_MIN))
            continue;
        char ch[96];
        diff_format_change(f, ch, sizeof ch);
        rc = append(&d->noise, &d->nnoise, "%s %s, p = %.2g", f->label, ch, f->p);
    }
    return rc;
}
