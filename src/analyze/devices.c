/* devices.c — busy, idle, utilization, hardware figures and bubbles per
 * device and per track (docs/architecture.md §4).
 *
 * Busy time and bubbles clip every exec to W; per-exec figures (counts,
 * hardware sums, concurrency penalty) take the execs lying entirely inside W.
 * Execs with hw_ns == 0 (unknown) are counted but left out of every hardware
 * figure.
 *
 * A device at a time, one pass over the execs, in order, gathers that
 * device's: each exec's interval goes to its track's slot of one array (a
 * counting sort by track), its hardware figures to its track's sums, and
 * its penalty to the device's. Each track's intervals are then merged in
 * place (one stream comes in time order and needs no sort), and the
 * device's busy intervals are the union of its tracks' merged runs (a
 * k-way merge, no sort). Its bubbles are kept compactly (gaps.c). A device at
 * a time, so that the intervals and penalties held are those of the
 * largest device, not of every exec: this step runs beside the stage step
 * (beside.c), and its scratch, added to that step's, made the build's peak
 * (docs/analysis.md, "Memory").
 *
 * A host device's busy time also holds the partition and merge spans on
 * its threads: that is host CPU work too, and without it a data-parallel
 * stage's host thread looked idle (and full of bubbles) while it split and
 * joined the batches. They are intervals only, not execs. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

/* Sums over the execs inside W of one device or track; above / same count
 * the execs whose hw_ns exceeds / equals their wall, host the host execs. */
typedef struct hw_sums {
    uint64_t execs, unknown, above, same, host;
    int64_t hw, xfer, wall_known;
} hw_sums;

/* The execs grouped by track, device-major: device d's groups are
 * device_at[d] .. device_at[d+1], and while device d is read (base =
 * at[device_at[d]]), track group g's intervals are spans[at[g] - base ..
 * + n[g]) (merged: the first merged[g] of them), the device's penalties
 * (wall - hw of its execs inside W with known hw) pen[0 .. npen) and its
 * busy intervals busy (its one track's merged intervals, or their union in
 * spans2). */
typedef struct exec_groups {
    size_t *at, *n, *merged, *device_at;
    uint32_t *group_of, *track_of; /* track -> group, group -> track */
    hw_sums *sums;                 /* per group */
    an_span *spans, *spans2;       /* room for the largest device's execs */
    int64_t *pen;
    size_t npen;
    an_run busy;
    size_t ngroups;
} exec_groups;

static void groups_free(exec_groups *g) {
    free(g->at), free(g->n), free(g->merged), free(g->device_at);
    free(g->group_of), free(g->track_of), free(g->sums);
}

static int groups_alloc(pp_report *r, size_t ntracks, exec_groups *g) {
    size_t nt = ntracks ? ntracks : 1;
    *g = (exec_groups){0};
    g->at = calloc(nt + 1, sizeof *g->at);
    g->n = calloc(nt, sizeof *g->n);
    g->merged = calloc(nt, sizeof *g->merged);
    g->device_at = malloc((r->ndevices + 1) * sizeof *g->device_at);
    g->group_of = malloc(nt * sizeof *g->group_of);
    g->track_of = malloc(nt * sizeof *g->track_of);
    g->sums = calloc(nt, sizeof *g->sums);
    return g->at && g->n && g->merged && g->device_at && g->group_of && g->track_of && g->sums
               ? PP_OK
               : PP_ENOMEM;
}

/* Room for the intervals and penalties of the largest device's execs. */
static int groups_room(pp_report *r, exec_groups *g) {
    size_t most = 1;
    for (uint32_t d = 0; d < r->ndevices; d++) {
        size_t n = g->at[g->device_at[d + 1]] - g->at[g->device_at[d]];
        most = n > most ? n : most;
    }
    g->spans = an_buf_get(&r->spans, most * sizeof *g->spans);
    g->spans2 = an_buf_get(&r->spans2, most * sizeof *g->spans2); /* touched by unions only */
    g->pen = an_buf_get(&r->index, most * sizeof *g->pen);
    return g->spans && g->spans2 && g->pen ? PP_OK : PP_ENOMEM;
}

/* Whether device d has host execs (its tracks are host threads), for each
 * device; NULL on no memory. */
static uint8_t *host_devices(const pp_report *r) {
    uint8_t *host = calloc(r->ndevices + 1, 1);
    for (size_t i = r->nreal; host && i < r->nexecs; i++)
        host[an_exec_device(r, &r->execs[i])] = 1;
    return host;
}

/* The device whose busy time host span h adds to: a partition or merge on
 * a thread of a host device; AN_NONE for any other. */
static uint32_t bracket_device(const pp_report *r, const uint8_t *host, const an_host *h) {
    uint8_t role = an_host_role(h);
    if (role != PP_ROLE_PARTITION && role != PP_ROLE_MERGE)
        return AN_NONE;
    uint32_t d = r->track_device[pp_cols_track(&r->c, h->event)];
    return d != AN_NONE && host[d] ? d : AN_NONE;
}

static size_t brackets_count(const pp_report *r, const uint8_t *host) {
    size_t n = 0;
    for (size_t i = 0; i < r->nhost; i++)
        n += bracket_device(r, host, &r->host[i]) != AN_NONE;
    return n;
}

/* The groups in device-major order and the start of each group's slot. */
static void groups_order(const pp_report *r, const uint8_t *host, size_t ntracks,
                         exec_groups *g) {
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
        g->at[g->group_of[an_exec_track(r, &r->execs[i])] + 1]++;
    for (size_t i = 0; i < r->nhost; i++)
        if (bracket_device(r, host, &r->host[i]) != AN_NONE)
            g->at[g->group_of[pp_cols_track(&r->c, r->host[i].event)] + 1]++;
    for (size_t k = 0; k < g->ngroups; k++)
        g->at[k + 1] += g->at[k];
}

/* Device d's pass over the execs: intervals, sums and penalties; then the
 * intervals of the partitions and merges on its threads (a host device). */
static void groups_fill(const pp_report *r, const uint8_t *host, exec_groups *g, uint32_t d) {
    const pp_cols *c = &r->c;
    size_t base = g->at[g->device_at[d]];
    g->npen = 0;
    for (size_t i = 0; host[d] && i < r->nhost; i++) {
        const an_host *h = &r->host[i];
        if (bracket_device(r, host, h) != d)
            continue;
        size_t k = g->group_of[pp_cols_track(c, h->event)];
        int64_t start = pp_cols_ts(c, h->event);
        g->spans[g->at[k] - base + g->n[k]++] = (an_span){start, start + pp_cols_dur(c, h->event)};
    }
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        uint32_t track = an_exec_track(r, x);
        if (r->track_device[track] != d)
            continue;
        size_t k = g->group_of[track];
        int64_t start = pp_cols_ts(c, x->event), wall = pp_cols_dur(c, x->event);
        g->spans[g->at[k] - base + g->n[k]++] = (an_span){start, start + wall};
        if (!an_exec_inside(r, x))
            continue;
        hw_sums *s = &g->sums[k];
        s->execs++;
        if (an_exec_is_host(r, x)) { /* host work has no hardware time: not "unknown" either */
            s->host++;
            continue;
        }
        int64_t hw = an_hw_of(pp_cols_hw(c, x->event));
        if (hw == 0) {
            s->unknown++;
            continue;
        }
        s->above += hw > wall;
        s->same += hw == wall;
        s->hw = an_sat_add(s->hw, hw);
        s->xfer = an_sat_add(s->xfer, an_hw_of(pp_cols_xfer(c, x->event)));
        s->wall_known = an_sat_add(s->wall_known, wall);
        g->pen[g->npen++] = wall - hw; /* both in [0, INT64_MAX]: no overflow */
    }
}

static void sums_add(hw_sums *to, const hw_sums *s) {
    to->execs += s->execs, to->unknown += s->unknown;
    to->above += s->above, to->same += s->same, to->host += s->host;
    to->hw = an_sat_add(to->hw, s->hw);
    to->xfer = an_sat_add(to->xfer, s->xfer);
    to->wall_known = an_sat_add(to->wall_known, s->wall_known);
}

/* Track group k's figures (its device's from `base` on: groups_fill); its
 * intervals are merged in place. */
static int track_fill(pp_report *r, exec_groups *g, size_t k, size_t base, pp_track_stats *t) {
    const int64_t w0 = r->window.start_ns, w1 = r->window.end_ns;
    an_span *spans = g->spans + g->at[k] - base;
    int rc = an_intervals_merge(r, spans, g->n[k], w0, w1, &g->merged[k], &t->busy_ns);
    if (rc == PP_OK)
        rc = an_gaps_summarize(r, spans, g->merged[k], w0, w1, &t->bubbles);
    if (rc != PP_OK)
        return rc;
    t->execs = g->sums[k].execs;
    t->hw_unknown = g->sums[k].unknown;
    t->hw_util = an_ratio(g->sums[k].hw, w1 - w0);
    char device[160];
    an_device_label(r, t->device, device, sizeof device);
    const pp_track_info *info = pp_model_track(r->m, t->track);
    t->name = an_strdupf("%s/%s", device, pp_model_string(r->m, info->name));
    return t->name ? PP_OK : PP_ENOMEM;
}

/* The device's tracks first (stats_of_track maps a model track to its row
 * of r->tracks), then the device from what they gathered; runs is room for
 * one run per group. */
static int device_fill(pp_report *r, exec_groups *g, uint32_t d, const size_t *stats_of_track,
                       an_run *runs) {
    const int64_t w0 = r->window.start_ns, w1 = r->window.end_ns;
    size_t first = g->device_at[d], last = g->device_at[d + 1], base = g->at[first];
    pp_device_stats *dev = &r->devices[d];
    hw_sums sums = {0};
    double util = 0;
    int rc = PP_OK;
    for (size_t k = first; rc == PP_OK && k < last; k++) {
        pp_track_stats *t = &r->tracks[stats_of_track[g->track_of[k]]];
        rc = track_fill(r, g, k, base, t);
        sums_add(&sums, &g->sums[k]);
        if (t->execs > 0) /* HW utilization: plain mean over tracks with execs in W */
            util += t->hw_util, dev->tracks++;
        an_span *spans = g->spans + g->at[k] - base;
        runs[k - first] = (an_run){spans, spans + g->merged[k]};
    }
    if (rc == PP_OK)
        rc = an_summary(r, g->pen, g->npen, &dev->penalty);
    const an_span *busy = NULL;
    size_t merged = 0;
    if (rc == PP_OK && last - first == 1) { /* one track: its intervals, busy time, bubbles */
        busy = runs[0].at, merged = g->merged[first];
        dev->busy_ns = r->tracks[stats_of_track[g->track_of[first]]].busy_ns;
        dev->bubbles = r->tracks[stats_of_track[g->track_of[first]]].bubbles;
    } else if (rc == PP_OK) {
        an_span *out = g->spans2;
        an_runs_union(runs, last - first, out, &merged, &dev->busy_ns);
        rc = an_gaps_summarize(r, out, merged, w0, w1, &dev->bubbles);
        busy = out;
    }
    if (rc != PP_OK)
        return rc;
    an_gaps_keep(r, d, busy, merged);
    g->busy = (an_run){busy, busy + merged};
    dev->hw_util = dev->tracks ? util / dev->tracks : 0.0;
    dev->idle_ns = (w1 - w0) - dev->busy_ns;
    dev->wall_util = an_ratio(dev->busy_ns, w1 - w0);
    dev->execs = sums.execs;
    dev->hw_unknown = sums.unknown;
    dev->hw_above_wall = sums.above;
    uint64_t known = sums.execs - sums.unknown - sums.host;
    dev->hw_quality |= (sums.above ? PP_HW_ABOVE_WALL : 0u) |
                       (known > 0 && sums.same == known ? PP_HW_IS_WALL : 0u) |
                       (sums.host ? PP_HW_HOST : 0u);
    dev->hw_eff = an_ratio(sums.hw, sums.wall_known);
    dev->transfer_share = an_ratio(sums.xfer, sums.hw);
    dev->penalty_pct_wall = 100.0 * an_ratio(dev->penalty.total, sums.wall_known);
    return PP_OK;
}

int an_tracks_list(pp_report *r, pp_error *err) {
    size_t ntracks = pp_model_track_count(r->m);
    r->tracks = calloc(ntracks ? ntracks : 1, sizeof *r->tracks);
    if (!r->tracks)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    for (uint32_t t = 0; t < ntracks; t++) /* rows in track order */
        if (r->track_device[t] != AN_NONE)
            r->tracks[r->ntracks++] = (pp_track_stats){.track = t, .device = r->track_device[t]};
    return PP_OK;
}

int an_devices_compute(pp_report *r, pp_error *err) {
    size_t ntracks = pp_model_track_count(r->m);
    exec_groups g = {0};
    size_t *stats_of_track = malloc((ntracks ? ntracks : 1) * sizeof *stats_of_track);
    an_run *runs = malloc((ntracks ? ntracks : 1) * sizeof *runs);
    uint8_t *host = host_devices(r);
    /* a bubble fewer than intervals, 2 varints each */
    r->gap_bytes = host ? an_alloc(r->nexecs + brackets_count(r, host), 20) : NULL;
    r->gap_at = calloc(r->ndevices + 1, sizeof *r->gap_at);
    int rc = stats_of_track && runs && r->gap_bytes && r->gap_at
                 ? groups_alloc(r, ntracks, &g)
                 : PP_ENOMEM;
    if (rc == PP_OK) {
        groups_order(r, host, ntracks, &g);
        rc = groups_room(r, &g);
        for (size_t i = 0; i < r->ntracks; i++)
            stats_of_track[r->tracks[i].track] = i;
    }
    for (uint32_t d = 0; rc == PP_OK && d < r->ndevices; d++) {
        groups_fill(r, host, &g, d);
        rc = device_fill(r, &g, d, stats_of_track, runs);
    }
    groups_free(&g);
    free(stats_of_track), free(runs), free(host);
    uint8_t *shrunk = rc == PP_OK ? realloc(r->gap_bytes, r->gap_at[r->ndevices] + 1) : NULL;
    r->gap_bytes = shrunk ? shrunk : r->gap_bytes; /* a failed shrink keeps the larger one */
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
