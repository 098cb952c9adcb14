/* stages.c — stage time(s, b) and the per-stage table (docs/architecture.md §4).
 *
 * Everything labeled with a stage and a batch inside W (execs, host execs,
 * and the partition and merge spans on host threads) is one item of its
 * (stage, batch) cell. The items are grouped by batch with a counting sort;
 * a batch's few items are then read from the model once, into a buffer,
 * and sorted there by (stage, kind, device, track), so each cell is one run
 * of them. The grouping holds a 4-byte reference per item and a 4-byte
 * offset per batch (the items themselves are not copied), so memory stays
 * linear in the items however many stages, batches and devices there are.
 * Each cell gives one stage time:
 *   - execs on one device: first start to last end (several tracks of one
 *     device without partition or merge, a copy stream beside a compute
 *     stream, are that device's work);
 *   - execs on more than one device, or on several tracks of one device
 *     with a partition or merge span of the cell (data parallel):
 *     partition + max part wall + merge, with the measured partition start
 *     .. merge end beside. The tracks of one device are parts only where
 *     the user split the work over them: host threads between a partition
 *     and a merge, or streams between partition and merge annotations of a
 *     foreign trace. pipeprof's own request slots of one executor are that
 *     device's queue of in-flight requests, one part; two executors of a
 *     data-parallel stage on one device (CPU + CPU) are two parts when
 *     their execs say which executor ran them (the integer annotation
 *     "part"), each part the execs of one executor. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

enum { ITEM_PARTITION = 0, ITEM_MERGE = 1, ITEM_EXEC = 2 };

/* The items grouped by batch (a counting sort on the batch index): batch
 * index b's are ref[at[b] .. at[b+1]), a reference `ref` being r->host[ref]
 * (a partition or merge) when ref < nhost, else r->execs[ref - nhost]. 4
 * bytes an item and 4 a batch (32-bit references: at most AN_MAX_ITEMS host
 * spans and execs), however many stages, batches and devices there are:
 * the items themselves are gathered only when their batch is timed, into a
 * buffer of the largest batch's size. */
#define AN_MAX_ITEMS ((size_t)UINT32_MAX)
typedef struct cells {
    uint32_t *ref, *at;
    size_t n, nexec, big;     /* items, exec items, items of the largest batch */
    /* an exec's place in (device, track) order: 2 + rank[track] sorts after
     * a partition (0) and a merge (1) of its stage */
    uint64_t *rank, nrank;
    /* the "share" annotations of data-parallel execs, looked up as needed
     * (cells come in batch order, so nearly in event order) */
    const pp_ann *ann;
    size_t nann, ann_at;
    uint32_t share_key, part_key;
} cells;

/* One item as its cell reads it, gathered once from the model's columns. */
typedef struct cell_item {
    int64_t start, end;
    size_t event;
    uint32_t stage, device, track;
    uint8_t kind;
    uint8_t split;            /* exec: a host exec; partition / merge: from a pattern */
    int64_t part;             /* exec of a cell split by executor: its "part", else -1 */
} cell_item;

/* Item `ref` gathered, and its key in the batch's order: (stage, kind,
 * device, track), as stage * nrank + rank. With fewer than 2^32 stages and
 * tracks (32-bit ids) it fits 64 bits. */
static uint64_t item_gather(const pp_report *r, const cells *c, size_t ref, cell_item *it) {
    if (ref < r->nhost) {
        const an_host *h = &r->host[ref];
        uint8_t kind = an_host_role(h) == PP_ROLE_PARTITION ? ITEM_PARTITION : ITEM_MERGE;
        uint32_t s = an_host_stage(h);
        *it = (cell_item){an_start(r, h->event), an_end(r, h->event), h->event, s, 0, 0,
                          kind, (uint8_t)an_host_from_pattern(h), -1};
        return (uint64_t)s * c->nrank + kind;
    }
    const an_exec *x = &r->execs[ref - r->nhost];
    uint32_t track = an_exec_track(r, x);
    *it = (cell_item){an_start(r, x->event), an_end(r, x->event), x->event, x->stage,
                      r->track_device[track], track, ITEM_EXEC, an_exec_is_host(r, x), -1};
    return (uint64_t)x->stage * c->nrank + c->rank[track];
}

/* The "share" annotation of exec item `it` (the part of a data-parallel
 * batch its device got), or -1; a host exec has none. */
/* The annotation `key` of item `it` of value type `type`, or NULL. */
static const pp_ann *item_ann(cells *c, const cell_item *it, uint32_t key, int type) {
    if (key == 0 || it->split)
        return NULL;
    size_t k = an_lower_bound_near(c->ann, sizeof *c->ann, offsetof(pp_ann, event),
                                   sizeof c->ann->event, 0,
                                   c->nann, c->ann_at, it->event);
    c->ann_at = k;
    for (; k < c->nann && c->ann[k].event == it->event; k++)
        if (pp_ann_key(&c->ann[k]) == key && pp_ann_type(&c->ann[k]) == type)
            return &c->ann[k];
    return NULL;
}

static double item_share(cells *c, const cell_item *it) {
    const pp_ann *a = item_ann(c, it, c->share_key, PP_VALUE_DOUBLE);
    return a ? a->v.d : -1;
}

/* The batch map of everything labeled: dense in the usual case; else the
 * labeled batch numbers are gathered, sorted and made distinct. */
int an_batch_map_build(pp_report *r) {
    if (an_batch_map_dense(&r->bmap, r->label_lo, r->label_hi, r->nlabeled))
        return PP_OK;
    int64_t *v = an_buf_get(&r->values, (r->nlabeled ? r->nlabeled : 1) * sizeof *v);
    if (!v)
        return PP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < r->nhost && k < r->nlabeled; i++)
        if (an_host_inside(r, &r->host[i]) && an_host_stage(&r->host[i]) != AN_NONE &&
            r->host[i].batch >= 0)
            v[k++] = r->host[i].batch;
    for (size_t i = 0; i < r->nexecs && k < r->nlabeled; i++) {
        const an_exec *x = &r->execs[i];
        if (an_exec_inside(r, x) && x->stage != AN_NONE && an_exec_batch(r, x) >= 0)
            v[k++] = an_exec_batch(r, x);
    }
    return an_batch_map_sparse(r, &r->bmap, v, k);
}

/* The batch index of item `ref`, or AN_NO_BATCH when it is no item: a
 * partition or merge, or an exec, labeled with a stage and a batch and
 * inside W. */
static inline size_t item_batch(const pp_report *r, size_t ref) {
    if (ref < r->nhost) {
        const an_host *h = &r->host[ref];
        uint8_t role = an_host_role(h);
        int item = an_host_inside(r, h) && an_host_stage(h) != AN_NONE && h->batch >= 0 &&
                   (role == PP_ROLE_PARTITION || role == PP_ROLE_MERGE);
        return item ? an_batch_index(&r->bmap, h->batch) : AN_NO_BATCH;
    }
    const an_exec *x = &r->execs[ref - r->nhost];
    int64_t batch = an_exec_batch(r, x);
    int item = an_exec_inside(r, x) && x->stage != AN_NONE && batch >= 0;
    return item ? an_batch_index(&r->bmap, batch) : AN_NO_BATCH;
}

/* Sorts n records by key, stably: insertion for the few items of a usual
 * batch, radix for a large one. */
static void kv_sort_small(an_kv *a, size_t n, an_kv *tmp) {
    if (n > 32) {
        an_kv_sort(a, n, tmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        an_kv v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1].key > v.key; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Each track's rank in (device, track) order, by a counting sort on the
 * device: next[d] is device d's next rank. */
static int track_ranks(pp_report *r, cells *c) {
    size_t ntracks = pp_model_track_count(r->m);
    c->rank = malloc((ntracks ? ntracks : 1) * sizeof *c->rank);
    uint64_t *next = calloc(r->ndevices + 1, sizeof *next);
    if (!c->rank || !next) {
        free(next);
        return PP_ENOMEM;
    }
    for (size_t t = 0; t < ntracks; t++)
        if (r->track_device[t] != AN_NONE)
            next[r->track_device[t] + 1]++;
    next[0] = 2;
    for (size_t d = 0; d < r->ndevices; d++)
        next[d + 1] += next[d];
    c->nrank = next[r->ndevices];
    for (size_t t = 0; t < ntracks; t++)
        if (r->track_device[t] != AN_NONE)
            c->rank[t] = next[r->track_device[t]]++;
    free(next);
    return PP_OK;
}

static int cells_build(pp_report *r, cells *c) {
    size_t nb = r->bmap.count, nref = r->nhost + r->nexecs;
    if (nref > AN_MAX_ITEMS)
        return PP_EUNSUPPORTED;
    c->ann = pp_model_anns(r->m, &c->nann);
    c->ann_at = c->nann; /* no lookup yet */
    c->share_key = an_share_key(r->m);
    c->part_key = an_part_key(r->m);
    c->at = an_buf_get(&r->index, (nb + 2) * sizeof *c->at);
    if (!c->at)
        return PP_ENOMEM;
    memset(c->at, 0, (nb + 2) * sizeof *c->at);
    for (size_t ref = 0; ref < nref; ref++) {
        size_t b = item_batch(r, ref);
        if (b != AN_NO_BATCH)
            c->at[b + 2]++, c->nexec += ref >= r->nhost;
    }
    for (size_t b = 0; b < nb; b++) {
        c->big = c->at[b + 2] > c->big ? c->at[b + 2] : c->big;
        c->at[b + 2] += c->at[b + 1];
    }
    c->n = c->at[nb + 1];
    /* in the scratch where stage_exec_figures gathers the penalties next,
     * sized for both: one table faulted in once, not a second beside it */
    size_t pens = (r->nexecs ? r->nexecs : 1) * sizeof(int64_t);
    c->ref = an_buf_get(&r->values, c->n * sizeof *c->ref > pens ? c->n * sizeof *c->ref : pens);
    if (!c->ref)
        return PP_ENOMEM;
    for (size_t ref = 0; ref < nref; ref++) { /* at[b+1] is batch b's cursor, then its end */
        size_t b = item_batch(r, ref);
        if (b != AN_NO_BATCH)
            c->ref[c->at[b + 1]++] = (uint32_t)ref;
    }
    return track_ranks(r, c);
}

/* What one cell holds: its partition and merge hulls, the hull of its
 * execs, and its parts. */
typedef struct cell_parts {
    int64_t part_start, part_end, merge_start, merge_end; /* INT64_MAX start: none */
    int64_t exec_start, exec_end;
    size_t ndev, ntracks;
    uint32_t track;                /* the first exec's model track */
    int pattern_bracket, all_host; /* a partition / merge from a pattern; only host execs */
} cell_parts;

static void hull(int64_t *s, int64_t *e, const cell_item *it) {
    *s = it->start < *s ? it->start : *s;
    *e = it->end > *e ? it->end : *e;
}

/* The n items of a cell, in order: it[kv[k].val]. */
static cell_parts cell_scan(const cell_item *it, const an_kv *kv, size_t n) {
    cell_parts p = {INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 0, 0,
                    AN_NONE, 0, 1};
    const cell_item *prev = NULL;
    for (size_t k = 0; k < n; k++) {
        const cell_item *x = &it[kv[k].val];
        if (x->kind == ITEM_PARTITION)
            hull(&p.part_start, &p.part_end, x), p.pattern_bracket |= x->split;
        else if (x->kind == ITEM_MERGE)
            hull(&p.merge_start, &p.merge_end, x), p.pattern_bracket |= x->split;
        else {
            hull(&p.exec_start, &p.exec_end, x);
            p.all_host &= x->split;
            p.ndev += !prev || prev->device != x->device;
            p.ntracks += !prev || prev->device != x->device || prev->track != x->track;
            p.track = prev ? p.track : x->track;
            prev = x;
        }
    }
    return p;
}

/* The parts of a data-parallel cell: per device when it spans devices,
 * else per track of its one device. Each part's wall is first start to last
 * end of its execs; its share is the sum of their "share" annotations,
 * else the runtime's default even split, 1 / nparts. Each goes into the
 * stage's sums; *max_wall (from 0) gets the largest wall. */
static int dp_parts(pp_report *r, cells *c, const cell_item *it, const an_kv *kv, size_t n,
                    uint32_t stage, int by_track, size_t nparts, int64_t *max_wall) {
    int64_t s = 0, e = 0, walls = 0;
    double share = 0;
    int open = 0, recorded = 0, rc = PP_OK;
    const cell_item *part = NULL; /* the first exec of the open part */
    for (size_t k = 0; k <= n && rc == PP_OK; k++) {
        const cell_item *x = k < n ? &it[kv[k].val] : NULL;
        if (x && x->kind != ITEM_EXEC)
            continue;
        int same = x && open && part->device == x->device &&
                   (!by_track || (x->part >= 0 ? part->part == x->part : part->track == x->track));
        if (open && !same) {
            rc = an_dp_part_add(r, stage, part->device, by_track ? part->track : AN_NONE,
                                e - s, recorded ? share : 1.0 / (double)nparts, recorded);
            walls += e - s;
            *max_wall = e - s > *max_wall ? e - s : *max_wall;
            open = 0;
        }
        if (!x)
            break;
        if (!open) {
            part = x, open = 1;
            s = INT64_MAX, e = INT64_MIN, share = 0, recorded = 0;
        }
        hull(&s, &e, x);
        double part_share = item_share(c, x);
        if (part_share >= 0)
            share += part_share, recorded = 1;
    }
    an_dp_sums *sums = &r->dp_sums[stage];
    sums->sum_max += *max_wall;
    sums->sum_mean += (double)walls / (double)nparts;
    return rc == PP_OK ? an_dp_batch_end(r, stage, *max_wall, (double)walls / (double)nparts) : rc;
}

/* Whether the cell's execs say which executor ran them (each carries an
 * integer "part", two values at least): then each exec's part is set and
 * the cell's items are re-sorted by (kind, part, track), so each executor's
 * execs are one run (its first track, the lowest, names it). */
static int split_by_part(cells *c, cell_item *it, an_kv *kv, size_t n) {
    int64_t first = -1;
    int two = 0;
    for (size_t k = 0; k < n; k++) {
        cell_item *x = &it[kv[k].val];
        if (x->kind != ITEM_EXEC)
            continue;
        const pp_ann *a = item_ann(c, x, c->part_key, PP_VALUE_INT);
        if (!a || a->v.i < 0 || a->v.i > INT32_MAX)
            return 0;
        x->part = a->v.i;
        two |= first >= 0 && x->part != first;
        first = first < 0 ? x->part : first;
    }
    if (!two)
        return 0;
    for (size_t k = 0; k < n; k++) {
        const cell_item *x = &it[kv[k].val];
        kv[k].key = x->kind != ITEM_EXEC ? x->kind
                                          : ((uint64_t)(x->part + 1) << 32 | x->track) + 2;
    }
    for (size_t i = 1; i < n; i++) { /* a cell's few items: insertion */
        an_kv v = kv[i];
        size_t j = i;
        for (; j > 0 && kv[j - 1].key > v.key; j--)
            kv[j] = kv[j - 1];
        kv[j] = v;
    }
    return 1;
}

/* The time of the cell of stage s in batch index b, whose n items are
 * it[kv[k].val], if it has execs (only a partition or merge times nothing);
 * 0 or PP_ENOMEM. */
static int cell_time(pp_report *r, cells *c, cell_item *it, an_kv *kv, size_t n, uint32_t s,
                     size_t b) {
    cell_parts p = cell_scan(it, kv, n);
    if (p.ndev == 0)
        return PP_OK;
    int has_bracket = p.part_start != INT64_MAX || p.merge_start != INT64_MAX;
    int by_track = p.ndev == 1 && p.ntracks > 1 && has_bracket && (p.pattern_bracket || p.all_host);
    size_t nparts = p.ndev > 1 ? p.ndev : by_track ? p.ntracks : 1;
    if (p.ndev == 1 && p.ntracks > 1 && has_bracket && !by_track &&
        split_by_part(c, it, kv, n)) {
        by_track = 1;
        nparts = 0; /* the distinct parts, now in runs */
        for (size_t k = 0; k < n; k++) {
            const cell_item *x = &it[kv[k].val], *y = k ? &it[kv[k - 1].val] : NULL;
            nparts += x->kind == ITEM_EXEC && (!y || y->kind != ITEM_EXEC || y->part != x->part);
        }
    }
    an_time *t = &r->times[r->ntimes++];
    *t = (an_time){.stage = s, .batch = (uint32_t)b};
    an_flow_cell(r, s, b, p.part_start < p.exec_start ? p.part_start : p.exec_start,
                 p.merge_start != INT64_MAX && p.merge_end > p.exec_end ? p.merge_end
                                                                         : p.exec_end,
                 p.track);
    if (nparts == 1) {
        t->time_ns = p.exec_end - p.exec_start;
        return PP_OK;
    }
    r->stages[s].data_parallel = 1;
    r->dp_time[(r->ntimes - 1) / 64] |= UINT64_C(1) << ((r->ntimes - 1) % 64);
    an_dp_row *row = &r->dp_rows[r->ndp_rows++];
    r->dp_sums[s].rows++;
    int has_part = p.part_start != INT64_MAX, has_merge = p.merge_start != INT64_MAX;
    *row = (an_dp_row){.partition_ns = has_part ? p.part_end - p.part_start : 0,
                       .merge_ns = has_merge ? p.merge_end - p.merge_start : 0};
    int64_t max_wall = 0;
    int rc = dp_parts(r, c, it, kv, n, s, by_track, nparts, &max_wall);
    t->time_ns = row->partition_ns + max_wall + row->merge_ns;
    r->dp_measured[r->ndp_rows - 1] = has_part && has_merge ? p.merge_end - p.part_start : -1;
    return rc;
}

/* A table allocated for an upper bound, shrunk to its n filled items (at
 * least one). Only the filled part was ever touched: the rest of the bound
 * cost address space, not memory. */
static void *table_shrink(void *p, size_t n, size_t size) {
    void *shrunk = realloc(p, (n ? n : 1) * size);
    return shrunk ? shrunk : p; /* a failed shrink keeps the larger table */
}

/* r->dp_rank: the marked times before each word of r->dp_time, so that
 * an_stage_time finds a time's measured_ns without a search. */
static int dp_ranks(pp_report *r) {
    size_t words = r->ntimes / 64 + 1;
    r->dp_rank = an_alloc(words, sizeof *r->dp_rank);
    if (!r->dp_rank)
        return PP_ENOMEM;
    uint32_t before = 0;
    for (size_t w = 0; w < words; w++) {
        r->dp_rank[w] = before;
        before += (uint32_t)__builtin_popcountll(r->dp_time[w]);
    }
    return PP_OK;
}

pp_stage_time an_stage_time(const pp_report *r, size_t t) {
    const an_time *x = &r->times[t];
    uint64_t word = r->dp_time[t / 64], below = (UINT64_C(1) << (t % 64)) - 1;
    int64_t measured = -1;
    if ((word >> (t % 64)) & 1) {
        size_t rank = r->dp_rank[t / 64] + (size_t)__builtin_popcountll(word & below);
        measured = r->dp_measured[rank];
    }
    const an_time_at *at = &r->time_at[t];
    return (pp_stage_time){.stage = x->stage, .batch = an_batch_number(&r->bmap, x->batch),
                           .time_ns = x->time_ns, .measured_ns = measured,
                           .start_ns = at->start_ns, .end_ns = at->end_ns,
                           .track = r->time_track[t]};
}

/* Every timed cell in (batch, stage) order. A batch's items are gathered
 * once and sorted by (stage, kind, device, track), so each cell is one run
 * of them. A timed cell has an exec, a data-parallel one two: the exec
 * items bound both tables, which are shrunk to what was filled. */
static int times_compute(pp_report *r, cells *c) {
    r->times = an_alloc(c->nexec, sizeof *r->times);
    r->dp_rows = an_alloc(c->nexec / 2, sizeof *r->dp_rows);
    r->dp_measured = an_alloc(c->nexec / 2, sizeof *r->dp_measured);
    r->dp_time = an_calloc(c->nexec / 64 + 1, sizeof *r->dp_time);
    r->dp_sums = c->nexec >= 2 ? calloc(r->nstages, sizeof *r->dp_sums) : NULL;
    cell_item *it = an_buf_get(&r->spans, (c->big ? c->big : 1) * sizeof *it);
    an_kv *kv = an_buf_get(&r->sort_tmp, 2 * (c->big ? c->big : 1) * sizeof *kv);
    if (!r->times || !r->dp_rows || !r->dp_measured || !r->dp_time ||
        (c->nexec >= 2 && !r->dp_sums) || !it || !kv || an_flow_start(r, c->nexec) != PP_OK)
        return PP_ENOMEM;
    int rc = PP_OK;
    for (size_t b = 0; rc == PP_OK && c->at && b < r->bmap.count; b++) {
        size_t lo = c->at[b], n = c->at[b + 1] - lo;
        for (size_t k = 0; k < n; k++)
            kv[k] = (an_kv){item_gather(r, c, c->ref[lo + k], &it[k]), k};
        kv_sort_small(kv, n, kv + n);
        for (size_t k = 0, hi; rc == PP_OK && k < n; k = hi) {
            uint32_t s = it[kv[k].val].stage;
            for (hi = k + 1; hi < n && it[kv[hi].val].stage == s; hi++)
                ;
            rc = cell_time(r, c, it, kv + k, hi - k, s, b);
        }
    }
    r->times = table_shrink(r->times, r->ntimes, sizeof *r->times);
    r->dp_rows = table_shrink(r->dp_rows, r->ndp_rows, sizeof *r->dp_rows);
    r->dp_measured = table_shrink(r->dp_measured, r->ndp_rows, sizeof *r->dp_measured);
    if (r->ndp_rows == 0)
        an_dp_sums_free(r);
    return rc == PP_OK ? dp_ranks(r) : rc;
}

/* Per-stage exec figures: counts, hardware sums, concurrency penalty. The
 * penalties are grouped by stage with one counting sort. */
static int stage_exec_figures(pp_report *r) {
    size_t ns = r->nstages;
    size_t *at = calloc(ns + 2, sizeof *at);
    int64_t *wall = calloc(ns ? ns : 1, sizeof *wall);
    uint64_t *host = calloc(ns ? ns : 1, sizeof *host);
    int64_t *pen = at && wall && host ? an_buf_get(&r->values, (r->nexecs ? r->nexecs : 1) * sizeof *pen)
                              : NULL;
    int rc = pen ? PP_OK : PP_ENOMEM;
    for (size_t i = 0; rc == PP_OK && i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (!an_exec_inside(r, x) || x->stage == AN_NONE)
            continue;
        pp_stage_stats *st = &r->stages[x->stage];
        int64_t hw = an_exec_hw(r, x);
        st->execs++;
        int is_host = an_exec_is_host(r, x);
        host[x->stage] += (uint64_t)is_host;
        if (hw == 0) {
            /* host work has no hardware time by nature: not "unknown", as
             * for the devices (docs/analysis.md, "Execs and devices") */
            st->hw_unknown += (uint64_t)!is_host;
            continue;
        }
        st->hw_ns = an_sat_add(st->hw_ns, hw);
        st->xfer_ns = an_sat_add(st->xfer_ns, an_hw_of(pp_cols_xfer(&r->c, x->event)));
        wall[x->stage] = an_sat_add(wall[x->stage], pp_cols_dur(&r->c, x->event));
        at[x->stage + 2]++;
    }
    for (size_t s = 0; rc == PP_OK && s < ns; s++)
        at[s + 2] += at[s + 1];
    for (size_t i = 0; rc == PP_OK && i < r->nexecs; i++) { /* at[s+1] is stage s's cursor */
        const an_exec *x = &r->execs[i];
        int64_t hw = an_exec_hw(r, x);
        if (an_exec_inside(r, x) && x->stage != AN_NONE && hw != 0)
            pen[at[x->stage + 1]++] = pp_cols_dur(&r->c, x->event) - hw;
    }
    for (size_t s = 0; rc == PP_OK && s < ns; s++) {
        pp_stage_stats *st = &r->stages[s];
        rc = an_summary(r, pen + at[s], at[s + 1] - at[s], &st->penalty);
        st->penalty_pct_wall = 100.0 * an_ratio(st->penalty.total, wall[s]);
        st->exec_less = st->execs > 0 && host[s] == st->execs;
    }
    free(at);
    free(wall);
    free(host);
    return rc;
}

/* Summaries of each stage's times, gathered by stage with a counting sort. */
static int time_summaries(pp_report *r) {
    size_t *at = calloc(r->nstages + 2, sizeof *at);
    int64_t *vals = at ? an_buf_get(&r->values, (r->ntimes ? r->ntimes : 1) * sizeof *vals) : NULL;
    int rc = vals ? PP_OK : PP_ENOMEM;
    for (size_t i = 0; rc == PP_OK && i < r->ntimes; i++)
        at[r->times[i].stage + 2]++;
    for (size_t s = 0; rc == PP_OK && s < r->nstages; s++)
        at[s + 2] += at[s + 1];
    for (size_t i = 0; rc == PP_OK && i < r->ntimes; i++) /* at[s+1]: stage s's cursor */
        vals[at[r->times[i].stage + 1]++] = r->times[i].time_ns;
    for (size_t s = 0; rc == PP_OK && s < r->nstages; s++)
        rc = an_summary(r, vals + at[s], at[s + 1] - at[s], &r->stages[s].time);
    free(at);
    return rc;
}

int an_stages_compute(pp_report *r, pp_error *err) {
    r->stages = calloc(r->nstages ? r->nstages : 1, sizeof *r->stages);
    if (!r->stages)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    for (size_t s = 0; s < r->nstages; s++)
        r->stages[s].name = r->stage_names[s];
    cells c = {0};
    int rc = PP_OK;
    if (r->nstages > 0)
        rc = cells_build(r, &c);
    if (rc == PP_OK)
        rc = times_compute(r, &c);
    free(c.rank); /* ref and at are scratch, reused below */
    if (rc == PP_OK)
        rc = stage_exec_figures(r);
    if (rc == PP_OK)
        rc = time_summaries(r);
    if (rc == PP_OK)
        rc = an_flow_finish(r);
    an_flow_free(r);
    if (rc == PP_EUNSUPPORTED)
        return pp_set_error(err, rc,
                            "%zu host spans and execs: the stage analysis handles at most %zu",
                            r->nhost + r->nexecs, AN_MAX_ITEMS);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
