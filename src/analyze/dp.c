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
    pp_dp_device *part = &sums->parts[d];
    part->batches++;
    part->wall_ns += wall;
    part->share += share; /* summed; averaged below */
    part->share_recorded &= recorded;
    return PP_OK;
}

void an_dp_sums_free(pp_report *r) {
    for (size_t s = 0; r->dp_sums && s < r->nstages; s++)
        free(r->dp_sums[s].parts);
    free(r->dp_sums);
    r->dp_sums = NULL;
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
    return PP_OK;
}

typedef enum dp_part { DP_PARTITION, DP_MAX_DEVICE, DP_MERGE, DP_FORMULA, DP_MEASURED } dp_part;

static int64_t dp_value(const an_dp_row *row, const pp_stage_time *t, dp_part part) {
    switch (part) {
    case DP_PARTITION: return row->partition_ns;
    case DP_MAX_DEVICE: return t->time_ns - row->partition_ns - row->merge_ns;
    case DP_MERGE: return row->merge_ns;
    case DP_FORMULA: return t->time_ns;
    case DP_MEASURED: return t->measured_ns;
    }
    return -1;
}

/* Summaries of one part, stage by stage: the rows' values gathered by
 * stage (at[s] .. at[s+1] is stage s's room in vals), -1 (a missing
 * measured span) left out. slot[s] is stage s's place in r->dp. */
static int dp_part_summaries(pp_report *r, dp_part part, const size_t *at, const size_t *slot,
                             int64_t *vals, size_t *cursor) {
    memcpy(cursor, at, r->nstages * sizeof *cursor);
    for (size_t t = 0, k = 0; t < r->ntimes; t++) {
        if (!an_dp_time(r->dp_time, t))
            continue;
        int64_t v = dp_value(&r->dp_rows[k++], &r->times[t], part);
        if (v >= 0)
            vals[cursor[r->times[t].stage]++] = v;
    }
    int rc = PP_OK;
    for (size_t s = 0; rc == PP_OK && s < r->nstages; s++) {
        if (at[s + 1] == at[s])
            continue;
        pp_dp_stats *st = &r->dp[slot[s]];
        pp_summary *parts[] = {&st->partition, &st->max_device, &st->merge, &st->formula,
                               &st->measured};
        rc = an_summary(r, vals + at[s], cursor[s] - at[s], parts[part]);
    }
    return rc;
}

/* The data-parallel stages, in stage order: their rows (counted by stage
 * from the marked times), the summaries of each part, the imbalance and
 * the parts' sums the stage step gathered. */
int an_dp_compute(pp_report *r, pp_error *err) {
    if (r->ndp_rows == 0)
        return PP_OK;
    size_t ns = r->nstages;
    r->dp = calloc(ns, sizeof *r->dp);
    size_t *at = calloc(3 * ns + 1, sizeof *at), *slot = at + ns + 1, *cursor = slot + ns;
    int64_t *vals = an_buf_get(&r->values, r->ndp_rows * sizeof *vals);
    int rc = r->dp && at && vals ? PP_OK : PP_ENOMEM;
    for (size_t t = 0; rc == PP_OK && t < r->ntimes; t++)
        at[r->times[t].stage + 1] += (size_t)an_dp_time(r->dp_time, t);
    for (size_t s = 0; rc == PP_OK && s < ns; s++) {
        size_t rows = at[s + 1];
        at[s + 1] += at[s];
        if (rows == 0)
            continue;
        slot[s] = r->ndp++;
        r->dp[slot[s]] = (pp_dp_stats){.stage = (uint32_t)s, .batches = rows};
    }
    for (int p = DP_PARTITION; rc == PP_OK && p <= DP_MEASURED; p++)
        rc = dp_part_summaries(r, (dp_part)p, at, slot, vals, cursor);
    for (size_t i = 0; rc == PP_OK && i < r->ndp; i++) {
        pp_dp_stats *st = &r->dp[i];
        const an_dp_sums *sums = &r->dp_sums[st->stage];
        st->imbalance = sums->sum_mean > 0 ? (double)sums->sum_max / sums->sum_mean : 1.0;
        rc = dp_devices(r, sums, st->batches, st);
    }
    free(at);
    /* devices[] pointers are set last: dp_devices may move while it grows */
    for (size_t i = 0, base = 0; rc == PP_OK && i < r->ndp; base += r->dp[i++].ndevices)
        r->dp[i].devices = r->dp_devices + base;
    free(r->dp_rows); /* their last reader: freed before the later steps */
    free(r->dp_time);
    r->dp_rows = NULL;
    r->dp_time = NULL;
    r->ndp_rows = 0;
    an_dp_sums_free(r);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
