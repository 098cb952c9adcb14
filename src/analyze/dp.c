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

#include "analyze/report.h"
#include "core/error.h"

/* The rows of one stage: rows[idx[k]] for k < n. */
typedef struct dp_rows {
    const an_dp_row *rows;
    const size_t *idx;
    size_t n;
} dp_rows;

static const an_dp_row *row_at(const dp_rows *g, size_t k) {
    return &g->rows[g->idx[k]];
}

/* The row of model track t in the report's track table. */
static uint32_t track_row(const pp_report *r, uint32_t t) {
    for (size_t i = 0; i < r->ntracks; i++)
        if (r->tracks[i].track == t)
            return (uint32_t)i;
    return UINT32_MAX;
}

static int dp_devices(pp_report *r, const dp_rows *g, pp_dp_stats *st) {
    size_t base = 0;
    for (size_t i = 0; i < r->ndp; i++)
        base += r->dp[i].ndevices;
    for (size_t k = 0; k < g->n; k++) {
        const an_dp_row *row = row_at(g, k);
        for (size_t w = row->first; w < row->first + row->ndev; w++) {
            const an_dp_wall *dw = &r->dp_walls[w];
            uint32_t track = dw->track == AN_NONE ? UINT32_MAX : track_row(r, dw->track);
            size_t d = 0;
            while (d < st->ndevices && (r->dp_devices[base + d].device != dw->device ||
                                        r->dp_devices[base + d].track != track))
                d++;
            if (d == st->ndevices) {
                pp_dp_device *grown = realloc(r->dp_devices, (base + d + 1) * sizeof *grown);
                if (!grown)
                    return PP_ENOMEM;
                r->dp_devices = grown;
                grown[base + d] = (pp_dp_device){.device = dw->device, .track = track,
                                                 .share_recorded = 1};
                st->ndevices++;
            }
            r->dp_devices[base + d].batches++;
            r->dp_devices[base + d].wall_ns += dw->wall_ns;
            r->dp_devices[base + d].share += dw->share; /* summed; averaged below */
            r->dp_devices[base + d].share_recorded &= dw->recorded;
        }
    }
    double rates = 0;
    int recurring = 1; /* every part ran every batch: a split between them applies */
    for (size_t d = 0; d < st->ndevices; d++) {
        pp_dp_device *dd = &r->dp_devices[base + d];
        dd->rate = dd->wall_ns > 0 ? dd->share * 1e9 / (double)dd->wall_ns : 0.0;
        dd->share /= (double)dd->batches;
        rates += dd->rate;
        recurring &= dd->batches == g->n;
    }
    for (size_t d = 0; d < st->ndevices; d++)
        r->dp_devices[base + d].suggested_share =
            rates > 0 && recurring ? r->dp_devices[base + d].rate / rates : 0;
    return PP_OK;
}

typedef enum dp_part { DP_PARTITION, DP_MAX_DEVICE, DP_MERGE, DP_FORMULA, DP_MEASURED } dp_part;

static int64_t dp_value(const an_dp_row *row, dp_part part) {
    switch (part) {
    case DP_PARTITION: return row->partition_ns;
    case DP_MAX_DEVICE: return row->max_device_ns;
    case DP_MERGE: return row->merge_ns;
    case DP_FORMULA: return row->partition_ns + row->max_device_ns + row->merge_ns;
    case DP_MEASURED: return row->measured_ns;
    }
    return -1;
}

/* Summary of one part over the rows; -1 (a missing measured span) is left out. */
static int dp_summary(pp_report *r, const dp_rows *g, dp_part part, int64_t *vals,
                      pp_summary *out) {
    size_t m = 0;
    for (size_t k = 0; k < g->n; k++)
        if (dp_value(row_at(g, k), part) >= 0)
            vals[m++] = dp_value(row_at(g, k), part);
    return an_summary(r, vals, m, out);
}

static int dp_stage(pp_report *r, const dp_rows *g, int64_t *vals) {
    pp_dp_stats *st = &r->dp[r->ndp];
    *st = (pp_dp_stats){.stage = row_at(g, 0)->stage, .batches = g->n};
    int64_t sum_max = 0;
    double sum_mean = 0;
    for (size_t k = 0; k < g->n; k++) {
        const an_dp_row *row = row_at(g, k);
        int64_t walls = 0;
        for (size_t w = row->first; w < row->first + row->ndev; w++)
            walls += r->dp_walls[w].wall_ns;
        sum_max += row->max_device_ns;
        sum_mean += (double)walls / (double)row->ndev;
    }
    st->imbalance = sum_mean > 0 ? (double)sum_max / sum_mean : 1.0;
    pp_summary *parts[] = {&st->partition, &st->max_device, &st->merge, &st->formula,
                           &st->measured};
    int rc = PP_OK;
    for (int p = DP_PARTITION; rc == PP_OK && p <= DP_MEASURED; p++)
        rc = dp_summary(r, g, (dp_part)p, vals, parts[p]);
    if (rc == PP_OK)
        rc = dp_devices(r, g, st);
    if (rc == PP_OK)
        r->ndp++;
    return rc;
}

/* The rows come in (batch, stage) order; each data-parallel stage takes
 * its own, in stage order. */
int an_dp_compute(pp_report *r, pp_error *err) {
    if (r->ndp_rows == 0)
        return PP_OK;
    r->dp = calloc(r->nstages, sizeof *r->dp);
    int64_t *vals = an_buf_get(&r->values, r->ndp_rows * sizeof *vals);
    size_t *idx = an_buf_get(&r->index, r->ndp_rows * sizeof *idx);
    int rc = r->dp && vals && idx ? PP_OK : PP_ENOMEM;
    for (uint32_t s = 0; rc == PP_OK && s < r->nstages; s++) {
        dp_rows g = {r->dp_rows, idx, 0};
        for (size_t i = 0; i < r->ndp_rows; i++)
            if (r->dp_rows[i].stage == s)
                idx[g.n++] = i;
        if (g.n > 0)
            rc = dp_stage(r, &g, vals);
    }
    /* devices[] pointers are set last: dp_devices may move while it grows */
    for (size_t i = 0, base = 0; rc == PP_OK && i < r->ndp; base += r->dp[i++].ndevices)
        r->dp[i].devices = r->dp_devices + base;
    free(r->dp_rows), free(r->dp_walls); /* their last reader: freed before the later steps */
    r->dp_rows = NULL, r->dp_walls = NULL;
    r->ndp_rows = r->ndp_walls = 0;
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
