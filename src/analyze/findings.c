/* findings.c — ranked plain statements with numbers.
 *
 * Order: data loss (always first: every figure after it may undercount),
 * unlabeled annotations and the pattern that would label them, the
 * bottleneck stage and what its time is made of, a throughput bound far
 * above the measured throughput and where the rest of each cycle goes, the
 * most idle device and when it idles (with the devices it shares CPU cores
 * with), data-parallel imbalance with the split that would balance it (or
 * the statement that it is within noise), hardware times that are not
 * per-run measurements, wall parts that dominate, back-pressure, hand-off,
 * and execs left out of the hardware figures. Each finding is data
 * (finding_list.c): a kind, its subject, its figure with an interval
 * across batches, and for advice an action whose predicted effect the
 * what-if layer sets. Every percentage says what it is a share of; every
 * threshold is a PP_FINDING_* constant (docs/analysis.md, "Findings"). */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"
#include "stats/stats.h"

/* A finding with no figure and no action. */
static int add(pp_report *r, pp_finding_kind kind, uint32_t stage, uint32_t device, char *text) {
    return an_finding_add(r, kind, stage, device, text) ? PP_OK : PP_ENOMEM;
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
    return add(r, PP_FINDING_DATA_LOSS, AN_NONE, AN_NONE,
               an_strdupf("Data loss: %s; every figure below may undercount.", what));
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

/* The values of stage s's times, one per batch that has it, as doubles
 * (for the intervals); *n of them. */
static double *stage_values(const pp_report *r, uint32_t s, size_t *n) {
    double *v = malloc((r->ntimes + 1) * sizeof *v);
    *n = 0;
    for (size_t i = 0; v && i < r->ntimes; i++)
        if (r->times[i].stage == s)
            v[(*n)++] = (double)r->times[i].time_ns;
    return v;
}

/* Stage s's time in batch index b, or -1. */
static int64_t time_in(const pp_report *r, size_t b, uint32_t s) {
    for (uint32_t t = r->batch_time[b]; t < r->batch_time[b + 1]; t++)
        if (r->times[t].stage == s)
            return r->times[t].time_ns;
    return -1;
}

/* The sign test of stage a against stage c over the batches that have
 * both, without a tie: in *k of *n, a took longer. */
static double stages_sign_p(const pp_report *r, uint32_t a, uint32_t c, uint64_t *k,
                            uint64_t *n) {
    *k = *n = 0;
    for (size_t b = 0; b < r->nbatches; b++) {
        int64_t ta = time_in(r, b, a), tc = time_in(r, b, c);
        if (ta >= 0 && tc >= 0 && ta != tc)
            (*n)++, *k += ta > tc;
    }
    return pp_sign_test(*k, *n);
}

/* What the stage waited for between its batches (flow.c), when worth a
 * word: for its input (upstream not done), or for room downstream. The
 * first stage has no upstream: the rest of its idle time waits for its
 * source, never for upstream work. */
static void idle_between(const pp_report *r, uint32_t b, char *buf, size_t len) {
    const pp_stage_stats *st = &r->stages[b];
    double least = PP_FINDING_STARVED_SHARE * (double)st->time.total;
    buf[0] = '\0';
    if (st->time.total <= 0 || ((double)st->starved_ns <= least && (double)st->blocked_ns <= least))
        return;
    char starved[32], blocked[32];
    an_format_ns(st->starved_ns, starved, sizeof starved);
    an_format_ns(st->blocked_ns, blocked, sizeof blocked);
    if (b == 0)
        snprintf(buf, len, "; between batches it was held %s by the next stage (%.1fx its total "
                           "stage time); as the first stage it waits for no upstream work",
                 blocked, an_ratio(st->blocked_ns, st->time.total));
    else
        snprintf(buf, len, "; between batches it waited %s for its input from upstream (%.1fx its "
                           "total stage time) and was held %s by the next stage",
                 starved, an_ratio(st->starved_ns, st->time.total), blocked);
}

static int bottleneck(pp_report *r) {
    if (r->nbatches == 0)
        return PP_OK;
    uint32_t b = 0, c = AN_NONE; /* the bottleneck, and the runner-up */
    for (uint32_t s = 1; s < r->nstages; s++)
        if (r->stages[s].bottleneck_count > r->stages[b].bottleneck_count)
            b = s;
    for (uint32_t s = 0; s < r->nstages; s++)
        if (s != b && (c == AN_NONE ||
                       r->stages[s].bottleneck_count > r->stages[c].bottleneck_count))
            c = s;
    const pp_stage_stats *st = &r->stages[b];
    size_t n;
    double *v = stage_values(r, b, &n);
    pp_interval_3 mean;
    int rc = v ? an_mean_interval(v, n, &mean) : PP_ENOMEM;
    free(v);
    if (rc != PP_OK)
        return rc;
    char m[32], lo[32], hi[32], p95[32], what[256], idle[300], versus[300] = "";
    an_format_ns((int64_t)mean.est, m, sizeof m);
    an_format_ns((int64_t)mean.lo, lo, sizeof lo);
    an_format_ns((int64_t)mean.hi, hi, sizeof hi);
    an_format_ns(st->time.p95, p95, sizeof p95);
    if (st->exec_less)
        snprintf(what, sizeof what, "; it is host work (stage spans on CPU threads, no device "
                                    "execs)");
    else
        composition(r, b, what, sizeof what);
    idle_between(r, b, idle, sizeof idle);
    int significant = -1;
    if (c != AN_NONE && r->stages[c].bottleneck_count > 0) {
        uint64_t k, nn;
        double p = stages_sign_p(r, b, c, &k, &nn);
        significant = p < PP_FINDING_ALPHA && 2 * k > nn;
        if (!significant)
            snprintf(versus, sizeof versus, "; within noise of stage \"%s\" (%llu cycles): "
                                            "\"%s\" took longer in %llu of %llu batches both "
                                            "have (sign test p %.2f), so either may be the one",
                     r->stages[c].name, (unsigned long long)r->stages[c].bottleneck_count,
                     st->name, (unsigned long long)k, (unsigned long long)nn, p);
    }
    pp_finding *f = an_finding_add(
        r, PP_FINDING_BOTTLENECK, b, AN_NONE,
        an_strdupf("Bottleneck: stage \"%s\" limits %llu of %llu cycles (stage time mean %s, "
                   "95%% interval %s .. %s; p95 %s)%s%s%s.",
                   st->name, (unsigned long long)st->bottleneck_count,
                   (unsigned long long)r->nbatches, m, lo, hi, p95, versus, what, idle));
    if (!f)
        return PP_ENOMEM;
    an_finding_figure(f, "stage_time_mean", "ns", mean.est, mean.lo, mean.hi);
    f->significant = significant;
    return PP_OK;
}

/* The throughput bound assumes the stages of different batches overlap
 * perfectly; when the measured throughput is far below it, say why: the
 * batches in flight on average (the stages' sum per batch against the
 * period, Little's law) and the time outside every stage. */
static int throughput_gap(pp_report *r) {
    const pp_cycle_stats *cy = &r->cycles;
    if (cy->complete == 0 || cy->throughput_measured <= 0 ||
        cy->throughput_bound <= PP_FINDING_THROUGHPUT_GAP * cy->throughput_measured)
        return PP_OK;
    int64_t wlen = r->window.end_ns - r->window.start_ns, outside;
    int64_t period = wlen / (int64_t)cy->complete;
    uint32_t before;
    double *sums = malloc((r->nbatches + 1) * sizeof *sums);
    if (!sums)
        return PP_ENOMEM;
    for (size_t b = 0; b < r->nbatches; b++) {
        sums[b] = 0;
        for (uint32_t t = r->batch_time[b]; t < r->batch_time[b + 1]; t++)
            sums[b] += (double)r->times[t].time_ns;
    }
    pp_interval_3 sum;
    int rc = an_mean_interval(sums, r->nbatches, &sum);
    free(sums);
    if (rc == PP_OK)
        rc = an_outside_stages(r, &outside, &before);
    if (rc != PP_OK)
        return rc;
    double per = period > 0 ? (double)period : 1.0;
    pp_interval_3 flight = {sum.est / per, sum.lo / per, sum.hi / per};
    char p[32], st[32], out[32];
    an_format_ns(period, p, sizeof p);
    an_format_ns((int64_t)sum.est, st, sizeof st);
    an_format_ns(outside / (int64_t)cy->complete, out, sizeof out);
    pp_finding *f = an_finding_add(
        r, PP_FINDING_THROUGHPUT, r->nstages ? before : AN_NONE, AN_NONE,
        an_strdupf("Throughput: %.2f batches/s were measured, %.1fx below the %.2f/s that cycle "
                   "latency bounds: per batch, the stages take %s in sum against a period of "
                   "%s, so %.2f batches (95%% interval %.2f .. %.2f) are in flight at once on "
                   "average%s; %s per batch (%.0f%% of the period) lies outside every stage, "
                   "most of it right before stage \"%s\".",
                   cy->throughput_measured, cy->throughput_bound / cy->throughput_measured,
                   cy->throughput_bound, st, p, flight.est, flight.lo, flight.hi,
                   flight.est >= PP_FINDING_SERIAL_MIN && flight.hi <= PP_FINDING_SERIAL_MAX
                       ? ": the stages of different batches barely overlap, the pipeline does "
                         "not stream"
                       : "",
                   out, 100.0 * an_ratio(outside, wlen),
                   r->nstages ? r->stages[before].name : "?"));
    if (!f)
        return PP_ENOMEM;
    an_finding_figure(f, "batches_in_flight", "count", flight.est, flight.lo, flight.hi);
    return PP_OK;
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
int an_device_on_host_cpu(const pp_report *r, uint32_t d) {
    const pp_device_stats *dev = &r->devices[d];
    return !dev->simulated &&
           (strncmp(dev->name, "CPU", 3) == 0 || strstr(dev->name, ":CPU") != NULL);
}

double an_host_cpu_demand(const pp_report *r, size_t *ndevices) {
    int64_t busy = 0;
    *ndevices = 0;
    for (uint32_t d = 0; d < r->ndevices; d++)
        *ndevices += (size_t)an_device_on_host_cpu(r, d);
    for (size_t t = 0; t < r->ntracks; t++)
        if (an_device_on_host_cpu(r, r->tracks[t].device))
            busy = an_sat_add(busy, r->tracks[t].busy_ns);
    return an_ratio(busy, r->window.end_ns - r->window.start_ns);
}

/* When device d shares the host's CPU cores with other devices (an
 * OpenVINO or cpu-backend CPU device beside host threads), what they
 * demand together: its idle time is not idle cores. */
static void shared_cores(const pp_report *r, uint32_t d, char *buf, size_t len) {
    size_t n;
    double demand = an_host_cpu_demand(r, &n);
    buf[0] = '\0';
    if (!an_device_on_host_cpu(r, d) || n < 2)
        return;
    size_t u = (size_t)snprintf(buf, len, " It shares the host's CPU cores with");
    for (uint32_t e = 0; e < r->ndevices && u < len; e++)
        if (e != d && an_device_on_host_cpu(r, e)) {
            char name[160];
            an_device_label(r, e, name, sizeof name);
            int k = snprintf(buf + u, len - u, " %s (busy %.1f%%)", name,
                             100.0 * r->devices[e].wall_util);
            u += k > 0 ? (size_t)k : 0;
        }
    if (u < len)
        snprintf(buf + u, len - u, ": together their threads and streams keep %.2f cores "
                                   "busy on average, so its idle time is not idle cores.",
                 demand);
}

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
    char shared[600];
    shared_cores(r, d, shared, sizeof shared);
    pp_finding *f = an_finding_add(
        r, PP_FINDING_IDLE, AN_NONE, d,
        an_strdupf("%s: %s is busy %.1f%% of the window and idle %s: %s in %llu %s between its "
                   "execs (mean %s%s), %s before its first exec and %s after its last.%s",
                   r->ndevices > 1 ? "Most idle device" : "Idle time", name,
                   100.0 * dev->wall_util, idle, total, (unsigned long long)g->count,
                   g->count == 1 ? "bubble" : "bubbles", mean, when, lead, trail, shared));
    if (!f)
        return PP_ENOMEM;
    an_finding_figure(f, "wall_util", "share", dev->wall_util, dev->wall_util, dev->wall_util);
    return PP_OK;
}

/* "A 21, B 19" of the parts' slowest counts; "now" the current shares and
 * "split" the suggested ones. */
static int dp_lists(const pp_report *r, const pp_dp_stats *dp, char *slow, char *split,
                    char *now, size_t len) {
    size_t t = 0, u = 0, v = 0;
    int recorded = 1;
    slow[0] = split[0] = now[0] = '\0';
    for (size_t i = 0; i < dp->ndevices; i++) {
        const pp_dp_device *part = &dp->devices[i];
        char name[200];
        an_dp_part_label(r, part, name, sizeof name);
        int a = snprintf(slow + t, len - t, "%s%s in %llu", i ? ", " : "", name,
                         (unsigned long long)part->slowest);
        int b = snprintf(split + u, len - u, "%s%s %.2f", i ? ", " : "", name,
                         part->suggested_share);
        int c = snprintf(now + v, len - v, "%s%.2f", i ? "/" : "", part->share);
        recorded &= part->share_recorded;
        t += a > 0 && (size_t)a < len - t ? (size_t)a : 0;
        u += b > 0 && (size_t)b < len - u ? (size_t)b : 0;
        v += c > 0 && (size_t)c < len - v ? (size_t)c : 0;
    }
    return recorded;
}

/* A data-parallel stage whose parts take unequal time: advice to re-split
 * when the imbalance is above PP_FINDING_IMBALANCE_MIN across batches and
 * the sign test says one part is slower in more batches than chance; else,
 * when the imbalance alone is above it, the statement that it is per-batch
 * noise, which no split removes. */
static int imbalance(pp_report *r, const pp_dp_stats *dp) {
    if (dp->ndevices < 2 || dp->imbalance <= PP_FINDING_IMBALANCE_MIN)
        return PP_OK;
    char slow[512], split[512], now[512];
    int recorded = dp_lists(r, dp, slow, split, now, sizeof slow);
    int significant = dp->imbalance_lo > PP_FINDING_IMBALANCE_MIN && dp->parts_p < PP_FINDING_ALPHA;
    int advice = significant && dp->devices[0].suggested_share > 0;
    const char *stage = r->stages[dp->stage].name;
    char *text;
    if (!significant)
        text = an_strdupf("Imbalance within noise: data-parallel stage \"%s\": the slowest part "
                          "takes %.2fx (95%% interval %.2f .. %.2f) the mean part wall per batch, "
                          "but each part is the slowest about as often as the others (%s of %llu "
                          "batches; sign test p %.2f): per-batch variation that no split "
                          "removes.",
                          stage, dp->imbalance, dp->imbalance_lo, dp->imbalance_hi, slow,
                          (unsigned long long)dp->batches, dp->parts_p);
    else {
        char advise[1400] = "";
        if (advice)
            snprintf(advise, sizeof advise, "; measured rates suggest the split %s (now %s, %s)",
                     split, now,
                     recorded ? "as recorded" : "an even split assumed: the trace records no "
                                                "shares");
        text = an_strdupf("Imbalance: data-parallel stage \"%s\": the slowest part takes %.2fx "
                          "(95%% interval %.2f .. %.2f) the mean part wall per batch (slowest: "
                          "%s of %llu batches; sign test p %.2g)%s.",
                          stage, dp->imbalance, dp->imbalance_lo, dp->imbalance_hi, slow,
                          (unsigned long long)dp->batches, dp->parts_p, advise);
    }
    pp_finding *f = an_finding_add(r, PP_FINDING_IMBALANCE, dp->stage, AN_NONE, text);
    if (!f)
        return PP_ENOMEM;
    an_finding_figure(f, "imbalance", "ratio", dp->imbalance, dp->imbalance_lo, dp->imbalance_hi);
    f->significant = significant;
    if (!advice)
        return PP_OK;
    double *shares = malloc(dp->ndevices * sizeof *shares);
    if (!shares)
        return PP_ENOMEM;
    for (size_t i = 0; i < dp->ndevices; i++)
        shares[i] = dp->devices[i].suggested_share;
    f->action = (pp_finding_action){.kind = PP_ACTION_RESPLIT, .stage = dp->stage,
                                    .device = AN_NONE, .nshares = dp->ndevices, .shares = shares};
    return PP_OK;
}

/* A stage held back by its downstream: idle between batches with its next
 * input ready and its previous output not yet taken, for more than
 * PP_FINDING_STARVED_SHARE of its total stage time. */
static int back_pressure(pp_report *r, uint32_t s) {
    const pp_stage_stats *st = &r->stages[s];
    if (s + 1 >= r->nstages || st->time.total <= 0 ||
        (double)st->blocked_ns <= PP_FINDING_STARVED_SHARE * (double)st->time.total)
        return PP_OK;
    char blocked[32], starved[32];
    an_format_ns(st->blocked_ns, blocked, sizeof blocked);
    an_format_ns(st->starved_ns, starved, sizeof starved);
    pp_finding *f = an_finding_add(
        r, PP_FINDING_BACK_PRESSURE, s, AN_NONE,
        an_strdupf("Back-pressure: stage \"%s\" sat idle %s in total between batches with its "
                   "next input ready while stage \"%s\" had not yet taken its previous output "
                   "(%.1fx its total stage time): downstream holds it back%s%s%s.",
                   st->name, blocked, r->stages[s + 1].name,
                   an_ratio(st->blocked_ns, st->time.total),
                   s > 0 ? "; it waited " : "", s > 0 ? starved : "",
                   s > 0 ? " for upstream input" : ""));
    if (!f)
        return PP_ENOMEM;
    double b = (double)st->blocked_ns;
    an_finding_figure(f, "blocked_ns", "ns", b, b, b);
    return PP_OK;
}

/* A stage that holds each batch well beyond its stage time: the hand-off
 * between its parts (dispatch, wake-up, waiting for a worker). */
static int handoff(pp_report *r, uint32_t s) {
    const pp_stage_stats *st = &r->stages[s];
    if (!r->handoff || st->hold.total <= 0)
        return PP_OK;
    const pp_interval_3 *h = &r->handoff[s];
    double share = h->est / ((double)st->hold.total / (double)st->hold.n);
    if (share < PP_FINDING_HANDOFF_SHARE || h->lo <= 0)
        return PP_OK;
    char hold[32], time[32], est[32], lo[32], hi[32];
    an_format_ns(st->hold.mean, hold, sizeof hold);
    an_format_ns(st->time.mean, time, sizeof time);
    an_format_ns((int64_t)h->est, est, sizeof est);
    an_format_ns((int64_t)h->lo, lo, sizeof lo);
    an_format_ns((int64_t)h->hi, hi, sizeof hi);
    pp_finding *f = an_finding_add(
        r, PP_FINDING_HANDOFF, s, AN_NONE,
        an_strdupf("Hand-off: stage \"%s\" holds each batch %s on average (its first event to "
                   "its last) against a stage time of %s: %s a batch (95%% interval %s .. %s, "
                   "%.0f%% of the hold time) goes to handing the work between its parts "
                   "(dispatch, wake-up, waiting for a worker), which faster devices do not "
                   "shorten.",
                   st->name, hold, time, est, lo, hi, 100.0 * share));
    if (!f)
        return PP_ENOMEM;
    an_finding_figure(f, "handoff_ns_mean", "ns", h->est, h->lo, h->hi);
    return PP_OK;
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
            rc = add(r, PP_FINDING_HW_QUALITY, AN_NONE, d,
                     an_strdupf("Hardware time on %s is a running mean over its runs (as "
                                "OpenVINO's CPU plugin reports it), not each request's own: "
                                "its hw%%, eff%% and penalty are averages.",
                                name));
        if (rc == PP_OK && (dev->hw_quality & PP_HW_ABOVE_WALL))
            rc = add(r, PP_FINDING_HW_QUALITY, AN_NONE, d,
                     an_strdupf("%llu of %llu execs on %s report hardware time above their "
                                "wall time (eff %.1f%%): its hardware figures are not "
                                "per-request measurements.",
                                (unsigned long long)dev->hw_above_wall,
                                (unsigned long long)(dev->execs - dev->hw_unknown), name,
                                100.0 * dev->hw_eff));
        if ((dev->hw_quality & PP_HW_IS_WALL) && r->meta.level < 0)
            join(is_wall, sizeof is_wall, name);
    }
    if (rc == PP_OK && is_wall[0])
        rc = add(r, PP_FINDING_HW_QUALITY, AN_NONE, AN_NONE,
                 an_strdupf("Hardware time on %s is each exec's own duration in the trace "
                            "(a foreign trace carries no separate measurement): eff%% 100 and "
                            "penalty 0 hold by construction.",
                            is_wall));
    return rc;
}

/* Annotations that a pattern would label, when something is left
 * unlabeled: with no pattern given, or with patterns that labeled
 * nothing. */
static int unlabeled(pp_report *r) {
    size_t missing = 0;
    for (size_t i = 0; i < r->nreal; i++)
        missing += r->execs[i].stage == AN_NONE || an_exec_batch(r, &r->execs[i]) < 0;
    if ((missing == 0 && r->nstages > 0) || (r->patterns && r->nstages > 0))
        return PP_OK;
    if (an_pattern_hint(r) != PP_OK)
        return PP_ENOMEM;
    if (!r->hint)
        return PP_OK;
    return add(r, PP_FINDING_UNLABELED, AN_NONE, AN_NONE,
               an_strdupf("Unlabeled: %zu of %zu execs have no stage or batch; %s.", missing,
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
    for (size_t i = 0; rc == PP_OK && i < r->ndp; i++)
        rc = imbalance(r, &r->dp[i]);
    if (rc == PP_OK)
        rc = hw_quality(r);
    if (rc == PP_OK)
        rc = an_decompose_findings(r);
    for (uint32_t s = 0; rc == PP_OK && s < r->nstages; s++)
        rc = back_pressure(r, s);
    for (uint32_t s = 0; rc == PP_OK && s < r->nstages; s++)
        rc = handoff(r, s);
    if (rc == PP_OK)
        rc = an_sched_findings(r);
    uint64_t unknown = 0, execs = 0;
    for (size_t d = 0; d < r->ndevices; d++)
        if (!(r->devices[d].hw_quality & PP_HW_HOST))
            unknown += r->devices[d].hw_unknown, execs += r->devices[d].execs;
    if (rc == PP_OK && unknown > 0) {
        pp_finding *f = an_finding_add_text(
            r, PP_FINDING_HW_UNKNOWN,
            an_strdupf("%llu of %llu device execs report no hardware time and are left out of "
                       "the hardware figures.",
                       (unsigned long long)unknown, (unsigned long long)execs));
        rc = f ? PP_OK : PP_ENOMEM;
        if (f)
            an_finding_figure(f, "hw_unknown", "count", (double)unknown, (double)unknown,
                              (double)unknown);
    }
    if (rc == PP_OK)
        rc = an_findings_render(r);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
