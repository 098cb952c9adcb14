/* stages.c — stage time(s, b) and the per-stage table (DESIGN.md §4).
 *
 * Everything labeled with a stage and a batch inside W (execs, and the
 * partition, merge and stage spans on host threads) widens the hulls of its
 * (stage, batch) cell: one hull per host role, and one per device the stage's
 * execs ran on. One pass over the events and one over the execs fill every
 * cell; each cell then gives one stage time:
 *   - execs on one device: first start to last end;
 *   - execs on more than one device (data parallel): partition + max device
 *     wall + merge, with the measured partition start .. merge end beside;
 *   - no execs: first start to last end of its stage spans. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

/* First start and last end of some spans in one cell, stored as ns after
 * W's start plus 1: a zeroed hull is empty, so the tables come from calloc.
 * Its length is end - start. */
typedef struct hull {
    int64_t start, end;
} hull;

static void hull_add(hull *h, int64_t start, int64_t end, int64_t base) {
    int64_t s = start - base + 1, e = end - base + 1; /* inside W: s >= 1 */
    if (h->start == 0 || s < h->start)
        h->start = s;
    if (e > h->end)
        h->end = e;
}

/* The cells of one stage, indexed by batch index. Device slots are numbered
 * in order of first sight. */
typedef struct stage_cells {
    hull *role[3];        /* partition, merge, stage spans; NULL: none yet */
    hull **dev;           /* dev[k][b]: the execs of device slot k */
    double **share;       /* share[k][b]: sum of "share" annotations, when recorded */
    uint8_t **annotated;  /* annotated[k][b]: some exec there had one */
    uint32_t *device;     /* device[k]: the report device of slot k */
    size_t ndev;
} stage_cells;

typedef struct cell_tables {
    stage_cells *st;
    size_t nb;
    uint32_t share_key;   /* string id of "share"; 0 when the model has none */
} cell_tables;

static void tables_free(cell_tables *t, size_t nstages) {
    for (size_t s = 0; t->st && s < nstages; s++) {
        stage_cells *sc = &t->st[s];
        for (size_t k = 0; k < 3; k++)
            free(sc->role[k]);
        for (size_t k = 0; k < sc->ndev; k++) {
            free(sc->dev[k]);
            free(sc->share ? sc->share[k] : NULL);
            free(sc->annotated ? sc->annotated[k] : NULL);
        }
        free(sc->dev), free(sc->share), free(sc->annotated), free(sc->device);
    }
    free(t->st);
}

static int resize(void **p, size_t n, size_t elem) {
    void *q = realloc(*p, n * elem);
    if (q)
        *p = q;
    return q != NULL;
}

/* The slot of `device` in stage sc, added with its zeroed tables when new
 * (SIZE_MAX on no memory). Every per-slot array grows before ndev counts
 * the slot, so that tables_free never meets half a slot. */
static size_t slot_of(stage_cells *sc, uint32_t device, size_t nb, int shares) {
    size_t k = 0;
    while (k < sc->ndev && sc->device[k] != device)
        k++;
    if (k < sc->ndev)
        return k;
    if (!resize((void **)&sc->dev, k + 1, sizeof *sc->dev) ||
        !resize((void **)&sc->device, k + 1, sizeof *sc->device) ||
        (shares && (!resize((void **)&sc->share, k + 1, sizeof *sc->share) ||
                    !resize((void **)&sc->annotated, k + 1, sizeof *sc->annotated))))
        return SIZE_MAX;
    hull *h = an_calloc(nb, sizeof *h);
    double *share = shares ? an_calloc(nb, sizeof *share) : NULL;
    uint8_t *annotated = shares ? an_calloc(nb, sizeof *annotated) : NULL;
    if (!h || (shares && (!share || !annotated))) {
        free(h), free(share), free(annotated);
        return SIZE_MAX;
    }
    sc->dev[k] = h;
    sc->device[k] = device;
    if (shares)
        sc->share[k] = share, sc->annotated[k] = annotated;
    sc->ndev++;
    return k;
}

/* Adds the "share" annotation of exec `event`, if it has one, to its cell.
 * *k is a cursor into the annotation table (sorted by event): the execs come
 * in event order, so all of them are read in one pass over the table. */
static void exec_share(const pp_annotation *a, size_t na, size_t *k, uint32_t key, size_t event,
                       double *share, uint8_t *annotated) {
    while (*k < na && a[*k].event < event)
        (*k)++;
    for (size_t j = *k; j < na && a[j].event == event; j++) {
        if (a[j].key == key && a[j].type == PP_VALUE_DOUBLE) {
            *share += a[j].v.d;
            *annotated = 1;
            return;
        }
    }
}

static int is_host_span(const pp_report *r, size_t i) {
    const pp_event_columns *c = &r->c;
    uint8_t role = c->role[i];
    return c->kind[i] == PP_EV_SPAN && c->batch[i] >= 0 && c->stage[i] != 0 &&
           (role == PP_ROLE_PARTITION || role == PP_ROLE_MERGE || role == PP_ROLE_STAGE) &&
           an_inside(r, c->ts_ns[i], c->dur_ns[i]);
}

/* The batch map of everything labeled: dense in the usual case; else the
 * labeled batch numbers are gathered, sorted and made distinct. */
static int batch_map(pp_report *r) {
    if (an_batch_map_dense(&r->bmap, r->label_lo, r->label_hi, r->nlabeled))
        return PP_OK;
    int64_t *v = an_buf_get(&r->values, r->nlabeled * sizeof *v);
    if (!v)
        return PP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (x->inside && x->stage != AN_NONE && x->batch >= 0)
            v[k++] = x->batch;
    }
    for (size_t i = 0; i < r->c.count; i++)
        if (is_host_span(r, i))
            v[k++] = r->c.batch[i];
    return an_batch_map_sparse(r, &r->bmap, v, k);
}

/* One pass over the events (host spans) and one over the execs. */
static int cells_fill(pp_report *r, cell_tables *t) {
    const pp_event_columns *c = &r->c;
    const int64_t base = r->window.start_ns;
    for (size_t i = 0; i < c->count; i++) {
        if (!is_host_span(r, i))
            continue;
        stage_cells *sc = &t->st[r->stage_of_string[c->stage[i]]];
        hull **role = &sc->role[c->role[i] - PP_ROLE_PARTITION];
        if (!*role && !(*role = an_calloc(t->nb, sizeof **role)))
            return PP_ENOMEM;
        hull_add(&(*role)[an_batch_index(&r->bmap, c->batch[i])], c->ts_ns[i],
                 c->ts_ns[i] + c->dur_ns[i], base);
    }
    size_t na, cursor = 0;
    const pp_annotation *a = pp_model_annotations(r->m, &na);
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (!x->inside || x->stage == AN_NONE || x->batch < 0)
            continue;
        stage_cells *sc = &t->st[x->stage];
        size_t k = slot_of(sc, x->device, t->nb, t->share_key != 0);
        if (k == SIZE_MAX)
            return PP_ENOMEM;
        size_t b = an_batch_index(&r->bmap, x->batch);
        hull_add(&sc->dev[k][b], x->start, x->end, base);
        if (t->share_key)
            exec_share(a, na, &cursor, t->share_key, x->event, &sc->share[k][b],
                       &sc->annotated[k][b]);
    }
    return PP_OK;
}

static int64_t hull_len(const hull *h) {
    return h->end - h->start;
}

/* Device slots of cell b with execs; 0 when none. */
static size_t devices_in(const stage_cells *sc, size_t b) {
    size_t n = 0;
    for (size_t k = 0; k < sc->ndev; k++)
        n += sc->dev[k][b].start != 0;
    return n;
}

/* A data-parallel cell: its row, one wall per device, and its stage time. */
static void dp_cell(pp_report *r, const stage_cells *sc, size_t b, size_t ndev,
                    pp_stage_time *t) {
    static const hull none = {0, 0};
    const hull *part = sc->role[0] ? &sc->role[0][b] : &none;
    const hull *merge = sc->role[1] ? &sc->role[1][b] : &none;
    an_dp_row *row = &r->dp_rows[r->ndp_rows++];
    *row = (an_dp_row){.stage = t->stage, .batch = t->batch, .first = r->ndp_walls,
                       .ndev = ndev, .partition_ns = hull_len(part), .merge_ns = hull_len(merge),
                       .measured_ns = part->start && merge->start ? merge->end - part->start : -1};
    for (size_t k = 0; k < sc->ndev; k++) {
        const hull *h = &sc->dev[k][b];
        if (h->start == 0)
            continue;
        /* without a recorded share, the runtime's default even split */
        int annotated = sc->annotated && sc->annotated[k][b];
        r->dp_walls[r->ndp_walls++] =
            (an_dp_wall){sc->device[k], hull_len(h), annotated ? sc->share[k][b] : 1.0 / ndev};
        if (hull_len(h) > row->max_device_ns)
            row->max_device_ns = hull_len(h);
    }
    t->time_ns = row->partition_ns + row->max_device_ns + row->merge_ns;
    t->measured_ns = row->measured_ns;
}

/* The time of cell (s, b): 1 when timed, 0 when it has no execs and no stage
 * span (nothing, or only partition or merge spans). With `count` set, only
 * counts what the cell would add: a time, a data-parallel row and walls. */
static int cell_time(pp_report *r, const stage_cells *sc, uint32_t s, size_t b, int count,
                     size_t *nrows, size_t *nwalls) {
    size_t ndev = devices_in(sc, b);
    const hull *stage = sc->role[2] ? &sc->role[2][b] : NULL;
    if (ndev == 0 && (!stage || stage->start == 0))
        return 0;
    if (count) {
        *nrows += ndev > 1;
        *nwalls += ndev > 1 ? ndev : 0;
        return 1;
    }
    pp_stage_time *t = &r->times[r->ntimes++];
    *t = (pp_stage_time){.stage = s, .batch = an_batch_number(&r->bmap, b), .measured_ns = -1};
    if (ndev > 1) {
        r->stages[s].data_parallel = 1;
        dp_cell(r, sc, b, ndev, t);
    } else if (ndev == 1) {
        size_t k = 0;
        while (sc->dev[k][b].start == 0)
            k++;
        t->time_ns = hull_len(&sc->dev[k][b]);
    } else {
        t->time_ns = hull_len(stage);
    }
    return 1;
}

/* Every timed cell in (batch, stage) order: counted first, so that the
 * times and data-parallel tables are allocated once, then filled. */
static int times_compute(pp_report *r, const cell_tables *t) {
    size_t ntimes = 0, nrows = 0, nwalls = 0;
    for (size_t b = 0; b < t->nb; b++)
        for (uint32_t s = 0; s < r->nstages; s++)
            ntimes += (size_t)cell_time(r, &t->st[s], s, b, 1, &nrows, &nwalls);
    r->times = an_alloc(ntimes, sizeof *r->times);
    r->dp_rows = an_alloc(nrows, sizeof *r->dp_rows);
    r->dp_walls = an_alloc(nwalls, sizeof *r->dp_walls);
    if (!r->times || !r->dp_rows || !r->dp_walls)
        return PP_ENOMEM;
    for (size_t b = 0; b < t->nb; b++)
        for (uint32_t s = 0; s < r->nstages; s++)
            cell_time(r, &t->st[s], s, b, 0, NULL, NULL);
    return PP_OK;
}

/* Per-stage exec figures: counts, hardware sums, concurrency penalty. The
 * penalties are grouped by stage with one counting sort. */
static int stage_exec_figures(pp_report *r) {
    size_t ns = r->nstages;
    size_t *at = calloc(ns + 2, sizeof *at);
    int64_t *wall = calloc(ns ? ns : 1, sizeof *wall);
    int64_t *pen = at && wall ? an_buf_get(&r->values, (r->nexecs ? r->nexecs : 1) * sizeof *pen)
                              : NULL;
    int rc = pen ? PP_OK : PP_ENOMEM;
    for (size_t i = 0; rc == PP_OK && i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (!x->inside || x->stage == AN_NONE)
            continue;
        pp_stage_stats *st = &r->stages[x->stage];
        uint64_t hw = r->c.hw_ns[x->event];
        st->execs++;
        if (hw == 0) {
            st->hw_unknown++;
            continue;
        }
        st->hw_ns += (int64_t)hw;
        st->xfer_ns += (int64_t)r->c.xfer_ns[x->event];
        wall[x->stage] += x->end - x->start;
        at[x->stage + 2]++;
    }
    for (size_t s = 0; rc == PP_OK && s < ns; s++)
        at[s + 2] += at[s + 1];
    for (size_t i = 0; rc == PP_OK && i < r->nexecs; i++) { /* at[s+1] is stage s's cursor */
        const an_exec *x = &r->execs[i];
        uint64_t hw = r->c.hw_ns[x->event];
        if (x->inside && x->stage != AN_NONE && hw != 0)
            pen[at[x->stage + 1]++] = (x->end - x->start) - (int64_t)hw;
    }
    for (size_t s = 0; rc == PP_OK && s < ns; s++) {
        pp_stage_stats *st = &r->stages[s];
        rc = an_summary(r, pen + at[s], at[s + 1] - at[s], &st->penalty);
        st->penalty_pct_wall = 100.0 * an_ratio(st->penalty.total, wall[s]);
        st->exec_less = st->execs == 0;
    }
    free(at);
    free(wall);
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
    cell_tables t = {.share_key = pp_model_find_string(r->m, "share")};
    int rc = batch_map(r);
    if (rc == PP_OK) {
        t.nb = r->bmap.count;
        t.st = calloc(r->nstages ? r->nstages : 1, sizeof *t.st);
        rc = t.st ? cells_fill(r, &t) : PP_ENOMEM;
    }
    if (rc == PP_OK)
        rc = times_compute(r, &t);
    tables_free(&t, r->nstages);
    if (rc == PP_OK)
        rc = stage_exec_figures(r);
    if (rc == PP_OK)
        rc = time_summaries(r);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
