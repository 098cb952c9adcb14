/* stages.c — stage time(s, b) and the per-stage table (docs/architecture.md §4).
 *
 * Everything labeled with a stage and a batch inside W (execs, host execs,
 * and the partition and merge spans on host threads) is one item of its
 * (stage, batch) cell. The items are sorted by (batch, stage, kind, device,
 * track) with two stable radix sorts, so each cell is one run of items and
 * memory stays linear in the items however many stages, batches and devices
 * there are. Each cell gives one stage time:
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
 *     device's queue of in-flight requests, one part. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

enum { ITEM_PARTITION = 0, ITEM_MERGE = 1, ITEM_EXEC = 2 };

typedef struct cell_item {
    int64_t start, end;
    double share;             /* -1 = not recorded */
    uint32_t device, track;
    uint8_t kind;
    uint8_t split;            /* exec: a host exec; partition / merge: from a pattern */
} cell_item;

typedef struct cells {
    cell_item *items;
    an_kv *order;             /* val = item index, sorted by cell */
    size_t n;
} cells;

/* The batch map of everything labeled: dense in the usual case; else the
 * labeled batch numbers are gathered, sorted and made distinct. */
static int batch_map(pp_report *r) {
    if (an_batch_map_dense(&r->bmap, r->label_lo, r->label_hi, r->nlabeled))
        return PP_OK;
    int64_t *v = an_buf_get(&r->values, (r->nlabeled ? r->nlabeled : 1) * sizeof *v);
    if (!v)
        return PP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < r->nhost && k < r->nlabeled; i++)
        if (r->host[i].inside && r->host[i].stage != AN_NONE && r->host[i].batch >= 0)
            v[k++] = r->host[i].batch;
    for (size_t i = 0; i < r->nexecs && k < r->nlabeled; i++) {
        const an_exec *x = &r->execs[i];
        if (x->inside && x->stage != AN_NONE && x->batch >= 0)
            v[k++] = x->batch;
    }
    return an_batch_map_sparse(r, &r->bmap, v, k);
}

static int host_item(const an_host *h) {
    return h->inside && h->stage != AN_NONE && h->batch >= 0 &&
           (h->role == PP_ROLE_PARTITION || h->role == PP_ROLE_MERGE);
}

static int exec_item(const an_exec *x) {
    return x->inside && x->stage != AN_NONE && x->batch >= 0;
}

/* The cell key: batch index major, stage minor (nb * nstages fits 64 bits:
 * both are at most the number of items). */
static uint64_t cell_key(const pp_report *r, int64_t batch, uint32_t stage) {
    return (uint64_t)an_batch_index(&r->bmap, batch) * r->nstages + stage;
}

static int cells_build(pp_report *r, cells *c) {
    size_t n = 0;
    for (size_t i = 0; i < r->nhost; i++)
        n += host_item(&r->host[i]);
    for (size_t i = 0; i < r->nexecs; i++)
        n += exec_item(&r->execs[i]);
    c->items = an_alloc(n, sizeof *c->items);
    c->order = an_alloc(2 * n, sizeof *c->order);
    uint64_t *cell = an_alloc(n, sizeof *cell); /* item index -> its cell key */
    if (!c->items || !c->order || !cell) {
        free(cell);
        return PP_ENOMEM;
    }
    an_kv *tmp = c->order + n;
    for (size_t i = 0; i < r->nhost; i++) {
        const an_host *h = &r->host[i];
        if (!host_item(h))
            continue;
        uint8_t kind = h->role == PP_ROLE_PARTITION ? ITEM_PARTITION : ITEM_MERGE;
        c->items[c->n] = (cell_item){h->start, h->end, -1, 0, 0, kind, h->from_pattern};
        c->order[c->n] = (an_kv){(uint64_t)kind << 62, c->n};
        cell[c->n++] = cell_key(r, h->batch, h->stage);
    }
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (!exec_item(x))
            continue;
        c->items[c->n] =
            (cell_item){x->start, x->end, x->share, x->device, x->track, ITEM_EXEC, x->host};
        c->order[c->n] = (an_kv){(uint64_t)ITEM_EXEC << 62 | (uint64_t)x->device << 31 | x->track,
                                 c->n};
        cell[c->n++] = cell_key(r, x->batch, x->stage);
    }
    /* by (kind, device, track), then stably by cell */
    an_kv_sort(c->order, n, tmp);
    for (size_t i = 0; i < n; i++)
        c->order[i].key = cell[c->order[i].val];
    free(cell);
    an_kv_sort(c->order, n, tmp);
    return PP_OK;
}

/* What one cell holds: its partition and merge hulls, and its parts. */
typedef struct cell_parts {
    int64_t part_start, part_end, merge_start, merge_end; /* INT64_MAX start: none */
    size_t ndev, ntracks;
    int pattern_bracket, all_host; /* a partition / merge from a pattern; only host execs */
} cell_parts;

static void hull(int64_t *s, int64_t *e, const cell_item *it) {
    *s = it->start < *s ? it->start : *s;
    *e = it->end > *e ? it->end : *e;
}

static cell_parts cell_scan(const cells *c, size_t lo, size_t hi) {
    cell_parts p = {INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 0, 0, 0, 1};
    const cell_item *prev = NULL;
    for (size_t k = lo; k < hi; k++) {
        const cell_item *it = &c->items[c->order[k].val];
        if (it->kind != ITEM_EXEC)
            p.pattern_bracket |= it->split;
        else
            p.all_host &= it->split;
        if (it->kind == ITEM_PARTITION)
            hull(&p.part_start, &p.part_end, it);
        else if (it->kind == ITEM_MERGE)
            hull(&p.merge_start, &p.merge_end, it);
        else {
            p.ndev += !prev || prev->device != it->device;
            p.ntracks += !prev || prev->device != it->device || prev->track != it->track;
            prev = it;
        }
    }
    return p;
}

/* The parts of a data-parallel cell: per device when it spans devices,
 * else per track of its one device. Each part's wall is first start to last
 * end of its execs; its share is the sum of their "share" annotations. */
static void dp_walls(pp_report *r, const cells *c, size_t lo, size_t hi, int by_track,
                     an_dp_row *row) {
    an_dp_wall *w = NULL;
    int64_t s = 0, e = 0;
    const cell_item *prev = NULL;
    for (size_t k = lo; k <= hi; k++) {
        const cell_item *it = k < hi ? &c->items[c->order[k].val] : NULL;
        if (it && it->kind != ITEM_EXEC)
            continue;
        int same = it && prev && prev->device == it->device &&
                   (!by_track || prev->track == it->track);
        if (w && !same) {
            w->wall_ns = e - s;
            if (w->wall_ns > row->max_device_ns)
                row->max_device_ns = w->wall_ns;
        }
        if (!it)
            break;
        if (!same) {
            w = &r->dp_walls[r->ndp_walls++];
            *w = (an_dp_wall){it->device, by_track ? it->track : AN_NONE, 0, 0, 0};
            s = INT64_MAX, e = INT64_MIN;
        }
        hull(&s, &e, it);
        if (it->share >= 0)
            w->share += it->share, w->recorded = 1;
        prev = it;
    }
    for (size_t i = row->first; i < row->first + row->ndev; i++)
        if (!r->dp_walls[i].recorded) /* the runtime's default even split */
            r->dp_walls[i].share = 1.0 / (double)row->ndev;
}

/* The time of one cell [lo, hi) of the sorted order: 1 when timed, 0 when
 * it has no execs (only a partition or merge). With `count` set, only
 * counts what the cell would add: a time, a data-parallel row and its
 * parts. */
static int cell_time(pp_report *r, const cells *c, size_t lo, size_t hi, int count,
                     size_t *nrows, size_t *nwalls) {
    cell_parts p = cell_scan(c, lo, hi);
    if (p.ndev == 0)
        return 0;
    int has_bracket = p.part_start != INT64_MAX || p.merge_start != INT64_MAX;
    int by_track = p.ndev == 1 && p.ntracks > 1 && has_bracket && (p.pattern_bracket || p.all_host);
    size_t nparts = p.ndev > 1 ? p.ndev : by_track ? p.ntracks : 1;
    if (count) {
        *nrows += nparts > 1;
        *nwalls += nparts > 1 ? nparts : 0;
        return 1;
    }
    uint64_t key = c->order[lo].key;
    uint32_t s = (uint32_t)(key % r->nstages);
    pp_stage_time *t = &r->times[r->ntimes++];
    *t = (pp_stage_time){.stage = s, .batch = an_batch_number(&r->bmap, key / r->nstages),
                         .measured_ns = -1};
    if (nparts == 1) {
        int64_t a = INT64_MAX, b = INT64_MIN;
        for (size_t k = lo; k < hi; k++)
            if (c->items[c->order[k].val].kind == ITEM_EXEC)
                hull(&a, &b, &c->items[c->order[k].val]);
        t->time_ns = b - a;
        return 1;
    }
    r->stages[s].data_parallel = 1;
    an_dp_row *row = &r->dp_rows[r->ndp_rows++];
    int has_part = p.part_start != INT64_MAX, has_merge = p.merge_start != INT64_MAX;
    *row = (an_dp_row){.stage = s, .batch = t->batch, .first = r->ndp_walls, .ndev = nparts,
                       .partition_ns = has_part ? p.part_end - p.part_start : 0,
                       .merge_ns = has_merge ? p.merge_end - p.merge_start : 0,
                       .measured_ns = has_part && has_merge ? p.merge_end - p.part_start : -1};
    dp_walls(r, c, lo, hi, by_track, row);
    t->time_ns = row->partition_ns + row->max_device_ns + row->merge_ns;
    t->measured_ns = row->measured_ns;
    return 1;
}

/* Every timed cell in (batch, stage) order: counted first, so that the
 * times and data-parallel tables are allocated once, then filled. */
static int times_compute(pp_report *r, const cells *c) {
    size_t ntimes = 0, nrows = 0, nwalls = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            r->times = an_alloc(ntimes, sizeof *r->times);
            r->dp_rows = an_alloc(nrows, sizeof *r->dp_rows);
            r->dp_walls = an_alloc(nwalls, sizeof *r->dp_walls);
            if (!r->times || !r->dp_rows || !r->dp_walls)
                return PP_ENOMEM;
        }
        for (size_t lo = 0, hi; lo < c->n; lo = hi) {
            for (hi = lo + 1; hi < c->n && c->order[hi].key == c->order[lo].key; hi++)
                ;
            if (pass == 0)
                ntimes += (size_t)cell_time(r, c, lo, hi, 1, &nrows, &nwalls);
            else
                cell_time(r, c, lo, hi, 0, NULL, NULL);
        }
    }
    return PP_OK;
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
        if (!x->inside || x->stage == AN_NONE)
            continue;
        pp_stage_stats *st = &r->stages[x->stage];
        int64_t hw = x->host ? 0 : an_hw_of(r->c.hw_ns[x->event]);
        st->execs++;
        host[x->stage] += x->host;
        if (hw == 0) {
            st->hw_unknown++;
            continue;
        }
        st->hw_ns = an_sat_add(st->hw_ns, hw);
        st->xfer_ns = an_sat_add(st->xfer_ns, an_hw_of(r->c.xfer_ns[x->event]));
        wall[x->stage] = an_sat_add(wall[x->stage], x->end - x->start);
        at[x->stage + 2]++;
    }
    for (size_t s = 0; rc == PP_OK && s < ns; s++)
        at[s + 2] += at[s + 1];
    for (size_t i = 0; rc == PP_OK && i < r->nexecs; i++) { /* at[s+1] is stage s's cursor */
        const an_exec *x = &r->execs[i];
        int64_t hw = x->host ? 0 : an_hw_of(r->c.hw_ns[x->event]);
        if (x->inside && x->stage != AN_NONE && hw != 0)
            pen[at[x->stage + 1]++] = (x->end - x->start) - hw;
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
    int rc = batch_map(r);
    if (rc == PP_OK && r->nstages > 0)
        rc = cells_build(r, &c);
    if (rc == PP_OK)
        rc = times_compute(r, &c);
    free(c.items), free(c.order);
    if (rc == PP_OK)
        rc = stage_exec_figures(r);
    if (rc == PP_OK)
        rc = time_summaries(r);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
