/* cycles.c — cycle latency, bottleneck, completeness, end-to-end latency and
 * throughput per batch (docs/architecture.md §4).
 *
 * A batch is complete when it has a stage time for every stage that has one
 * for any batch in W; incomplete batches keep their cycle latency, and the
 * complete-only figures are given beside. */
#include <stdlib.h>

#include "analyze/report.h"
#include "core/error.h"

/* Widens [first[b], last[b]) of batch index b of `batch` by [start, end). */
static inline void widen(const pp_report *r, int64_t batch, int64_t start, int64_t end,
                         int64_t *first, int64_t *last) {
    size_t b = an_batch_index(&r->bmap, batch);
    if (b == AN_NO_BATCH)
        return;
    first[b] = start < first[b] ? start : first[b];
    last[b] = end > last[b] ? end : last[b];
}

/* e2e(b) = last end - first start of every event of batch b inside W: the
 * events that carry it, and those the user's patterns gave it (execs
 * labeled through their launch, host stage spans, partitions, merges and
 * the batch spans such as ProfilerStep#N). first and last are indexed by
 * the stage step's batch index; those of batches without stage times are
 * filled but not read. */
static void end_to_end(pp_report *r, int64_t *first, int64_t *last) {
    const pp_cols *c = &r->c;
    for (size_t i = 0; i < r->bmap.count; i++)
        first[i] = INT64_MAX, last[i] = INT64_MIN;
    for (size_t i = 0; i < c->count; i++)
        if (pp_cols_batch(c, i) >= 0 && an_event_inside(r, i))
            widen(r, pp_cols_batch(c, i), pp_cols_ts(c, i), pp_cols_end(c, i), first, last);
    for (size_t i = 0; r->exec_batch && i < r->nexecs; i++) { /* else every batch is c's */
        const an_exec *x = &r->execs[i];
        int64_t batch = r->exec_batch[i];
        if (an_exec_inside(r, x) && batch >= 0 && batch != pp_cols_batch(c, x->event))
            widen(r, batch, an_start(r, x->event), an_end(r, x->event), first, last);
    }
    for (size_t i = 0; i < r->nhost; i++) {
        const an_host *h = &r->host[i];
        if (an_host_inside(r, h) && h->batch != pp_cols_batch(c, h->event))
            widen(r, h->batch, an_start(r, h->event), an_end(r, h->event), first, last);
    }
}

static double per_second(int64_t count, int64_t ns) {
    return ns > 0 ? (double)count * 1e9 / (double)ns : 0.0;
}

pp_batch_stats an_batch_stats(const pp_report *r, size_t i) {
    size_t first = r->batch_time[i], end = r->batch_time[i + 1];
    pp_batch_stats b = {.batch = an_batch_number(&r->bmap, r->times[first].batch),
                        .cycle_ns = -1, .e2e_ns = r->batch_e2e[i]};
    /* stage order within a batch: strict > keeps the upstream stage on ties */
    for (size_t t = first; t < end; t++) {
        if (r->times[t].time_ns > b.cycle_ns) {
            b.cycle_ns = r->times[t].time_ns;
            b.bottleneck = r->times[t].stage;
        }
        b.stages++;
    }
    b.complete = b.stages == r->stages_timed;
    return b;
}

/* One batch per run of times of one batch, in (batch, stage) order. */
static void batch_rows(pp_report *r) {
    for (size_t s = 0; s < r->nstages; s++)
        r->stages_timed += r->stages[s].time.n > 0;
    for (size_t i = 0; i < r->ntimes; i++)
        if (i == 0 || r->times[i].batch != r->times[i - 1].batch)
            r->batch_time[r->nbatches++] = (uint32_t)i;
    r->batch_time[r->nbatches] = (uint32_t)r->ntimes;
}

int an_cycles_compute(pp_report *r, pp_error *err) {
    size_t nb = r->bmap.count;
    r->batch_time = an_alloc(nb + 1, sizeof *r->batch_time);
    r->batch_e2e = an_alloc(nb ? nb : 1, sizeof *r->batch_e2e);
    int64_t *vals = nb <= SIZE_MAX / (3 * sizeof *vals)
                        ? an_buf_get(&r->values, 3 * nb * sizeof *vals)
                        : NULL;
    if (!r->batch_time || !r->batch_e2e || !vals)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    batch_rows(r);
    int64_t *first = vals + nb, *last = vals + 2 * nb;
    end_to_end(r, first, last);
    for (size_t i = 0; i < r->nbatches; i++) {
        size_t b = r->times[r->batch_time[i]].batch;
        r->batch_e2e[i] = last[b] - first[b];
    }
    size_t nc = 0;
    pp_cycle_stats *cy = &r->cycles;
    cy->batches = r->nbatches;
    int64_t *cycle = first; /* first and last are free again: every batch's cycle */
    for (size_t i = 0; i < r->nbatches; i++) {
        pp_batch_stats b = an_batch_stats(r, i);
        r->stages[b.bottleneck].bottleneck_count++;
        cycle[i] = b.cycle_ns;
        if (b.complete)
            vals[nc++] = b.cycle_ns;
    }
    cy->complete = nc;
    int rc = an_summary(r, vals, nc, &cy->cycle_complete);
    if (rc == PP_OK)
        rc = an_summary(r, cycle, r->nbatches, &cy->cycle);
    for (size_t i = 0; i < r->nbatches; i++)
        vals[i] = r->batch_e2e[i];
    if (rc == PP_OK)
        rc = an_summary(r, vals, r->nbatches, &cy->e2e);
    if (rc != PP_OK)
        return pp_set_error(err, rc, "out of memory");
    cy->throughput_bound = per_second((int64_t)cy->cycle.n, cy->cycle.total);
    cy->throughput_bound_complete = per_second((int64_t)cy->cycle_complete.n,
                                               cy->cycle_complete.total);
    cy->throughput_measured =
        per_second((int64_t)cy->complete, r->window.end_ns - r->window.start_ns);
    return PP_OK;
}
