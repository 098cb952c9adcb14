/* decompose.c — the wall decomposition (docs/analysis.md): each exec's wall
 * split into submit, queue, device (with its transfer and contention parts),
 * completion and unattributed; their sums per stage and device; the clock
 * alignment of devices with clocks of their own; and the finding naming
 * the largest non-device part where it dominates.
 *
 * The parts are exact by construction: device = min(hw, wall), then
 * submit, queue and completion as recorded, each cut to what is left of the
 * wall (a recording whose device times were clamped, or a foreign trace,
 * can never make a part negative or the sum differ from wall), and
 * unattributed is the remainder. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

typedef struct keys {
    uint32_t submit, queue, completion; /* model string ids; 0: no exec has it */
} keys;

static keys keys_of(const pp_model *m) {
    return (keys){pp_model_find_string(m, "submit_ns"), pp_model_find_string(m, "queue_ns"),
                  pp_model_find_string(m, "completion_ns")};
}

/* The exec's recorded split: 1 when it has all three annotations. */
static int recorded_split(const pp_model *m, const keys *k, size_t event, int64_t v[3]) {
    if (!k->submit || !k->queue || !k->completion)
        return 0;
    size_t first, n, found = 0;
    const pp_ann *a = pp_model_anns(m, &first);
    pp_model_annotations_of(m, event, &first, &n);
    for (size_t i = first; i < first + n; i++) {
        if (pp_ann_type(&a[i]) != PP_VALUE_INT)
            continue;
        int slot = pp_ann_key(&a[i]) == k->submit ? 0 : pp_ann_key(&a[i]) == k->queue ? 1
                 : pp_ann_key(&a[i]) == k->completion ? 2 : -1;
        if (slot >= 0) {
            v[slot] = a[i].v.i;
            found |= 1u << slot;
        }
    }
    return found == 7;
}

static int64_t take(int64_t want, int64_t *left) {
    int64_t v = want < 0 ? 0 : want > *left ? *left : want;
    *left -= v;
    return v;
}

/* The parts of the exec at model event `event` with wall `wall` (a real
 * exec's duration). */
static void split(const pp_model *m, const pp_cols *c, const keys *k, size_t event,
                  int64_t wall, int64_t isolated, pp_wall_parts *p, int *was_split) {
    uint64_t hw = pp_cols_hw(c, event), xfer = pp_cols_xfer(c, event);
    int64_t left = wall;
    *p = (pp_wall_parts){.wall_ns = left};
    p->device_ns = take(hw > (uint64_t)left ? left : (int64_t)hw, &left);
    p->xfer_ns = xfer > (uint64_t)p->device_ns ? p->device_ns : (int64_t)xfer;
    if (isolated > 0 && hw != 0 && p->device_ns > isolated)
        p->contention_ns = p->device_ns - isolated;
    int64_t v[3];
    *was_split = hw != 0 && recorded_split(m, k, event, v);
    if (*was_split) {
        p->submit_ns = take(v[0], &left);
        p->queue_ns = take(v[1], &left);
        p->completion_ns = take(v[2], &left);
    }
    p->unattributed_ns = left;
}

/* The isolated hw_ns of (stage, device) from the lookup table, 0 where
 * none was given (the table holds few entries: a linear search). */
static int64_t isolated_of(const pp_report *r, const pp_analyze_options *o, uint32_t s,
                           uint32_t d) {
    for (size_t i = 0; s != AN_NONE && i < o->nisolated; i++)
        if (an_find_stage(r, o->isolated[i].stage) == s &&
            an_find_device(r, o->isolated[i].device) == d)
            return o->isolated[i].hw_ns;
    return 0;
}

static void add_parts(pp_wall_parts *sum, const pp_wall_parts *p) {
    sum->wall_ns = an_sat_add(sum->wall_ns, p->wall_ns);
    sum->submit_ns = an_sat_add(sum->submit_ns, p->submit_ns);
    sum->queue_ns = an_sat_add(sum->queue_ns, p->queue_ns);
    sum->device_ns = an_sat_add(sum->device_ns, p->device_ns);
    sum->completion_ns = an_sat_add(sum->completion_ns, p->completion_ns);
    sum->unattributed_ns = an_sat_add(sum->unattributed_ns, p->unattributed_ns);
    sum->xfer_ns = an_sat_add(sum->xfer_ns, p->xfer_ns);
    sum->contention_ns = an_sat_add(sum->contention_ns, p->contention_ns);
}

/* Per device: the method and largest error bound of its clock marks. */
static int clocks_collect(pp_report *r) {
    uint32_t name = pp_model_find_string(r->m, "clock alignment");
    uint32_t kmethod = pp_model_find_string(r->m, "method");
    uint32_t kerror = pp_model_find_string(r->m, "error_ns");
    if (!name || !kmethod || !kerror)
        return PP_OK;
    size_t nann;
    const pp_ann *a = pp_model_anns(r->m, &nann);
    for (size_t i = 0; i < r->c.count; i++) {
        if (r->c.kind[i] != PP_EV_INSTANT || pp_cols_name(&r->c, i) != name)
            continue;
        uint32_t d = r->track_device[pp_cols_track(&r->c, i)];
        if (d == AN_NONE)
            continue;
        size_t first, n;
        pp_model_annotations_of(r->m, i, &first, &n);
        const char *method = NULL;
        int64_t error = -1;
        for (size_t k = first; k < first + n; k++) {
            if (pp_ann_key(&a[k]) == kmethod && pp_ann_type(&a[k]) == PP_VALUE_STR)
                method = pp_model_string(r->m, a[k].v.s);
            else if (pp_ann_key(&a[k]) == kerror && pp_ann_type(&a[k]) == PP_VALUE_INT)
                error = a[k].v.i;
        }
        if (!method || error < 0)
            continue;
        method = an_keep_text(r, method); /* the report's own: it may outlive the model */
        if (!method)
            return PP_ENOMEM;
        size_t j = 0;
        while (j < r->nclocks && r->clocks[j].device != d)
            j++;
        if (j == r->nclocks) {
            pp_clock_stats *g = realloc(r->clocks, (r->nclocks + 1) * sizeof *g);
            if (!g)
                return PP_ENOMEM;
            r->clocks = g;
            r->clocks[r->nclocks++] = (pp_clock_stats){.device = d, .method = method, .error_ns = error};
        } else if (error > r->clocks[j].error_ns) {
            r->clocks[j].error_ns = error;
            r->clocks[j].method = method;
        }
    }
    return PP_OK;
}

/* The cells met so far, in order of first appearance, and an
 * open-addressing index over their (stage, device) keys. */
typedef struct cell_table {
    pp_decomp_stats *cells;
    int64_t *iso;
    size_t n, cap;
    an_index index;
} cell_table;

static size_t cell_hash(uint32_t stage, uint32_t device) {
    uint64_t h = (((uint64_t)stage << 32) | device) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17);
}

static size_t cell_hash_at(const void *cells, size_t i) {
    const pp_decomp_stats *c = (const pp_decomp_stats *)cells + i;
    return cell_hash(c->stage, c->device);
}

static int cells_rehash(cell_table *t, size_t nslot) {
    return an_index_rebuild(&t->index, nslot, t->n, cell_hash_at, t->cells);
}

/* The cell of (stage, device), added when new with its isolated time;
 * UINT32_MAX on no memory. */
static uint32_t cell_of(const pp_report *r, const pp_analyze_options *o, cell_table *t,
                        uint32_t stage, uint32_t device) {
    an_index *x = &t->index;
    size_t h = cell_hash(stage, device) & (x->nslot - 1);
    for (; x->slot[h]; h = (h + 1) & (x->nslot - 1)) {
        const pp_decomp_stats *c = &t->cells[x->slot[h] - 1];
        if (c->stage == stage && c->device == device)
            return x->slot[h] - 1;
    }
    if (t->n >= UINT32_MAX - 1)
        return UINT32_MAX;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        pp_decomp_stats *cells = realloc(t->cells, cap * sizeof *cells);
        if (cells)
            t->cells = cells;
        int64_t *iso = cells ? realloc(t->iso, cap * sizeof *iso) : NULL;
        if (!iso)
            return UINT32_MAX;
        t->iso = iso;
        t->cap = cap;
    }
    int64_t isolated = isolated_of(r, o, stage, device);
    t->iso[t->n] = isolated;
    t->cells[t->n] = (pp_decomp_stats){.stage = stage, .device = device,
                                       .has_contention = isolated > 0};
    x->slot[h] = (uint32_t)++t->n;
    if (2 * t->n > x->nslot && cells_rehash(t, 2 * x->nslot) != PP_OK) /* half empty */
        return UINT32_MAX;
    return (uint32_t)t->n - 1;
}

/* Report order of the cells: by stage (execs without one last), then by
 * device. */
static int cmp_cell(const void *a, const void *b) {
    const pp_decomp_stats *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1; /* AN_NONE is the largest */
    return (x->device > y->device) - (x->device < y->device);
}

/* Sorts the cells into report order (with their isolated times) and
 * renumbers the execs' cells. */
static int cells_order(pp_report *r, cell_table *t, uint32_t *exec_cell, size_t n) {
    pp_decomp_stats *sorted = malloc((t->n ? t->n : 1) * sizeof *sorted);
    int64_t *iso = malloc((t->n ? t->n : 1) * sizeof *iso);
    uint32_t *rank = malloc((t->n ? t->n : 1) * sizeof *rank);
    if (!sorted || !iso || !rank) {
        free(sorted), free(iso), free(rank);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < t->n; i++) /* the first-appearance index rides in `split` */
        sorted[i] = t->cells[i], sorted[i].split = i;
    qsort(sorted, t->n, sizeof *sorted, cmp_cell);
    for (size_t i = 0; i < t->n; i++) {
        size_t old = (size_t)sorted[i].split;
        rank[old] = (uint32_t)i;
        iso[i] = t->iso[old];
        sorted[i].split = t->cells[old].split;
    }
    for (size_t i = 0; i < n; i++)
        exec_cell[i] = rank[exec_cell[i]];
    free(rank);
    r->decomp = sorted;
    r->ndecomp = t->n;
    r->decomp_iso = iso;
    return PP_OK;
}

/* A device exec of the decomposition: a real exec (not host work: it is no
 * request to a device, and all of it would read as unattributed) lying
 * entirely inside W. */
static int decomposed(const pp_report *r, const an_exec *x) {
    return an_exec_inside(r, x) && !an_exec_is_host(r, x);
}

/* One pass over the device execs inside W, in event order: each exec's
 * parts are added to its (stage, device) cell, and its cell is kept (4
 * bytes an exec); pp_report_exec_parts computes the parts from the model
 * when asked. The sums of a cell are made in event order. */
int an_decompose_compute(pp_report *r, const pp_analyze_options *o, pp_error *err) {
    keys k = keys_of(r->m);
    cell_table t = {0};
    uint32_t *exec_cell = an_alloc(r->nreal, sizeof *exec_cell);
    int rc = exec_cell ? cells_rehash(&t, 64) : PP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; rc == PP_OK && i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (!decomposed(r, x))
            continue;
        uint32_t cell = cell_of(r, o, &t, x->stage, an_exec_device(r, x));
        if (cell == UINT32_MAX) {
            rc = PP_ENOMEM;
            break;
        }
        pp_decomp_stats *c = &t.cells[cell];
        pp_wall_parts parts;
        int was_split;
        split(r->m, &r->c, &k, x->event, pp_cols_dur(&r->c, x->event), t.iso[cell], &parts,
              &was_split);
        c->execs++;
        c->split += (uint64_t)was_split;
        add_parts(&c->total, &parts);
        exec_cell[n++] = cell;
    }
    if (rc == PP_OK)
        rc = cells_order(r, &t, exec_cell, n);
    free(t.cells), free(t.iso), free(t.index.slot);
    if (rc == PP_OK && n > 0 && n < r->nreal) { /* a failed shrink keeps the larger table */
        uint32_t *shrunk = realloc(exec_cell, n * sizeof *shrunk);
        exec_cell = shrunk ? shrunk : exec_cell;
    }
    r->part_cells = exec_cell;
    r->npart_cells = rc == PP_OK ? n : 0;
    if (rc == PP_OK)
        rc = clocks_collect(r);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}

/* What each non-device part means for the user, for the finding. */
static const char *const part_names[] = {"submit time (host call until the device has it)",
                                         "queue wait", "completion time (device end to host)",
                                         "not device time (the backend cannot split it)"};
static const char *const part_advice[] = {
    ("handing a request to the device (driver call, launch, thread wake-up) is slow; more work "
     "per request amortizes it"),
    "requests queue behind each other; more requests in flight will not help",
    "the host sees results late; look at the thread that waits for them",
    NULL /* unattributed: advice that depends on the device's backend, below */};

/* A (stage, device) whose largest non-device part holds at least a third
 * of its wall and more than its device time. */
int an_decompose_findings(pp_report *r) {
    for (size_t i = 0; i < r->ndecomp; i++) {
        const pp_decomp_stats *c = &r->decomp[i];
        const pp_wall_parts *t = &c->total;
        int64_t part[4] = {t->submit_ns, t->queue_ns, t->completion_ns, t->unattributed_ns};
        int big = 0;
        for (int p = 1; p < 4; p++)
            if (part[p] > part[big])
                big = p;
        /* a running mean or a hardware time above wall is no request's own
         * device time: wall minus it says nothing of this request (the
         * hardware-time finding says so instead) */
        if (t->wall_ns <= 0 || part[big] <= t->device_ns ||
            (r->devices[c->device].hw_quality & (PP_HW_RUNNING_MEAN | PP_HW_ABOVE_WALL)))
            continue;
        double share = (double)part[big] / (double)t->wall_ns;
        if (share < PP_FINDING_WALL_PART_SHARE)
            continue;
        char dev[96];
        an_device_label(r, c->device, dev, sizeof dev);
        const char *stage = c->stage == AN_NONE ? "(no stage)" : r->stages[c->stage].name;
        /* Only a backend pipeprof can run on that device could time the
         * rest: the opencl backend for an opencl device; for others, the
         * statement without a backend the user does not deploy on. */
        const char *advice = part_advice[big];
        if (!advice)
            advice = strncmp(dev, "opencl", 6) == 0
                         ? "record with device timestamps (pipeprof's opencl backend at level 1) "
                           "to say where it goes"
                         : "the trace has no device timestamps that split it (submit, queue, "
                           "completion)";
        pp_finding *f = an_finding_add(r, PP_FINDING_WALL_PART, c->stage, c->device,
                                       an_strdupf("%s on %s: %.0f%% of wall is %s: %s.", stage,
                                                  dev, 100.0 * share, part_names[big], advice));
        if (!f)
            return PP_ENOMEM;
        an_finding_figure(f, "part_share", "share", share, share, share);
    }
    return PP_OK;
}

/* Each kept exec's parts, from the model: its device execs inside W come
 * again in event order, each with its cell, and go to their cell's place
 * (a counting sort: the cells hold their execs in order). */
static int exec_parts_build(pp_report *r) {
    pp_cols c;
    pp_model_cols(r->model, &c);
    keys k = keys_of(r->model);
    r->exec_parts = an_alloc(r->npart_cells, sizeof *r->exec_parts);
    size_t *at = malloc((r->ndecomp ? r->ndecomp : 1) * sizeof *at);
    if (!r->exec_parts || !at) {
        free(at);
        return PP_ENOMEM;
    }
    for (size_t i = 0, sum = 0; i < r->ndecomp; sum += r->decomp[i++].execs)
        at[i] = sum;
    for (size_t event = 0, j = 0; event < c.count && j < r->npart_cells; event++) {
        if (c.kind[event] != PP_EV_SPAN || c.role[event] != PP_ROLE_EXEC ||
            !an_inside(r, pp_cols_ts(&c, event), pp_cols_dur(&c, event)))
            continue;
        uint32_t cell = r->part_cells[j++];
        pp_exec_parts *x = &r->exec_parts[at[cell]++];
        int was_split;
        *x = (pp_exec_parts){.event = event, .stage = r->decomp[cell].stage,
                             .device = r->decomp[cell].device};
        split(r->model, &c, &k, event, pp_cols_dur(&c, event), r->decomp_iso[cell], &x->parts,
              &was_split);
    }
    free(at);
    r->nexec_parts = r->npart_cells;
    return PP_OK;
}

const pp_exec_parts *pp_report_exec_parts(const pp_report *r, size_t *n) {
    pp_report *w = (pp_report *)r; /* the report is never const: it caches the table */
    if (!r->exec_parts && r->npart_cells > 0 && (!r->model || exec_parts_build(w) != PP_OK)) {
        *n = 0;
        return NULL;
    }
    *n = r->nexec_parts;
    return r->exec_parts;
}

const pp_decomp_stats *pp_report_decomposition(const pp_report *r, size_t *n) {
    *n = r->ndecomp;
    return r->decomp;
}

const pp_clock_stats *pp_report_clocks(const pp_report *r, size_t *n) {
    *n = r->nclocks;
    return r->clocks;
}
