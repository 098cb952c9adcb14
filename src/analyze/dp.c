/* dp.c — the breakdown of data-parallel stages (DESIGN.md §4).
 *
 * Per stage: partition, max device wall, merge, the formula stage time and
 * the measured partition start .. merge end; imbalance = Σ max device wall /
 * Σ mean device wall over its batches (1.0 = perfectly even); and the split
 * that would balance it: each device's measured rate is the share of the work
 * it got per second of its wall, and the balanced split is proportional to
 * the rates (the work a device can do in the same time). */
#include <stdlib.h>

#include "analyze/report.h"
#include "core/error.h"

static int dp_devices(pp_report *r, const an_dp_row *rows, size_t n, pp_dp_stats *st) {
    size_t base = 0;
    for (size_t i = 0; i < r->ndp; i++)
        base += r->dp[i].ndevices;
    for (size_t k = 0; k < n; k++) {
        for (size_t w = rows[k].first; w < rows[k].first + rows[k].ndev; w++) {
            const an_dp_wall *dw = &r->dp_walls[w];
            size_t d = 0;
            while (d < st->ndevices && r->dp_devices[base + d].device != dw->device)
                d++;
            if (d == st->ndevices) {
                pp_dp_device *g = realloc(r->dp_devices, (base + d + 1) * sizeof *g);
                if (!g)
                    return PP_ENOMEM;
                r->dp_devices = g;
                g[base + d] = (pp_dp_device){.device = dw->device};
                st->ndevices++;
            }
            r->dp_devices[base + d].wall_ns += dw->wall_ns;
            r->dp_devices[base + d].share += dw->share; /* summed; averaged below */
        }
    }
    double rates = 0;
    for (size_t d = 0; d < st->ndevices; d++) {
        pp_dp_device *dd = &r->dp_devices[base + d];
        dd->rate = dd->wall_ns > 0 ? dd->share * 1e9 / (double)dd->wall_ns : 0.0;
        dd->share /= (double)n;
        rates += dd->rate;
    }
    for (size_t d = 0; d < st->ndevices; d++)
        r->dp_devices[base + d].suggested_share = rates > 0 ? r->dp_devices[base + d].rate / rates : 0;
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
static void dp_summary(const an_dp_row *rows, size_t n, dp_part part, int64_t *vals,
                       pp_summary *out) {
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (dp_value(&rows[k], part) >= 0)
            vals[m++] = dp_value(&rows[k], part);
    pp_summary_compute(vals, m, out);
}

static int dp_stage(pp_report *r, const an_dp_row *rows, size_t n, int64_t *vals) {
    pp_dp_stats *st = &r->dp[r->ndp];
    *st = (pp_dp_stats){.stage = rows[0].stage, .batches = n};
    int64_t sum_max = 0;
    double sum_mean = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t walls = 0;
        for (size_t w = rows[k].first; w < rows[k].first + rows[k].ndev; w++)
            walls += r->dp_walls[w].wall_ns;
        sum_max += rows[k].max_device_ns;
        sum_mean += (double)walls / (double)rows[k].ndev;
    }
    st->imbalance = sum_mean > 0 ? (double)sum_max / sum_mean : 1.0;
    dp_summary(rows, n, DP_PARTITION, vals, &st->partition);
    dp_summary(rows, n, DP_MAX_DEVICE, vals, &st->max_device);
    dp_summary(rows, n, DP_MERGE, vals, &st->merge);
    dp_summary(rows, n, DP_FORMULA, vals, &st->formula);
    dp_summary(rows, n, DP_MEASURED, vals, &st->measured);
    int rc = dp_devices(r, rows, n, st);
    if (rc == PP_OK)
        r->ndp++;
    return rc;
}

int an_dp_compute(pp_report *r, const pp_model *m, pp_error *err) {
    (void)m;
    if (r->ndp_rows == 0)
        return PP_OK;
    r->dp = calloc(r->nstages, sizeof *r->dp);
    int64_t *vals = malloc(r->ndp_rows * sizeof *vals);
    int rc = r->dp && vals ? PP_OK : PP_ENOMEM;
    for (size_t i = 0; rc == PP_OK && i < r->ndp_rows;) {
        size_t j = i;
        while (j < r->ndp_rows && r->dp_rows[j].stage == r->dp_rows[i].stage)
            j++;
        rc = dp_stage(r, r->dp_rows + i, j - i, vals);
        i = j;
    }
    free(vals);
    /* devices[] pointers are set last: dp_devices may move while it grows */
    for (size_t i = 0, base = 0; rc == PP_OK && i < r->ndp; base += r->dp[i++].ndevices)
        r->dp[i].devices = r->dp_devices + base;
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
