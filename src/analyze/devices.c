/* devices.c — busy, idle, utilization, hardware figures and bubbles per
 * device and per track (DESIGN.md §4).
 *
 * Busy time and bubbles clip every exec to W; per-exec figures (counts,
 * hardware sums, concurrency penalty) take the execs lying entirely inside W.
 * Execs with hw_ns == 0 (unknown) are counted but left out of every hardware
 * figure. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

/* Sums of one device or track over its execs inside W. */
typedef struct hw_sums {
    uint64_t execs, unknown;
    int64_t hw, xfer, wall_known;
} hw_sums;

static void hw_add(hw_sums *s, const an_exec *x) {
    s->execs++;
    if (x->hw == 0) {
        s->unknown++;
        return;
    }
    s->hw += (int64_t)x->hw;
    s->xfer += (int64_t)x->xfer;
    s->wall_known += x->end - x->start;
}

/* Keeps the bubbles of device d in r->gaps for gaps.csv. */
static int gaps_keep(pp_report *r, uint32_t d, const an_span *merged, size_t n) {
    if (n < 2)
        return PP_OK;
    an_gap *g = realloc(r->gaps, (r->ngaps + n - 1) * sizeof *g);
    if (!g)
        return PP_ENOMEM;
    r->gaps = g;
    for (size_t i = 1; i < n; i++)
        g[r->ngaps++] = (an_gap){d, merged[i - 1].end, merged[i].start};
    return PP_OK;
}

static int device_fill(pp_report *r, uint32_t d, an_span *spans, int64_t *penalties) {
    const int64_t w0 = r->window.start_ns, w1 = r->window.end_ns, wlen = w1 - w0;
    pp_device_stats *dev = &r->devices[d];
    hw_sums sums = {0};
    size_t nspans = 0, npen = 0;
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (x->device != d)
            continue;
        spans[nspans++] = (an_span){x->start, x->end};
        if (!x->inside)
            continue;
        hw_add(&sums, x);
        if (x->hw != 0)
            penalties[npen++] = (x->end - x->start) - (int64_t)x->hw;
    }
    size_t merged = an_intervals_merge(spans, nspans, w0, w1, &dev->busy_ns);
    int rc = an_gaps_summarize(spans, merged, w0, w1, &dev->bubbles);
    if (rc == PP_OK)
        rc = gaps_keep(r, d, spans, merged);
    if (rc != PP_OK)
        return rc;
    dev->idle_ns = wlen - dev->busy_ns;
    dev->wall_util = an_ratio(dev->busy_ns, wlen);
    dev->execs = sums.execs;
    dev->hw_unknown = sums.unknown;
    dev->hw_eff = an_ratio(sums.hw, sums.wall_known);
    dev->transfer_share = an_ratio(sums.xfer, sums.hw);
    pp_summary_compute(penalties, npen, &dev->penalty);
    dev->penalty_pct_wall = 100.0 * an_ratio(dev->penalty.total, sums.wall_known);
    return PP_OK;
}

static int track_fill(pp_report *r, pp_track_stats *t, const pp_model *m, an_span *spans) {
    const int64_t w0 = r->window.start_ns, w1 = r->window.end_ns;
    hw_sums sums = {0};
    size_t nspans = 0;
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (x->track != t->track)
            continue;
        spans[nspans++] = (an_span){x->start, x->end};
        if (x->inside)
            hw_add(&sums, x);
    }
    size_t merged = an_intervals_merge(spans, nspans, w0, w1, &t->busy_ns);
    int rc = an_gaps_summarize(spans, merged, w0, w1, &t->bubbles);
    if (rc != PP_OK)
        return rc;
    t->execs = sums.execs;
    t->hw_unknown = sums.unknown;
    t->hw_util = an_ratio(sums.hw, w1 - w0);
    const pp_track_info *info = pp_model_track(m, t->track);
    char device[160];
    an_device_label(r, t->device, device, sizeof device);
    t->name = an_strdupf("%s/%s", device, pp_model_string(m, info->name));
    return t->name ? PP_OK : PP_ENOMEM;
}

int an_devices_compute(pp_report *r, const pp_model *m, pp_error *err) {
    size_t ntracks = pp_model_track_count(m);
    an_span *spans = malloc(r->nexecs * sizeof *spans);
    int64_t *penalties = malloc(r->nexecs * sizeof *penalties);
    r->tracks = calloc(ntracks ? ntracks : 1, sizeof *r->tracks);
    int rc = spans && penalties && r->tracks ? PP_OK : PP_ENOMEM;
    for (uint32_t d = 0; rc == PP_OK && d < r->ndevices; d++)
        rc = device_fill(r, d, spans, penalties);
    for (uint32_t t = 0; rc == PP_OK && t < ntracks; t++) {
        if (r->track_device[t] == AN_NONE)
            continue;
        pp_track_stats *ts = &r->tracks[r->ntracks++];
        ts->track = t;
        ts->device = r->track_device[t];
        rc = track_fill(r, ts, m, spans);
    }
    /* device HW utilization = plain mean over its tracks with execs in W */
    for (size_t d = 0; rc == PP_OK && d < r->ndevices; d++) {
        double sum = 0;
        uint32_t n = 0;
        for (size_t t = 0; t < r->ntracks; t++) {
            if (r->tracks[t].device != d || r->tracks[t].execs == 0)
                continue;
            sum += r->tracks[t].hw_util;
            n++;
        }
        r->devices[d].tracks = n;
        r->devices[d].hw_util = n ? sum / n : 0.0;
    }
    free(spans);
    free(penalties);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
