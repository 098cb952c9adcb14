/* findings.c — ranked plain statements with numbers.
 *
 * Order: data loss (always first: every figure after it undercounts), the
 * bottleneck stage and what dominates it, the most idle device and its
 * bubbles, data-parallel imbalance with the split that would balance it, and
 * execs left out of the hardware figures. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

static int add(pp_report *r, char *text) {
    if (!text)
        return PP_ENOMEM;
    char **g = realloc(r->findings, (r->nfindings + 1) * sizeof *g);
    if (!g) {
        free(text);
        return PP_ENOMEM;
    }
    r->findings = g;
    g[r->nfindings++] = text;
    return PP_OK;
}

static int data_loss(pp_report *r) {
    const pp_model_meta *mm = &r->meta;
    if (mm->dropped_records == 0 && mm->truncated_bytes == 0)
        return PP_OK;
    return add(r, an_strdupf("Data loss: %llu records were dropped while recording and %llu "
                             "bytes of the input were truncated; every figure below "
                             "undercounts.",
                             (unsigned long long)mm->dropped_records,
                             (unsigned long long)mm->truncated_bytes));
}

/* What the bottleneck stage's time goes to: hardware compute, transfer,
 * concurrency penalty (wall beyond hw), or starvation (bubbles on the devices
 * it runs on, waiting for upstream work). */
static const char *dominant(const pp_report *r, uint32_t s, double *pct) {
    const pp_stage_stats *st = &r->stages[s];
    int64_t starve = 0;
    for (uint32_t d = 0; d < r->ndevices; d++) {
        int runs = 0;
        for (size_t i = 0; i < r->nexecs && !runs; i++)
            runs = r->execs[i].inside && r->execs[i].stage == s && r->execs[i].device == d;
        if (runs)
            starve += r->devices[d].bubbles.total;
    }
    int64_t parts[4] = {st->hw_ns - st->xfer_ns, st->xfer_ns, st->penalty.total, starve};
    static const char *names[4] = {"hardware compute", "data transfer",
                                   "concurrency penalty (wall time beyond hardware time)",
                                   "starvation (bubbles waiting for upstream work)"};
    int64_t sum = 0;
    size_t best = 0;
    for (size_t i = 0; i < 4; i++) {
        sum += parts[i] > 0 ? parts[i] : 0;
        if (parts[i] > parts[best])
            best = i;
    }
    *pct = 100.0 * an_ratio(parts[best], sum);
    return sum > 0 ? names[best] : NULL;
}

static int bottleneck(pp_report *r) {
    if (r->nbatches == 0)
        return PP_OK;
    uint32_t b = 0;
    for (uint32_t s = 1; s < r->nstages; s++)
        if (r->stages[s].bottleneck_count > r->stages[b].bottleneck_count)
            b = s;
    const pp_stage_stats *st = &r->stages[b];
    char mean[32], p95[32];
    an_format_ns(st->time.mean, mean, sizeof mean);
    an_format_ns(st->time.p95, p95, sizeof p95);
    double pct = 0;
    const char *what = st->exec_less ? NULL : dominant(r, b, &pct);
    char tail[160] = "; it has no execs (host-only work timed by its stage spans)";
    if (what)
        snprintf(tail, sizeof tail, "; %.0f%% of its time is %s", pct, what);
    else if (!st->exec_less)
        snprintf(tail, sizeof tail, "; its execs report no hardware time");
    return add(r, an_strdupf("Bottleneck: stage \"%s\" limits %llu of %llu cycles (stage time "
                             "mean %s, p95 %s)%s.",
                             st->name, (unsigned long long)st->bottleneck_count,
                             (unsigned long long)r->nbatches, mean, p95, tail));
}

static int most_idle(pp_report *r) {
    uint32_t d = 0;
    for (uint32_t i = 1; i < r->ndevices; i++)
        if (r->devices[i].wall_util < r->devices[d].wall_util)
            d = i;
    const pp_device_stats *dev = &r->devices[d];
    char name[160], mean[32], max[32], total[32];
    an_device_label(r, d, name, sizeof name);
    an_format_ns(dev->bubbles.mean, mean, sizeof mean);
    an_format_ns(dev->bubbles.max, max, sizeof max);
    an_format_ns(dev->bubbles.total, total, sizeof total);
    return add(r, an_strdupf("Most idle device: %s is busy %.1f%% of the window; %llu %s "
                             "(mean %s, max %s, total %s) between its execs.",
                             name, 100.0 * dev->wall_util,
                             (unsigned long long)dev->bubbles.count,
                             dev->bubbles.count == 1 ? "bubble" : "bubbles", mean, max, total));
}

static int imbalance(pp_report *r, const pp_dp_stats *dp) {
    char split[512] = "", now[512] = "";
    size_t u = 0, v = 0;
    for (size_t i = 0; i < dp->ndevices; i++) {
        char name[160];
        an_device_label(r, dp->devices[i].device, name, sizeof name);
        int a = snprintf(split + u, sizeof split - u, "%s%s %.2f", i ? ", " : "", name,
                         dp->devices[i].suggested_share);
        int b = snprintf(now + v, sizeof now - v, "%s%.2f", i ? "/" : "", dp->devices[i].share);
        u += a > 0 && (size_t)a < sizeof split - u ? (size_t)a : 0;
        v += b > 0 && (size_t)b < sizeof now - v ? (size_t)b : 0;
    }
    return add(r, an_strdupf("Imbalance: data-parallel stage \"%s\": the slowest device takes "
                             "%.2fx the mean device wall; measured rates suggest the split %s "
                             "(now %s).",
                             r->stages[dp->stage].name, dp->imbalance, split, now));
}

int an_findings_compute(pp_report *r, pp_error *err) {
    int rc = data_loss(r);
    if (rc == PP_OK)
        rc = bottleneck(r);
    if (rc == PP_OK)
        rc = most_idle(r);
    /* below 5% the split is within the noise of one run */
    for (size_t i = 0; rc == PP_OK && i < r->ndp; i++)
        if (r->dp[i].imbalance > 1.05)
            rc = imbalance(r, &r->dp[i]);
    uint64_t unknown = 0, execs = 0;
    for (size_t d = 0; d < r->ndevices; d++)
        unknown += r->devices[d].hw_unknown, execs += r->devices[d].execs;
    if (rc == PP_OK && unknown > 0)
        rc = add(r, an_strdupf("%llu of %llu execs report no hardware time and are left out of "
                               "the hardware figures.",
                               (unsigned long long)unknown, (unsigned long long)execs));
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
