/* dp.c — the breakdown of data-parallel stages (docs/architecture.md §4).
 *
 * Per stage: partition, max device wall, merge, the formula stage time and
 * the measured partition start .. merge end; imbalance = Σ max device wall /
 * Σ mean device wall over its batches (1.0 = perfectly even); and the split
 * that would balance it: each device's measured rate is the share of the work
 * it got per second of its wall, and the balanced split is proportional to
 * the rates (the work a device can do in the same time). The share a device
 * got is what the runtime recorded on its execs (the configured split),
 * else an even split. When a stage's parts are tracks of one device (two
 * streams, two host threads), the same figures are given per track. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"
#include "core/grow.h"
#include "stats/stats.h"

/* The row of model track t in the report's track table. */
static uint32_t track_row(const pp_report *r, uint32_t t) {
    for (size_t i = 0; i < r->ntracks; i++)
        if (r->tracks[i].track == t)
            return (uint32_t)i;
    return UINT32_MAX;
}

int an_dp_part_add(pp_report *r, uint32_t s, uint32_t device, uint32_t track, int64_t wall,
                   double share, int recorded) {
    an_dp_sums *sums = &r->dp_sums[s];
    uint32_t row = track == AN_NONE ? UINT32_MAX : track_row(r, track);
    size_t d = 0;
    while (d < sums->nparts && (sums->parts[d].device != device || sums->parts[d].track != row))
        d++;
    if (d == sums->nparts) {
        if (pp_grow((void **)&sums->parts, &sums->cap, d, sizeof *sums->parts) != PP_OK)
            return PP_ENOMEM;
        sums->parts[d] = (pp_dp_device){.device = device, .track = row, .share_recorded = 1};
        sums->nparts++;
    }
    if (sums->nwalls == sums->wall_cap &&
        pp_grow((void **)&sums->walls, &sums->wall_cap, sums->nwalls, sizeof *sums->walls) != PP_OK)
        return PP_ENOMEM;
    sums->walls[sums->nwalls++] = (an_dp_wall){(uint32_t)d, wall};
    pp_dp_device *part = &sums->parts[d];
    part->batches++;
    part->wall_ns += wall;
    part->share += share; /* summed; averaged below */
    part->share_recorded &= recorded;
    return PP_OK;
}

/* The current batch's walls into the slowest counts and the pairwise
 * counts; a tie for the slowest counts for none. */
static int batch_compare(an_dp_sums *sums) {
    const an_dp_wall *w = sums->walls;
    size_t n = sums->nwalls, top = 0, ties = 0;
    for (size_t k = 1; k < n; k++)
        if (w[k].wall > w[top].wall)
            top = k, ties = 0;
        else if (w[k].wall == w[top].wall)
            ties++;
    if (n > 1 && ties == 0)
        sums->parts[w[top].part].slowest++;
    size_t dim = sums->nparts < AN_DP_PAIR_PARTS ? sums->nparts : AN_DP_PAIR_PARTS;
    if (dim > sums->dim) { /* grown: the counts move to their new rows */
        uint64_t *pair = calloc(dim * dim, sizeof *pair);
        if (!pair)
            return PP_ENOMEM;
        for (size_t a = 0; a < sums->dim; a++)
            for (size_t b = 0; b < sums->dim; b++)
                pair[a * dim + b] = sums->pair[a * sums->dim + b];
        free(sums->pair);
        sums->pair = pair, sums->dim = dim;
    }
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            if (w[a].part < dim && w[b].part < dim && w[a].wall > w[b].wall)
                sums->pair[w[a].part * dim + w[b].part]++;
    sums->nwalls = 0;
    return PP_OK;
}

int an_dp_batch_end(pp_report *r, uint32_t s, int64_t max_wall, double mean_wall) {
    an_dp_sums *sums = &r->dp_sums[s];
    if (batch_compare(sums) != PP_OK)
        return PP_ENOMEM;
    if (sums->nb == sums->bcap) {
        size_t cap = sums->bcap ? 2 * sums->bcap : 64;
        double *mx = realloc(sums->bmax, cap * sizeof *mx);
        if (mx)
            sums->bmax = mx;
        double *mn = mx ? realloc(sums->bmean, cap * sizeof *mn) : NULL;
        if (!mn)
            return PP_ENOMEM;
        sums->bmean = mn;
        sums->bcap = cap;
    }
    sums->bmax[sums->nb] = (double)max_wall;
    sums->bmean[sums->nb++] = mean_wall;
    return PP_OK;
}

void an_dp_sums_free(pp_report *r) {
    for (size_t s = 0; r->dp_sums && s < r->nstages; s++) {
        free(r->dp_sums[s].parts);
        free(r->dp_sums[s].walls);
        free(r->dp_sums[s].pair);
        free(r->dp_sums[s].bmax);
        free(r->dp_sums[s].bmean);
    }
    free(r->dp_sums);
    r->dp_sums = NULL;
}

/* The sign test of the part slowest on average (a) against the fastest
 * (z): in how many of the batches both ran, without a tie, a was the
 * slower; Bonferroni over the k(k-1)/2 pairs the two were chosen from. */
static double parts_sign_p(const an_dp_sums *sums, const pp_dp_device *parts, size_t k) {
    if (k < 2)
        return 1.0;
    uint32_t a = 0, z = 0;
    for (uint32_t d = 1; d < k; d++) {
        double mean = (double)parts[d].wall_ns / (double)parts[d].batches;
        if (mean > (double)parts[a].wall_ns / (double)parts[a].batches)
            a = d;
        if (mean < (double)parts[z].wall_ns / (double)parts[z].batches)
            z = d;
    }
    if (a >= sums->dim || z >= sums->dim) /* beyond the parts compared pairwise */
        return 1.0;
    uint64_t slower = sums->pair[a * sums->dim + z];
    uint64_t n = slower + sums->pair[z * sums->dim + a];
    double p = pp_sign_test(slower, n) * (double)(k * (k - 1) / 2);
    return p < 1.0 ? p : 1.0;
}

/* The imbalance's interval across batches: Σ max / Σ mean of resamples. */
static int imbalance_interval(const an_dp_sums *sums, pp_dp_stats *st) {
    pp_interval_3 iv;
    int rc = an_ratio_interval(sums->bmax, sums->bmean, sums->nb, &iv);
    st->imbalance_lo = sums->nb < 2 ? st->imbalance : iv.lo;
    st->imbalance_hi = sums->nb < 2 ? st->imbalance : iv.hi;
    return rc;
}

/* The stage's parts, from its sums, with their rates and the split that
 * would balance them. */
static int dp_devices(pp_report *r, const an_dp_sums *sums, size_t nbatches, pp_dp_stats *st) {
    size_t base = 0;
    for (size_t i = 0; i < r->ndp; i++)
        base += r->dp[i].ndevices;
    pp_dp_device *grown = realloc(r->dp_devices, (base + sums->nparts + 1) * sizeof *grown);
    if (!grown)
        return PP_ENOMEM;
    r->dp_devices = grown;
    memcpy(grown + base, sums->parts, sums->nparts * sizeof *grown);
    st->ndevices = sums->nparts;
    double rates = 0;
    int recurring = 1; /* every part ran every batch: a split between them applies */
    for (size_t d = 0; d < st->ndevices; d++) {
        pp_dp_device *dd = &r->dp_devices[base + d];
        dd->rate = dd->wall_ns > 0 ? dd->share * 1e9 / (double)dd->wall_ns : 0.0;
        dd->share /= (double)dd->batches;
        rates += dd->rate;
        recurring &= dd->batches == nbatches;
    }
    for (size_t d = 0; d < st->ndevices; d++)
        r->dp_devices[base + d].suggested_share =
            rates > 0 && recurring ? r->dp_devices[base + d].rate / rates : 0;
    st->parts_p = parts_sign_p(sums, r->dp_devices + base, st->ndevices);
    return imbalance_interval(sums, st);
}

typedef enum dp_part { DP_PARTITION, DP_MAX_DEVICE, DP_MERGE, DP_FORMULA, DP_MEASURED } dp_part;

/* A data-parallel row and its stage time. */
typedef struct dp_ref {
    uint32_t time, row;
} dp_ref;

static int64_t dp_value(const pp_report *r, dp_ref g, dp_part part) {
    const an_dp_row *row = &r->dp_rows[g.row];
    int64_t time = r->times[g.time].time_ns;
    switch (part) {
    case DP_PARTITION: return row->partition_ns;
    case DP_MAX_DEVICE: return time - row->partition_ns - row->merge_ns;
    case DP_MERGE: return row->merge_ns;
    case DP_FORMULA: return time;
    case DP_MEASURED: return r->dp_measured[g.row];
    }
    return -1;
}

/* Summary of one part over a stage's n rows; -1 (a missing measured span)
 * is left out. */
static int dp_summary(pp_report *r, const dp_ref *g, size_t n, dp_part part, int64_t *vals,
                      pp_summary *out) {
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t v = dp_value(r, g[k], part);
        if (v >= 0)
            vals[m++] = v;
    }
    return an_summary(r, vals, m, out);
}

static int dp_stage(pp_report *r, uint32_t s, const dp_ref *g, size_t n, int64_t *vals) {
    pp_dp_stats *st = &r->dp[r->ndp];
    const an_dp_sums *sums = &r->dp_sums[s];
    *st = (pp_dp_stats){.stage = s, .batches = n};
    st->imbalance = sums->sum_mean > 0 ? (double)sums->sum_max / sums->sum_mean : 1.0;
    pp_summary *parts[] = {&st->partition, &st->max_device, &st->merge, &st->formula,
                           &st->measured};
    int rc = PP_OK;
    for (int p = DP_PARTITION; rc == PP_OK && p <= DP_MEASURED; p++)
        rc = dp_summary(r, g, n, (dp_part)p, vals, parts[p]);
    if (rc == PP_OK)
        rc = dp_devices(r, sums, n, st);
    if (rc == PP_OK)
        r->ndp++;
    return rc;
}

/* The rows are those of the marked times, in (batch, stage) order; a
 * counting sort by stage (the stage step counted each stage's) gives each
 * data-parallel stage its own, in stage order. Row and time indexes fit 32
 * bits: the stage step refers to its items with 32 bits. */
int an_dp_compute(pp_report *r, pp_error *err) {
    if (r->ndp_rows == 0)
        return PP_OK;
    r->dp = calloc(r->nstages, sizeof *r->dp);
    size_t *at = calloc(r->nstages + 1, sizeof *at);
    int64_t *vals = an_buf_get(&r->values, r->ndp_rows * sizeof *vals);
    dp_ref *g = an_buf_get(&r->index, r->ndp_rows * sizeof *g);
    int rc = r->dp && at && vals && g ? PP_OK : PP_ENOMEM;
    for (size_t s = 0; rc == PP_OK && s < r->nstages; s++)
        at[s + 1] = at[s] + r->dp_sums[s].rows;
    size_t k = 0; /* the marked times in order, a word of marks at a time */
    for (size_t w = 0; rc == PP_OK && w < (r->ntimes + 63) / 64; w++)
        for (uint64_t bits = r->dp_time[w]; bits; bits &= bits - 1) {
            size_t t = 64 * w + (size_t)__builtin_ctzll(bits);
            g[at[r->times[t].stage]++] = (dp_ref){(uint32_t)t, (uint32_t)k++}; /* at[s]: cursor */
        }
    for (uint32_t s = 0; rc == PP_OK && s < r->nstages; s++) { /* at[s] is now its end */
        size_t first = s == 0 ? 0 : at[s - 1];
        if (at[s] > first)
            rc = dp_stage(r, s, g + first, at[s] - first, vals);
    }
    free(at);
    /* devices[] pointers are set last: dp_devices may move while it grows */
    for (size_t i = 0, base = 0; rc == PP_OK && i < r->ndp; base += r->dp[i++].ndevices)
        r->dp[i].devices = r->dp_devices + base;
    free(r->dp_rows); /* their last reader: freed before the later steps */
    r->dp_rows = NULL;
    r->ndp_rows = 0;
    an_dp_sums_free(r);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
