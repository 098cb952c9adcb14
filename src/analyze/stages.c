/* stages.c — stage time(s, b) and the per-stage table (DESIGN.md §4).
 *
 * Everything labeled with a stage and a batch inside W (execs, and the
 * partition, merge and stage spans on host threads) is sorted by (stage,
 * batch); each group gives one stage time:
 *   - execs on one device: first start to last end;
 *   - execs on more than one device (data parallel): partition + max device
 *     wall + merge, with the measured partition start .. merge end beside;
 *   - no execs: first start to last end of its stage spans. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

typedef struct item {
    int64_t batch, start, end;
    size_t event;
    uint32_t stage, device; /* device AN_NONE for host spans */
    uint8_t role;
} item;

/* Order inside one (stage, batch) group: execs by device then start, host
 * spans (device AN_NONE) last. */
static int cmp_item(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* Reorders the (stage, batch)-ordered times by batch, keeping stage order
 * within a batch (the radix sort is stable). */
static int times_by_batch(pp_report *r) {
    an_kv *kv = malloc((r->ntimes ? r->ntimes : 1) * sizeof *kv);
    pp_stage_time *sorted = malloc((r->ntimes ? r->ntimes : 1) * sizeof *sorted);
    int rc = kv && sorted ? PP_OK : PP_ENOMEM;
    for (size_t i = 0; rc == PP_OK && i < r->ntimes; i++)
        kv[i] = (an_kv){an_key_i64(r->times[i].batch), i};
    if (rc == PP_OK)
        rc = an_kv_sort(kv, r->ntimes);
    for (size_t i = 0; rc == PP_OK && i < r->ntimes; i++)
        sorted[i] = r->times[kv[i].val];
    free(kv);
    if (rc != PP_OK) {
        free(sorted);
        return rc;
    }
    free(r->times);
    r->times = sorted;
    return PP_OK;
}

/* Adds the "share" annotation of exec `event` to *share; 0 when it has none. */
static int exec_share(const pp_model *m, size_t event, double *share) {
    size_t first, n;
    pp_model_annotations_of(m, event, &first, &n);
    size_t total;
    const pp_annotation *a = pp_model_annotations(m, &total);
    uint32_t key = pp_model_find_string(m, "share");
    for (size_t k = first; key != 0 && k < first + n; k++)
        if (a[k].key == key && a[k].type == PP_VALUE_DOUBLE)
            return *share += a[k].v.d, 1;
    return 0;
}

/* Hull [*s, *e) of the items of `role` (host spans) in g[0..n); 0 if none. */
static int role_hull(const item *g, size_t n, uint8_t role, int64_t *s, int64_t *e) {
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        if (g[i].device != AN_NONE || g[i].role != role)
            continue;
        if (!found || g[i].start < *s)
            *s = g[i].start;
        if (!found || g[i].end > *e)
            *e = g[i].end;
        found = 1;
    }
    return found;
}

/* A data-parallel group: records its row and per-device walls. */
static int dp_group(pp_report *r, const pp_model *m, const item *g, size_t n, size_t ndev,
                    pp_stage_time *t) {
    an_dp_row row = {.stage = t->stage, .batch = t->batch, .measured_ns = -1};
    an_dp_wall *walls = realloc(r->dp_walls, (r->ndp_walls + ndev) * sizeof *walls);
    an_dp_row *rows = realloc(r->dp_rows, (r->ndp_rows + 1) * sizeof *rows);
    if (walls)
        r->dp_walls = walls;
    if (rows)
        r->dp_rows = rows;
    if (!walls || !rows)
        return PP_ENOMEM;
    row.first = r->ndp_walls;
    for (size_t i = 0; i < n && g[i].device != AN_NONE;) { /* execs come first */
        size_t j = i;
        int64_t s = g[i].start, e = g[i].end;
        double share = 0;
        int annotated = 0;
        for (; j < n && g[j].device == g[i].device; j++) {
            e = g[j].end > e ? g[j].end : e;
            annotated |= exec_share(m, g[j].event, &share);
        }
        /* without a recorded share, the runtime's default even split */
        walls[r->ndp_walls++] =
            (an_dp_wall){g[i].device, e - s, annotated ? share : 1.0 / (double)ndev};
        if (e - s > row.max_device_ns)
            row.max_device_ns = e - s;
        i = j;
    }
    row.ndev = ndev;
    int64_t ps = 0, pe = 0, ms = 0, me = 0;
    int has_p = role_hull(g, n, PP_ROLE_PARTITION, &ps, &pe);
    int has_m = role_hull(g, n, PP_ROLE_MERGE, &ms, &me);
    row.partition_ns = has_p ? pe - ps : 0;
    row.merge_ns = has_m ? me - ms : 0;
    if (has_p && has_m)
        row.measured_ns = me - ps;
    t->time_ns = row.partition_ns + row.max_device_ns + row.merge_ns;
    t->measured_ns = row.measured_ns;
    rows[r->ndp_rows++] = row;
    return PP_OK;
}

/* One (stage, batch) group g[0..n), sorted with execs (device order) before
 * host spans (device AN_NONE sorts last). */
static int group_time(pp_report *r, const pp_model *m, const item *g, size_t n,
                      pp_stage_time *t) {
    *t = (pp_stage_time){.stage = g[0].stage, .batch = g[0].batch, .measured_ns = -1};
    size_t ndev = 0, nexec = 0;
    int64_t s = 0, e = 0;
    for (size_t i = 0; i < n && g[i].device != AN_NONE; i++, nexec++) {
        ndev += i == 0 || g[i].device != g[i - 1].device;
        s = i == 0 || g[i].start < s ? g[i].start : s;
        e = i == 0 || g[i].end > e ? g[i].end : e;
    }
    if (ndev > 1) {
        r->stages[t->stage].data_parallel = 1;
        return dp_group(r, m, g, n, ndev, t);
    }
    if (nexec == 0 && !role_hull(g, n, PP_ROLE_STAGE, &s, &e))
        return 1; /* only partition/merge spans: not a timed stage */
    t->time_ns = e - s;
    return PP_OK;
}

/* A reference to one labeled thing inside W: an exec (index into the exec
 * view) or, with HOST set, a host span (model event index). Sorting these
 * 16-byte keys instead of whole items keeps a 10M-event analysis small. */
#define HOST (UINT64_C(1) << 63)

static int is_host_span(const pp_report *r, const pp_event_columns *c, size_t i) {
    uint8_t role = c->role[i];
    return c->kind[i] == PP_EV_SPAN && c->batch[i] >= 0 && c->stage[i] != 0 &&
           (role == PP_ROLE_PARTITION || role == PP_ROLE_MERGE || role == PP_ROLE_STAGE) &&
           an_inside(r, c->ts_ns[i], c->dur_ns[i]);
}

static item item_of(const pp_report *r, const pp_event_columns *c, uint64_t ref) {
    if (ref & HOST) {
        size_t i = (size_t)(ref & ~HOST);
        return (item){c->batch[i], c->ts_ns[i], c->ts_ns[i] + c->dur_ns[i], i,
                      r->stage_of_string[c->stage[i]], AN_NONE, c->role[i]};
    }
    const an_exec *x = &r->execs[ref];
    return (item){x->batch, x->start, x->end, x->event, x->stage, x->device, PP_ROLE_EXEC};
}

/* References to everything labeled inside W, grouped by (stage, batch): two
 * stable radix passes, batch then stage. */
static int group_order(const pp_report *r, const pp_event_columns *c, an_kv **out, size_t *nout) {
    size_t n = 0;
    for (size_t i = 0; i < r->nexecs; i++)
        n += r->execs[i].inside && r->execs[i].stage != AN_NONE && r->execs[i].batch >= 0;
    for (size_t i = 0; i < c->count; i++)
        n += is_host_span(r, c, i);
    an_kv *kv = malloc((n ? n : 1) * sizeof *kv);
    if (!kv)
        return PP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < r->nexecs; i++)
        if (r->execs[i].inside && r->execs[i].stage != AN_NONE && r->execs[i].batch >= 0)
            kv[k++] = (an_kv){an_key_i64(r->execs[i].batch), i};
    for (size_t i = 0; i < c->count; i++)
        if (is_host_span(r, c, i))
            kv[k++] = (an_kv){an_key_i64(c->batch[i]), i | HOST};
    int rc = an_kv_sort(kv, n);
    for (size_t i = 0; rc == PP_OK && i < n; i++)
        kv[i].key = item_of(r, c, kv[i].val).stage;
    if (rc == PP_OK)
        rc = an_kv_sort(kv, n);
    if (rc != PP_OK) {
        free(kv);
        return rc;
    }
    *out = kv;
    *nout = n;
    return PP_OK;
}

/* Per-stage exec figures: counts, hardware sums, concurrency penalty. */
static int stage_exec_figures(pp_report *r) {
    int64_t *pen = malloc((r->nexecs ? r->nexecs : 1) * sizeof *pen);
    if (!pen)
        return PP_ENOMEM;
    for (uint32_t s = 0; s < r->nstages; s++) {
        pp_stage_stats *st = &r->stages[s];
        size_t npen = 0;
        int64_t wall = 0;
        for (size_t i = 0; i < r->nexecs; i++) {
            const an_exec *x = &r->execs[i];
            if (!x->inside || x->stage != s)
                continue;
            st->execs++;
            if (x->hw == 0) {
                st->hw_unknown++;
                continue;
            }
            st->hw_ns += (int64_t)x->hw;
            st->xfer_ns += (int64_t)x->xfer;
            wall += x->end - x->start;
            pen[npen++] = (x->end - x->start) - (int64_t)x->hw;
        }
        pp_summary_compute(pen, npen, &st->penalty);
        st->penalty_pct_wall = 100.0 * an_ratio(st->penalty.total, wall);
        st->exec_less = st->execs == 0;
    }
    free(pen);
    return PP_OK;
}

int an_stages_compute(pp_report *r, const pp_model *m, pp_error *err) {
    r->stages = calloc(r->nstages ? r->nstages : 1, sizeof *r->stages);
    if (!r->stages)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    for (size_t s = 0; s < r->nstages; s++)
        r->stages[s].name = r->stage_names[s];
    pp_event_columns c;
    pp_model_columns(m, &c);
    item *group = NULL;
    an_kv *order = NULL;
    size_t n = 0, cap = 0;
    int rc = group_order(r, &c, &order, &n);
    size_t ngroups = 0; /* one stage time per group at most */
    for (size_t i = 0; rc == PP_OK && i < n; i++) {
        item a = item_of(r, &c, order[i].val), b = i ? item_of(r, &c, order[i - 1].val) : a;
        ngroups += i == 0 || a.stage != b.stage || a.batch != b.batch;
    }
    if (rc == PP_OK) {
        r->times = malloc((ngroups ? ngroups : 1) * sizeof *r->times);
        rc = r->times ? PP_OK : PP_ENOMEM;
    }
    for (size_t i = 0; rc == PP_OK && i < n;) {
        const item head = item_of(r, &c, order[i].val);
        size_t j = i + 1;
        for (; j < n; j++) {
            item next = item_of(r, &c, order[j].val);
            if (next.stage != head.stage || next.batch != head.batch)
                break;
        }
        if (j - i > cap) {
            item *g = realloc(group, (j - i) * sizeof *g);
            if (!g) {
                rc = PP_ENOMEM;
                break;
            }
            group = g, cap = j - i;
        }
        for (size_t k = i; k < j; k++)
            group[k - i] = item_of(r, &c, order[k].val);
        qsort(group, j - i, sizeof *group, cmp_item);
        int g = group_time(r, m, group, j - i, &r->times[r->ntimes]);
        if (g < 0)
            rc = g;
        else if (g == PP_OK)
            r->ntimes++;
        i = j;
    }
    free(order);
    free(group);
    if (rc == PP_OK)
        rc = stage_exec_figures(r);
    if (rc != PP_OK)
        return pp_set_error(err, rc, "out of memory");
    /* the summaries need each stage's times together: they are, in (stage,
     * batch) order, before the sort by batch that cycles.c reads */
    int64_t *vals = malloc((r->ntimes ? r->ntimes : 1) * sizeof *vals);
    if (!vals)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->ntimes;) {
        size_t j = i;
        for (; j < r->ntimes && r->times[j].stage == r->times[i].stage; j++)
            vals[j - i] = r->times[j].time_ns;
        pp_summary_compute(vals, j - i, &r->stages[r->times[i].stage].time);
        i = j;
    }
    free(vals);
    rc = times_by_batch(r);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
