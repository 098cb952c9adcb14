/* engine.c — the discrete-event simulation of a pipeline model
 * (docs/whatif.md, "The simulation").
 *
 * Stages in order, each with `servers` that take batches in order; a
 * bounded queue of `queue_depth` batches between two stages, as pipeprof's
 * runtime has: stage s hands batch b on only once stage s + 1 has taken
 * batch b - depth (the queue has room), and its server stays held until
 * then. Batches enter the first stage as fast as it takes them (the
 * trace's throughput is the pipeline's, not its source's). Each simulated
 * batch takes one measured batch's row in every stage (its partition,
 * parts, merge, server rest and hand-off delay), scaled by the plan.
 *
 * Every event's time follows from earlier ones in (batch, stage) order, so
 * there is no event queue: one pass of batches x stages. 10,000 batches
 * through 5 stages take a few milliseconds (bench/bench_whatif.c). */
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif_impl.h"

/* Batches drawn as one block of consecutive measured batches (a circular
 * block bootstrap): within a block every stage's times are those its
 * batches had together, so a stall of the whole machine, which hit the
 * stages of neighbouring batches at once, stays one stall. */
#define WI_BLOCK 32

typedef struct interval {
    double start, end;
    uint32_t device;
} interval;

static int by_device_start(const void *x, const void *y) {
    const interval *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

static int by_value(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The share of [t0, t1] each device was busy: the union of its intervals. */
static void busy_shares(interval *iv, size_t n, double t0, double t1, double *busy) {
    qsort(iv, n, sizeof *iv, by_device_start);
    for (size_t i = 0; i < n;) {
        uint32_t d = iv[i].device;
        double total = 0, lo = iv[i].start, hi = iv[i].end;
        for (; i < n && iv[i].device == d; i++) {
            if (iv[i].start > hi) {
                total += hi - lo;
                lo = iv[i].start, hi = iv[i].end;
            } else if (iv[i].end > hi) {
                hi = iv[i].end;
            }
        }
        total += hi - lo;
        if (d < PP_WHATIF_MAX_DEVICES && t1 > t0)
            busy[d] = total / (t1 - t0);
    }
}

/* An exclusive device's reservations: the intervals its held parts took,
 * by start. Parts are computed in batch order, not in time order, so a
 * later batch's part may fit before one already placed (the first stage of
 * batch b + 1 while the last of batch b waits downstream): each takes the
 * first gap at or after its ready time that holds it. Reservations ending
 * before the current batch's first start can take nothing more and go. */
typedef struct booking {
    interval *at;
    size_t n, cap;
} booking;

static double book(booking *bk, double ready, double held) {
    size_t i = 0;
    double t = ready;
    for (; i < bk->n; i++) { /* the first gap from t that holds `held` */
        if (bk->at[i].end <= t)
            continue;
        if (bk->at[i].start >= t + held)
            break;
        t = bk->at[i].end;
    }
    if (bk->n == bk->cap) {
        size_t cap = bk->cap ? 2 * bk->cap : 64;
        interval *grown = realloc(bk->at, cap * sizeof *grown);
        if (!grown)
            return -1;
        bk->at = grown, bk->cap = cap;
    }
    while (i < bk->n && bk->at[i].start < t) /* keep the order by start */
        i++;
    memmove(&bk->at[i + 1], &bk->at[i], (bk->n - i) * sizeof *bk->at);
    bk->at[i] = (interval){t, t + held, 0};
    bk->n++;
    return t;
}

static void book_prune(booking *bk, double before) {
    size_t k = 0;
    for (size_t i = 0; i < bk->n; i++)
        if (bk->at[i].end > before)
            bk->at[k++] = bk->at[i];
    bk->n = k;
}

/* A part of w ns ready at `at` on device d (-1: none the model knows), of
 * which `held` ns hold the device: its end (-1 on no memory), its busy
 * interval noted. On an exclusive device the part starts when the device
 * can give it `held` ns (stages sharing it take turns); the rest (launch,
 * copies) runs beside other stages' work. */
static double part_end(const pp_whatif_costs *c, booking *bk, int d, double at, double w,
                       double held, interval *iv, size_t *niv) {
    if (d < 0)
        return at + w;
    double start = c->exclusive && held > 0 ? book(&bk[d], at, held) : at;
    if (start < 0)
        return -1;
    iv[(*niv)++] = (interval){start, start + w, (uint32_t)d};
    return start + w;
}

/* The p-quantile of n values sorted ascending, nearest rank as the report
 * takes its percentiles (docs/architecture.md §4). */
static double rank_quantile(const double *sorted, size_t n, double p) {
    size_t k = (size_t)(p * (double)n + 0.999999999);
    k = k < 1 ? 1 : k > n ? n : k;
    return sorted[k - 1];
}

int wi_simulate(const pp_whatif_costs *c, const wi_plan *p, uint64_t seed, uint64_t batches,
                pp_whatif_figures *out) {
    memset(out, 0, sizeof *out);
    size_t S = c->nstages, B = (size_t)batches, nparts = 0;
    for (size_t s = 0; s < S; s++)
        nparts += c->stages[s].nparts > 0 ? c->stages[s].nparts : 1;
    if (S == 0 || B == 0 || c->stages[0].nrows == 0)
        return PP_EINVAL;
    for (size_t s = 1; s < S; s++) /* every stage has a row of every measured batch */
        if (c->stages[s].nrows != c->stages[0].nrows)
            return PP_EINVAL;
    double *pop = malloc(S * B * sizeof *pop);       /* when stage s took batch b */
    double *cycle = malloc(B * sizeof *cycle), *e2e = malloc(B * sizeof *e2e);
    interval *iv = malloc(B * nparts * sizeof *iv);
    uint64_t *bottleneck = calloc(S, sizeof *bottleneck);
    double(*free_at)[64] = calloc(S, sizeof *free_at); /* each server's next free time */
    double *last_end = calloc(S, sizeof *last_end); /* each stage's end of the batch before */
    if (!pop || !cycle || !e2e || !iv || !bottleneck || !free_at || !last_end) {
        free(pop), free(cycle), free(e2e), free(iv), free(bottleneck), free(free_at), free(last_end);
        return PP_ENOMEM;
    }
    int dev_of[PP_WHATIF_MAX_STAGES][PP_WHATIF_MAX_PARTS]; /* part -> device, looked up once */
    booking *bk = calloc(PP_WHATIF_MAX_DEVICES, sizeof *bk); /* exclusive devices */
    if (!bk) {
        free(pop), free(cycle), free(e2e), free(iv), free(bottleneck), free(free_at), free(last_end);
        return PP_ENOMEM;
    }
    int rc = PP_OK;
    for (size_t s = 0; s < S; s++)
        for (size_t q = 0; q < c->stages[s].nparts && q < PP_WHATIF_MAX_PARTS; q++)
            dev_of[s][q] = wi_device_index(c, c->stages[s].parts[q].device);
    pp_rng g;
    pp_rng_seed(&g, seed);
    size_t niv = 0;
    double first = 0, last = 0;
    uint32_t depth = p->queue_depth ? p->queue_depth : 1;
    size_t rows = c->stages[0].nrows, block = rows / 4 < WI_BLOCK ? rows / 4 : WI_BLOCK, at = 0;
    block = block ? block : 1;
    for (size_t b = 0; b < B; b++) {
        double arrival = 0, slowest_stage = -1, begin = 0, fin = 0;
        size_t bott = 0;
        /* The first batch is the trace's first (a process starting: once, as
         * it happened); the others come in blocks of consecutive measured
         * batches wrapping around rows 1 .. n-1, so that every one of those
         * weighs the same and the start-up is not drawn again. */
        size_t row = 0;
        if (b > 0 && rows > 1) {
            if ((b - 1) % block == 0)
                at = (size_t)pp_rng_below(&g, rows - 1);
            row = 1 + (at + (b - 1) % block) % (rows - 1);
        }
        for (size_t s = 0; s < S; s++) {
            const pp_whatif_stage *st = &c->stages[s];
            const wi_stage_plan *sp = &p->stages[s];
            double partition = st->nrows ? (double)st->partition_ns[row] * sp->stage_scale : 0;
            double merge = st->nrows ? (double)st->merge_ns[row] * sp->stage_scale : 0;
            double rest = st->nrows ? (double)st->overhead_ns[row] : 0;
            double handoff = row < st->nhandoff ? (double)st->handoff_ns[row] : 0;
            /* the server free first takes the batch (servers take batches in order) */
            uint32_t nserv = sp->servers < 1 ? 1 : sp->servers > 64 ? 64 : sp->servers, k = 0;
            for (uint32_t j = 1; j < nserv; j++)
                k = free_at[s][j] < free_at[s][k] ? j : k;
            double ready = arrival > free_at[s][k] ? arrival : free_at[s][k];
            /* its thread also runs a later stage: free once that stage ended b - 1 */
            if (b > 0 && st->waits_for > s + 1 && st->waits_for <= S &&
                last_end[st->waits_for - 1] > ready)
                ready = last_end[st->waits_for - 1];
            pop[s * B + b] = ready;
            double start = ready + handoff, parts_at = start + partition, slowest = 0;
            if (sp->move_samples) {
                double w = (double)sp->move_samples[pp_rng_below(&g, sp->nmove)];
                double endp = part_end(c, bk, sp->move_device, parts_at, w, w, iv, &niv);
                rc = endp < 0 ? PP_ENOMEM : rc;
                slowest = endp - parts_at;
            } else {
                for (size_t q = 0; q < st->nparts; q++) {
                    const pp_whatif_part *pt = &st->parts[q];
                    int64_t wall = pt->wall_ns[row];
                    if (wall < 0 || sp->work_scale[q] <= 0)
                        continue;
                    double fixed = (double)pt->fixed_ns[row], work = (double)pt->work_ns[row];
                    double w = fixed * sp->fixed_scale[q] + work * sp->work_scale[q] +
                               ((double)wall - fixed - work) * sp->wait_scale[q];
                    double held = work * sp->work_scale[q];
                    double endp = part_end(c, bk, dev_of[s][q], parts_at, w, held, iv, &niv);
                    rc = endp < 0 ? PP_ENOMEM : rc;
                    double took = endp - parts_at;
                    slowest = took > slowest ? took : slowest;
                }
            }
            double stage_time = partition + slowest + merge, end = start + stage_time + rest;
            double depart = end; /* held until the next queue has room */
            if (s + 1 < S && b >= depth && pop[(s + 1) * B + b - depth] > depart)
                depart = pop[(s + 1) * B + b - depth];
            free_at[s][k] = depart;
            last_end[s] = end;
            arrival = depart;
            if (stage_time > slowest_stage) /* upstream on ties */
                slowest_stage = stage_time, bott = s;
            if (s == 0) {
                begin = start;
                /* nothing from now on is ready before this batch was taken */
                for (size_t d = 0; c->exclusive && d < c->ndevices && d < PP_WHATIF_MAX_DEVICES; d++)
                    book_prune(&bk[d], ready);
            }
            fin = end;
        }
        cycle[b] = slowest_stage;
        e2e[b] = fin - begin;
        bottleneck[bott]++;
        if (b == 0)
            first = begin;
        last = fin > last ? fin : last;
    }
    out->throughput_per_s = last > first ? (double)B * 1e9 / (last - first) : 0;
    double sum = 0;
    for (size_t b = 0; b < B; b++)
        sum += cycle[b];
    out->cycle_mean_ns = sum / (double)B;
    qsort(cycle, B, sizeof *cycle, by_value);
    qsort(e2e, B, sizeof *e2e, by_value);
    out->cycle_p95_ns = rank_quantile(cycle, B, 0.95);
    out->e2e_p50_ns = rank_quantile(e2e, B, 0.50);
    out->e2e_p95_ns = rank_quantile(e2e, B, 0.95);
    for (size_t s = 0; s < S && s < PP_WHATIF_MAX_STAGES; s++)
        out->bottleneck[s] = (double)bottleneck[s] / (double)B;
    busy_shares(iv, niv, first, last, out->busy);
    for (size_t d = 0; d < PP_WHATIF_MAX_DEVICES; d++)
        free(bk[d].at);
    free(bk);
    free(pop), free(cycle), free(e2e), free(iv), free(bottleneck), free(free_at), free(last_end);
    if (rc != PP_OK)
        memset(out, 0, sizeof *out);
    return rc;
}
