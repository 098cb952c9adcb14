/* findings.c — ranked plain statements with numbers.
 *
 * Order: data loss (always first: every figure after it may undercount), the
 * bottleneck stage and what dominates it, the most idle device and when it
 * idles, data-parallel imbalance with the split that would balance it, and
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

int an_finding_add(pp_report *r, char *text) {
    return add(r, text);
}

/* Appends ", <part>" (or the first part) to buf. */
static void join(char *buf, size_t len, const char *part) {
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", used ? ", " : "", part);
}

static int data_loss(pp_report *r) {
    const pp_model_meta *mm = &r->meta;
    char what[400] = "", part[160];
    if (mm->dropped_records) {
        snprintf(part, sizeof part, "%llu records were dropped while recording",
                 (unsigned long long)mm->dropped_records);
        join(what, sizeof what, part);
    }
    if (mm->truncated_bytes) {
        snprintf(part, sizeof part, "%llu bytes of the input were truncated",
                 (unsigned long long)mm->truncated_bytes);
        join(what, sizeof what, part);
    }
    if (mm->unmatched_ends) {
        snprintf(part, sizeof part, "%llu begin/end pairs of the input did not match",
                 (unsigned long long)mm->unmatched_ends);
        join(what, sizeof what, part);
    }
    if (!what[0])
        return PP_OK;
    return add(r, an_strdupf("Data loss: %s; every figure below may undercount.", what));
}

/* The bubble of device d that ends at `t`, if any: the device's bubbles lie
 * together in r->gaps, in time order, from gaps[lo] to gaps[hi]. */
static const an_gap *gap_ending_at(const pp_report *r, size_t lo, size_t hi, int64_t t) {
    size_t a = lo, b = hi;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (r->gaps[mid].end < t)
            a = mid + 1;
        else
            b = mid;
    }
    return a < hi && r->gaps[a].end == t ? &r->gaps[a] : NULL;
}

/* Starvation of stage s: the bubbles its execs end, i.e. the time their
 * device sat idle right before the stage's work arrived. */
static int64_t starvation(const pp_report *r, uint32_t s) {
    size_t *first = calloc(r->ndevices + 1, sizeof *first);
    if (!first)
        return 0;
    for (size_t i = 0; i < r->ngaps; i++)
        first[r->gaps[i].device + 1]++;
    for (size_t d = 0; d < r->ndevices; d++)
        first[d + 1] += first[d];
    int64_t total = 0;
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (!x->inside || x->stage != s)
            continue;
        const an_gap *g = gap_ending_at(r, first[x->device], first[x->device + 1], x->start);
        total += g ? g->end - g->start : 0;
    }
    free(first);
    return total;
}

/* What the bottleneck stage's time goes to: hardware compute, transfer,
 * concurrency penalty (wall beyond hw), or starvation (its devices idle
 * right before its execs, waiting for upstream work). */
static const char *dominant(const pp_report *r, uint32_t s, double *pct) {
    const pp_stage_stats *st = &r->stages[s];
    int64_t parts[4] = {st->hw_ns - st->xfer_ns, st->xfer_ns, st->penalty.total,
                        starvation(r, s)};
    static const char *names[4] = {"hardware compute", "data transfer",
                                   "concurrency penalty (wall time beyond hardware time)",
                                   "starvation (its devices idle before its execs, waiting "
                                   "for upstream work)"};
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

/* The longest bubble of device d (the first one on ties), or NULL. */
static const an_gap *longest_gap(const pp_report *r, uint32_t d) {
    const an_gap *best = NULL;
    for (size_t i = 0; i < r->ngaps; i++)
        if (r->gaps[i].device == d &&
            (!best || r->gaps[i].end - r->gaps[i].start > best->end - best->start))
            best = &r->gaps[i];
    return best;
}

/* The device with the lowest wall utilization, and when its idle time falls:
 * in bubbles between execs (the longest, and where it lies in W), before
 * its first exec or after its last. */
static int most_idle(pp_report *r) {
    uint32_t d = 0;
    for (uint32_t i = 1; i < r->ndevices; i++)
        if (r->devices[i].wall_util < r->devices[d].wall_util)
            d = i;
    const pp_device_stats *dev = &r->devices[d];
    const pp_gap_stats *g = &dev->bubbles;
    char name[160], idle[32], total[32], mean[32], lead[32], trail[32], when[160] = "";
    an_device_label(r, d, name, sizeof name);
    an_format_ns(dev->idle_ns, idle, sizeof idle);
    an_format_ns(g->total, total, sizeof total);
    an_format_ns(g->mean, mean, sizeof mean);
    an_format_ns(g->leading_ns, lead, sizeof lead);
    an_format_ns(g->trailing_ns, trail, sizeof trail);
    const an_gap *longest = longest_gap(r, d);
    if (longest) {
        char len[32], at[32];
        an_format_ns(longest->end - longest->start, len, sizeof len);
        an_format_ns(longest->start - r->window.start_ns, at, sizeof at);
        snprintf(when, sizeof when, ", the longest %s at +%s into the window", len, at);
    }
    return add(r, an_strdupf("Most idle device: %s is busy %.1f%% of the window and idle %s: "
                             "%s in %llu %s between its execs (mean %s%s), %s before its "
                             "first exec and %s after its last.",
                             name, 100.0 * dev->wall_util, idle, total,
                             (unsigned long long)g->count, g->count == 1 ? "bubble" : "bubbles",
                             mean, when, lead, trail));
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
    if (rc == PP_OK)
        rc = an_decompose_findings(r);
    uint64_t unknown = 0, execs = 0;
    for (size_t d = 0; d < r->ndevices; d++)
        unknown += r->devices[d].hw_unknown, execs += r->devices[d].execs;
    if (rc == PP_OK && unknown > 0)
        rc = add(r, an_strdupf("%llu of %llu execs report no hardware time and are left out of "
                               "the hardware figures.",
                               (unsigned long long)unknown, (unsigned long long)execs));
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
