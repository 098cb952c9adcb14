/* cycles.c — cycle latency, bottleneck, completeness, end-to-end latency and
 * throughput per batch (DESIGN.md §4).
 *
 * A batch is complete when it has a stage time for every stage that has one
 * for any batch in W; incomplete batches keep their cycle latency, and the
 * complete-only figures are given beside. */
#include <stdlib.h>

#include "analyze/report.h"
#include "core/error.h"

/* Finds a batch's row: a direct table when the batch numbers are dense (the
 * usual 0..N-1), else binary search over the ascending rows. */
typedef struct batch_index {
    const pp_batch_stats *rows;
    size_t n;
    int64_t base;
    uint32_t *table; /* row + 1 per batch - base, 0 = none; NULL if sparse */
    size_t span;
} batch_index;

static size_t batch_find(const batch_index *ix, int64_t batch) {
    if (ix->table) {
        uint64_t off = (uint64_t)batch - (uint64_t)ix->base;
        return batch >= ix->base && off < ix->span && ix->table[off] ? ix->table[off] - 1 : ix->n;
    }
    const pp_batch_stats *b = ix->rows;
    size_t n = ix->n, lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].batch < batch)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && b[lo].batch == batch ? lo : n;
}

static void batch_index_init(batch_index *ix, const pp_report *r) {
    *ix = (batch_index){.rows = r->batches, .n = r->nbatches};
    if (r->nbatches == 0 || r->nbatches >= UINT32_MAX)
        return;
    ix->base = r->batches[0].batch;
    uint64_t span = (uint64_t)r->batches[r->nbatches - 1].batch - (uint64_t)ix->base + 1;
    if (span > 4 * (uint64_t)r->nbatches)
        return;
    ix->table = calloc(span, sizeof *ix->table);
    ix->span = ix->table ? span : 0;
    for (size_t i = 0; ix->table && i < r->nbatches; i++)
        ix->table[r->batches[i].batch - ix->base] = (uint32_t)i + 1;
}

/* e2e(b) = last end - first start of every event of batch b inside W. */
static void end_to_end(pp_report *r, const pp_model *m, int64_t *first, int64_t *last) {
    pp_event_columns c;
    pp_model_columns(m, &c);
    batch_index ix;
    batch_index_init(&ix, r);
    for (size_t i = 0; i < r->nbatches; i++)
        first[i] = INT64_MAX, last[i] = INT64_MIN;
    for (size_t i = 0; i < c.count; i++) {
        if (c.batch[i] < 0 || !an_inside(r, c.ts_ns[i], c.dur_ns[i]))
            continue;
        size_t b = batch_find(&ix, c.batch[i]);
        if (b == r->nbatches)
            continue;
        if (c.ts_ns[i] < first[b])
            first[b] = c.ts_ns[i];
        if (c.ts_ns[i] + c.dur_ns[i] > last[b])
            last[b] = c.ts_ns[i] + c.dur_ns[i];
    }
    /* execs labeled by --batch-pattern carry their batch in the exec view */
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        size_t b = x->inside && x->batch >= 0 ? batch_find(&ix, x->batch)
                                              : r->nbatches;
        if (b == r->nbatches)
            continue;
        first[b] = x->start < first[b] ? x->start : first[b];
        last[b] = x->end > last[b] ? x->end : last[b];
    }
    free(ix.table);
}

static double per_second(int64_t count, int64_t ns) {
    return ns > 0 ? (double)count * 1e9 / (double)ns : 0.0;
}

int an_cycles_compute(pp_report *r, const pp_model *m, pp_error *err) {
    uint32_t present = 0;
    for (size_t s = 0; s < r->nstages; s++)
        present += r->stages[s].time.n > 0;
    size_t nb = 0;
    for (size_t i = 0; i < r->ntimes; i++)
        nb += i == 0 || r->times[i].batch != r->times[i - 1].batch;
    r->batches = calloc(nb ? nb : 1, sizeof *r->batches);
    int64_t *vals = malloc(3 * (nb ? nb : 1) * sizeof *vals);
    if (!r->batches || !vals) {
        free(vals);
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->ntimes;) {
        pp_batch_stats *b = &r->batches[r->nbatches++];
        b->batch = r->times[i].batch;
        b->cycle_ns = -1;
        size_t j = i;
        /* times are in stage order within a batch: strict > keeps the upstream
         * stage on ties */
        for (; j < r->ntimes && r->times[j].batch == b->batch; j++) {
            if (r->times[j].time_ns > b->cycle_ns) {
                b->cycle_ns = r->times[j].time_ns;
                b->bottleneck = r->times[j].stage;
            }
            b->stages++;
        }
        b->complete = b->stages == present;
        r->stages[b->bottleneck].bottleneck_count++;
        i = j;
    }
    int64_t *first = vals + nb, *last = vals + 2 * nb;
    end_to_end(r, m, first, last);
    size_t nc = 0;
    pp_cycle_stats *cy = &r->cycles;
    cy->batches = r->nbatches;
    for (size_t i = 0; i < r->nbatches; i++) {
        r->batches[i].e2e_ns = last[i] - first[i];
        if (r->batches[i].complete)
            vals[nc++] = r->batches[i].cycle_ns;
    }
    cy->complete = nc;
    pp_summary_compute(vals, nc, &cy->cycle_complete);
    for (size_t i = 0; i < r->nbatches; i++)
        vals[i] = r->batches[i].cycle_ns;
    pp_summary_compute(vals, r->nbatches, &cy->cycle);
    for (size_t i = 0; i < r->nbatches; i++)
        vals[i] = r->batches[i].e2e_ns;
    pp_summary_compute(vals, r->nbatches, &cy->e2e);
    free(vals);
    cy->throughput_bound = per_second((int64_t)cy->cycle.n, cy->cycle.total);
    cy->throughput_bound_complete = per_second((int64_t)cy->cycle_complete.n,
                                               cy->cycle_complete.total);
    cy->throughput_measured =
        per_second((int64_t)cy->complete, r->window.end_ns - r->window.start_ns);
    return PP_OK;
}
