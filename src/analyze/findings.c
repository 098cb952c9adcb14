/* findings.c — ranked plain statements with numbers.
 *
 * Order: data loss (always first: every figure after it may undercount),
 * unlabeled annotations and the pattern that would label them, the
 * bottleneck stage and what its time is made of, a throughput bound far
 * above the measured throughput and where the rest of each cycle goes, the
 * most idle device and when it idles, data-parallel imbalance with the
 * split that would balance it, hardware times that are not per-run
 * measurements, and execs left out of the hardware figures. Every
 * percentage says what it is a share of. */
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

/* The share of each part of the stage's exec wall (execs with known hw):
 * hardware compute, transfer, and the concurrency penalty. */
static void composition(const pp_report *r, uint32_t s, char *buf, size_t len) {
    const pp_stage_stats *st = &r->stages[s];
    int64_t wall = an_sat_add(st->hw_ns, st->penalty.total);
    if (st->hw_ns == 0 || wall <= 0) {
        snprintf(buf, len, "; its execs report no hardware time");
        return;
    }
    int is_wall = 1; /* every device of its execs has hw = wall by construction */
    unsigned quality = 0;
    for (size_t i = 0; i < r->nexecs; i++)
        if (r->execs[i].stage == s && !an_exec_is_host(r, &r->execs[i])) {
            unsigned q = r->devices[an_exec_device(r, &r->execs[i])].hw_quality;
            is_wall &= (q & PP_HW_IS_WALL) != 0;
            quality |= q;
        }
    if (quality & (PP_HW_RUNNING_MEAN | PP_HW_ABOVE_WALL)) {
        snprintf(buf, len, "; its hardware time is not each request's own (%s), so its wall "
                           "is not split into compute and penalty",
                 quality & PP_HW_RUNNING_MEAN ? "a running mean" : "above wall time");
        return;
    }
    if (is_wall) {
        snprintf(buf, len, "; its hardware time is the kernels' own duration in the trace, so "
                           "wall = hardware time by construction (%.0f%% of it data transfer)",
                 100.0 * an_ratio(st->xfer_ns, st->hw_ns));
        return;
    }
    snprintf(buf, len, "; of its execs' wall time, %.0f%% is hardware compute, %.0f%% data "
                       "transfer and %.0f%% concurrency penalty (wall beyond hardware time)",
             100.0 * an_ratio(st->hw_ns - st->xfer_ns, wall), 100.0 * an_ratio(st->xfer_ns, wall),
             100.0 * an_ratio(st->penalty.total, wall));
}

static int bottleneck(pp_report *r) {
    if (r->nbatches == 0)
        return PP_OK;
    uint32_t b = 0;
    for (uint32_t s = 1; s < r->nstages; s++)
        if (r->stages[s].bottleneck_count > r->stages[b].bottleneck_count)
            b = s;
    const pp_stage_stats *st = &r->stages[b];
    char mean[32], p95[32], what[256], idle[200] = "";
    an_format_ns(st->time.mean, mean, sizeof mean);
    an_format_ns(st->time.p95, p95, sizeof p95);
    if (st->exec_less)
        snprintf(what, sizeof what, "; it is host work (stage spans on CPU threads, no device "
                                    "execs)");
    else
        composition(r, b, what, sizeof what);
    int64_t starved = r->starved[b]; /* the bubbles its execs end (the device step) */
    if (starved > st->time.total / 20 && st->time.total > 0) { /* below 5%: not worth a word */
        char total[32];
        an_format_ns(starved, total, sizeof total);
        snprintf(idle, sizeof idle, "; besides, its devices sat idle %s in total right before "
                                    "its execs, waiting for upstream work (%.1fx its total stage "
                                    "time)",
                 total, an_ratio(starved, st->time.total));
    }
    return add(r, an_strdupf("Bottleneck: stage \"%s\" limits %llu of %llu cycles (stage time "
                             "mean %s, p95 %s)%s%s.",
                             st->name, (unsigned long long)st->bottleneck_count,
                             (unsigned long long)r->nbatches, mean, p95, what, idle));
}

/* The throughput bound assumes the stages of different batches overlap
 * perfectly; when the measured throughput is far below it, say why: the
 * stages' sum against the period, and the time outside every stage. */
static int throughput_gap(pp_report *r) {
    const pp_cycle_stats *cy = &r->cycles;
    if (cy->complete == 0 || cy->throughput_measured <= 0 ||
        cy->throughput_bound <= 1.2 * cy->throughput_measured)
        return PP_OK;
    int64_t wlen = r->window.end_ns - r->window.start_ns, outside;
    int64_t period = wlen / (int64_t)cy->complete, sum = 0;
    uint32_t before;
    for (size_t i = 0; i < r->ntimes; i++)
        sum = an_sat_add(sum, r->times[i].time_ns);
    sum /= (int64_t)(r->nbatches ? r->nbatches : 1);
    if (an_outside_stages(r, &outside, &before) != PP_OK)
        return PP_ENOMEM;
    char p[32], st[32], out[32], overlap[160] = "";
    an_format_ns(period, p, sizeof p);
    an_format_ns(sum, st, sizeof st);
    an_format_ns(outside / (int64_t)cy->complete, out, sizeof out);
    /* floor(0.8 x period) without the product: a period of centuries
     * times 8 does not fit in 64 bits */
    if (sum >= period / 10 * 8 + period % 10 * 8 / 10)
        snprintf(overlap, sizeof overlap, " (the stages of different batches barely overlap: "
                                          "the pipeline does not stream)");
    return add(r, an_strdupf("Throughput: %.2f batches/s were measured, %.1fx below the %.2f/s "
                             "that cycle latency bounds: per batch, the stages take %s in sum "
                             "against a period of %s%s; %s per batch (%.0f%% of the period) "
                             "lies outside every stage, most of it right before stage \"%s\".",
                             cy->throughput_measured,
                             cy->throughput_bound / cy->throughput_measured,
                             cy->throughput_bound, st, p, overlap, out,
                             100.0 * an_ratio(outside, wlen),
                             r->nstages ? r->stages[before].name : "?"));
}

/* The longest bubble of device d (the first one on ties); 0 when it has
 * none. */
static int longest_gap(const pp_report *r, uint32_t d, an_gap *best) {
    an_gap_cursor c = an_gaps_of(r, d);
    int found = 0;
    for (an_gap g; an_gap_next(&c, &g); found = 1)
        if (!found || g.end - g.start > best->end - best->start)
            *best = g;
    return found;
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
    an_gap longest;
    if (longest_gap(r, d, &longest)) {
        char len[32], at[32];
        an_format_ns(longest.end - longest.start, len, sizeof len);
        an_format_ns(longest.start - r->window.start_ns, at, sizeof at);
        snprintf(when, sizeof when, ", the longest %s at +%s into the window", len, at);
    }
    return add(r, an_strdupf("%s: %s is busy %.1f%% of the window and idle %s: "
                             "%s in %llu %s between its execs (mean %s%s), %s before its "
                             "first exec and %s after its last.",
                             r->ndevices > 1 ? "Most idle device" : "Idle time", name,
                             100.0 * dev->wall_util, idle, total,
                             (unsigned long long)g->count, g->count == 1 ? "bubble" : "bubbles",
                             mean, when, lead, trail));
}

static int imbalance(pp_report *r, const pp_dp_stats *dp) {
    char split[512] = "", now[512] = "";
    size_t u = 0, v = 0;
    int recorded = 1;
    for (size_t i = 0; i < dp->ndevices; i++) {
        char name[200];
        an_dp_part_label(r, &dp->devices[i], name, sizeof name);
        int a = snprintf(split + u, sizeof split - u, "%s%s %.2f", i ? ", " : "", name,
                         dp->devices[i].suggested_share);
        int b = snprintf(now + v, sizeof now - v, "%s%.2f", i ? "/" : "", dp->devices[i].share);
        recorded &= dp->devices[i].share_recorded;
        u += a > 0 && (size_t)a < sizeof split - u ? (size_t)a : 0;
        v += b > 0 && (size_t)b < sizeof now - v ? (size_t)b : 0;
    }
    return add(r, an_strdupf("Imbalance: data-parallel stage \"%s\": the slowest device takes "
                             "%.2fx the mean device wall; measured rates suggest the split %s "
                             "(now %s%s).",
                             r->stages[dp->stage].name, dp->imbalance, split, now,
                             recorded ? ", as recorded"
                                      : ", an even split assumed: the trace records no shares"));
}

/* Devices whose hardware times are not per-run measurements; the devices
 * of a foreign trace whose hw is their wall share one statement. */
static int hw_quality(pp_report *r) {
    int rc = PP_OK;
    char is_wall[512] = "";
    for (uint32_t d = 0; rc == PP_OK && d < r->ndevices; d++) {
        const pp_device_stats *dev = &r->devices[d];
        char name[160];
        an_device_label(r, d, name, sizeof name);
        if (dev->hw_quality & PP_HW_RUNNING_MEAN)
            rc = add(r, an_strdupf("Hardware time on %s is a running mean over its runs (as "
                                   "OpenVINO's CPU plugin reports it), not each request's own: "
                                   "its hw%%, eff%% and penalty are averages.",
                                   name));
        if (rc == PP_OK && (dev->hw_quality & PP_HW_ABOVE_WALL))
            rc = add(r, an_strdupf("%llu of %llu execs on %s report hardware time above their "
                                   "wall time (eff %.1f%%): its hardware figures are not "
                                   "per-request measurements.",
                                   (unsigned long long)dev->hw_above_wall,
                                   (unsigned long long)(dev->execs - dev->hw_unknown), name,
                                   100.0 * dev->hw_eff));
        if ((dev->hw_quality & PP_HW_IS_WALL) && r->meta.level < 0)
            join(is_wall, sizeof is_wall, name);
    }
    if (rc == PP_OK && is_wall[0])
        rc = add(r, an_strdupf("Hardware time on %s is each exec's own duration in the trace "
                               "(a foreign trace carries no separate measurement): eff%% 100 and "
                               "penalty 0 hold by construction.",
                               is_wall));
    return rc;
}

/* Annotations that a pattern would label, when none was given and
 * something is left unlabeled. */
static int unlabeled(pp_report *r) {
    if (r->patterns && !r->unmatched)
        return PP_OK;
    size_t missing = 0;
    for (size_t i = 0; i < r->nreal; i++)
        missing += r->execs[i].stage == AN_NONE || an_exec_batch(r, &r->execs[i]) < 0;
    if (missing == 0 && r->nstages > 0)
        return PP_OK;
    if (an_pattern_hint(r) != PP_OK)
        return PP_ENOMEM;
    if (!r->hint)
        return PP_OK;
    return add(r, an_strdupf("Unlabeled: %zu of %zu execs have no stage or batch; %s.", missing,
                             r->nreal, r->hint));
}

int an_findings_compute(pp_report *r, pp_error *err) {
    int rc = data_loss(r);
    if (rc == PP_OK)
        rc = unlabeled(r);
    if (rc == PP_OK)
        rc = bottleneck(r);
    if (rc == PP_OK)
        rc = throughput_gap(r);
    if (rc == PP_OK)
        rc = most_idle(r);
    /* below 5% the split is within the noise of one run */
    for (size_t i = 0; rc == PP_OK && i < r->ndp; i++)
        if (r->dp[i].imbalance > 1.05 && r->dp[i].ndevices > 0 &&
            r->dp[i].devices[0].suggested_share > 0)
            rc = imbalance(r, &r->dp[i]);
    if (rc == PP_OK)
        rc = hw_quality(r);
    if (rc == PP_OK)
        rc = an_decompose_findings(r);
    uint64_t unknown = 0, execs = 0;
    for (size_t d = 0; d < r->ndevices; d++)
        if (!(r->devices[d].hw_quality & PP_HW_HOST))
            unknown += r->devices[d].hw_unknown, execs += r->devices[d].execs;
    if (rc == PP_OK && unknown > 0)
        rc = add(r, an_strdupf("%llu of %llu device execs report no hardware time and are left "
                               "out of the hardware figures.",
                               (unsigned long long)unknown, (unsigned long long)execs));
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
