/* devices.c — busy, idle, utilization, hardware figures and bubbles per
 * device and per track (docs/architecture.md §4).
 *
 * Busy time and bubbles clip every exec to W; per-exec figures (counts,
 * hardware sums, concurrency penalty) take the execs lying entirely inside W.
 * Execs with hw_ns == 0 (unknown) are counted but left out of every hardware
 * figure.
 *
 * The execs are grouped by track, tracks by device, with one counting sort,
 * so each device and each track reads only its own execs. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

/* The execs of the report grouped by track, device-major: the execs of
 * group g are idx[at[g] .. at[g+1]); group_of[t] is track t's group. */
typedef struct exec_groups {
    size_t *idx, *at;
    uint32_t *group_of, *track_of; /* track -> group, group -> track */
    size_t *device_at;             /* device d's groups: device_at[d] .. device_at[d+1] */
    size_t ngroups;
} exec_groups;

static void groups_free(exec_groups *g) {
    free(g->idx), free(g->at), free(g->group_of), free(g->track_of), free(g->device_at);
}

static int groups_build(const pp_report *r, size_t ntracks, exec_groups *g) {
    *g = (exec_groups){0};
    g->idx = an_alloc(r->nexecs, sizeof *g->idx);
    g->at = calloc(ntracks + 1, sizeof *g->at);
    g->group_of = malloc((ntracks ? ntracks : 1) * sizeof *g->group_of);
    g->track_of = malloc((ntracks ? ntracks : 1) * sizeof *g->track_of);
    g->device_at = malloc((r->ndevices + 1) * sizeof *g->device_at);
    if (!g->idx || !g->at || !g->group_of || !g->track_of || !g->device_at)
        return PP_ENOMEM;
    for (uint32_t d = 0; d < r->ndevices; d++) {
        g->device_at[d] = g->ngroups;
        for (uint32_t t = 0; t < ntracks; t++) {
            if (r->track_device[t] != d)
                continue;
            g->group_of[t] = (uint32_t)g->ngroups;
            g->track_of[g->ngroups++] = t;
        }
    }
    g->device_at[r->ndevices] = g->ngroups;
    for (size_t i = 0; i < r->nexecs; i++)
        g->at[g->group_of[r->execs[i].track] + 1]++;
    for (size_t k = 0; k < g->ngroups; k++)
        g->at[k + 1] += g->at[k];
    size_t *next = malloc((g->ngroups ? g->ngroups : 1) * sizeof *next);
    if (!next)
        return PP_ENOMEM;
    memcpy(next, g->at, g->ngroups * sizeof *next);
    for (size_t i = 0; i < r->nexecs; i++)
        g->idx[next[g->group_of[r->execs[i].track]]++] = i;
    free(next);
    return PP_OK;
}

/* Sums over the execs inside W of one device or track; above / same count
 * the execs whose hw_ns exceeds / equals their wall, host the host execs. */
typedef struct hw_sums {
    uint64_t execs, unknown, above, same, host;
    int64_t hw, xfer, wall_known;
} hw_sums;

/* Keeps the bubbles of device d in r->gaps for gaps.csv (room for one per
 * exec was made up front: a device has fewer bubbles than execs). */
static void gaps_keep(pp_report *r, uint32_t d, const an_span *merged, size_t n) {
    for (size_t i = 1; i < n; i++)
        r->gaps[r->ngaps++] = (an_gap){merged[i - 1].end, merged[i].start};
    r->gap_at[d + 1] = r->ngaps;
}

/* The device's buffers while its tracks are read: its exec intervals and
 * the concurrency penalties (wall - hw) of its execs inside W with known hw. */
typedef struct device_acc {
    an_span *spans;
    int64_t *pen;
    size_t nspans, npen;
    hw_sums sums;
} device_acc;

/* One pass over the execs of track group k: the track's figures, and its
 * intervals, sums and penalties added to the device's. */
static int track_fill(pp_report *r, const exec_groups *g, size_t k, pp_track_stats *t,
                      device_acc *acc) {
    const int64_t w0 = r->window.start_ns, w1 = r->window.end_ns;
    const size_t *idx = g->idx + g->at[k], n = g->at[k + 1] - g->at[k];
    an_span *spans = an_buf_get(&r->spans2, (n ? n : 1) * sizeof *spans);
    if (!spans)
        return PP_ENOMEM;
    hw_sums sums = {0};
    for (size_t i = 0; i < n; i++) {
        const an_exec *x = &r->execs[idx[i]];
        spans[i] = acc->spans[acc->nspans++] =
            (an_span){an_start(r, x->event), an_end(r, x->event)};
        if (!x->inside)
            continue;
        sums.execs++;
        if (x->host) { /* host work has no hardware time: not "unknown" either */
            sums.host++;
            continue;
        }
        int64_t hw = an_hw_of(r->c.hw_ns[x->event]), wall = r->c.dur_ns[x->event];
        if (hw == 0) {
            sums.unknown++;
            continue;
        }
        sums.above += hw > wall;
        sums.same += hw == wall;
        sums.hw = an_sat_add(sums.hw, hw);
        sums.xfer = an_sat_add(sums.xfer, an_hw_of(r->c.xfer_ns[x->event]));
        sums.wall_known = an_sat_add(sums.wall_known, wall);
        acc->pen[acc->npen++] = wall - hw; /* both in [0, INT64_MAX]: no overflow */
    }
    size_t merged;
    int rc = an_intervals_merge(r, spans, n, w0, w1, &merged, &t->busy_ns);
    if (rc == PP_OK)
        rc = an_gaps_summarize(r, spans, merged, w0, w1, &t->bubbles);
    if (rc != PP_OK)
        return rc;
    t->execs = sums.execs;
    t->hw_unknown = sums.unknown;
    t->hw_util = an_ratio(sums.hw, w1 - w0);
    acc->sums.execs += sums.execs, acc->sums.unknown += sums.unknown;
    acc->sums.above += sums.above, acc->sums.same += sums.same, acc->sums.host += sums.host;
    acc->sums.hw = an_sat_add(acc->sums.hw, sums.hw);
    acc->sums.xfer = an_sat_add(acc->sums.xfer, sums.xfer);
    acc->sums.wall_known = an_sat_add(acc->sums.wall_known, sums.wall_known);
    char device[160];
    an_device_label(r, t->device, device, sizeof device);
    const pp_track_info *info = pp_model_track(r->m, t->track);
    t->name = an_strdupf("%s/%s", device, pp_model_string(r->m, info->name));
    return t->name ? PP_OK : PP_ENOMEM;
}

/* The device's tracks first (stats_of_track maps a model track to its row
 * of r->tracks), then the device from what they gathered. */
static int device_fill(pp_report *r, const exec_groups *g, uint32_t d,
                       const size_t *stats_of_track) {
    const int64_t w0 = r->window.start_ns, w1 = r->window.end_ns;
    size_t n = g->at[g->device_at[d + 1]] - g->at[g->device_at[d]];
    device_acc acc = {an_buf_get(&r->spans, (n ? n : 1) * sizeof *acc.spans),
                      an_buf_get(&r->index, (n ? n : 1) * sizeof *acc.pen), 0, 0, {0}};
    if (!acc.spans || !acc.pen)
        return PP_ENOMEM;
    pp_device_stats *dev = &r->devices[d];
    double util = 0;
    int rc = PP_OK;
    for (size_t k = g->device_at[d]; rc == PP_OK && k < g->device_at[d + 1]; k++) {
        pp_track_stats *t = &r->tracks[stats_of_track[g->track_of[k]]];
        rc = track_fill(r, g, k, t, &acc);
        if (t->execs > 0) /* HW utilization: plain mean over tracks with execs in W */
            util += t->hw_util, dev->tracks++;
    }
    size_t merged;
    if (rc == PP_OK)
        rc = an_summary(r, acc.pen, acc.npen, &dev->penalty);
    if (rc == PP_OK)
        rc = an_intervals_merge(r, acc.spans, acc.nspans, w0, w1, &merged, &dev->busy_ns);
    if (rc == PP_OK)
        rc = an_gaps_summarize(r, acc.spans, merged, w0, w1, &dev->bubbles);
    if (rc != PP_OK)
        return rc;
    gaps_keep(r, d, acc.spans, merged);
    dev->hw_util = dev->tracks ? util / dev->tracks : 0.0;
    dev->idle_ns = (w1 - w0) - dev->busy_ns;
    dev->wall_util = an_ratio(dev->busy_ns, w1 - w0);
    dev->execs = acc.sums.execs;
    dev->hw_unknown = acc.sums.unknown;
    dev->hw_above_wall = acc.sums.above;
    uint64_t known = acc.sums.execs - acc.sums.unknown - acc.sums.host;
    dev->hw_quality |= (acc.sums.above ? PP_HW_ABOVE_WALL : 0u) |
                       (known > 0 && acc.sums.same == known ? PP_HW_IS_WALL : 0u) |
                       (acc.sums.host ? PP_HW_HOST : 0u);
    dev->hw_eff = an_ratio(acc.sums.hw, acc.sums.wall_known);
    dev->transfer_share = an_ratio(acc.sums.xfer, acc.sums.hw);
    dev->penalty_pct_wall = 100.0 * an_ratio(dev->penalty.total, acc.sums.wall_known);
    return PP_OK;
}

int an_devices_compute(pp_report *r, pp_error *err) {
    size_t ntracks = pp_model_track_count(r->m);
    exec_groups g = {0};
    r->tracks = calloc(ntracks ? ntracks : 1, sizeof *r->tracks);
    size_t *stats_of_track = malloc((ntracks ? ntracks : 1) * sizeof *stats_of_track);
    r->gaps = an_alloc(r->nexecs, sizeof *r->gaps);
    r->gap_at = calloc(r->ndevices + 1, sizeof *r->gap_at);
    int rc = r->tracks && stats_of_track && r->gaps && r->gap_at ? groups_build(r, ntracks, &g)
                                                                 : PP_ENOMEM;
    for (uint32_t t = 0; rc == PP_OK && t < ntracks; t++) { /* rows in track order */
        if (r->track_device[t] == AN_NONE)
            continue;
        stats_of_track[t] = r->ntracks;
        r->tracks[r->ntracks++] = (pp_track_stats){.track = t, .device = r->track_device[t]};
    }
    for (uint32_t d = 0; rc == PP_OK && d < r->ndevices; d++)
        rc = device_fill(r, &g, d, stats_of_track);
    groups_free(&g);
    free(stats_of_track);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
