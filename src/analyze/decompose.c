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
    const pp_annotation *a = pp_model_annotations(m, &first);
    pp_model_annotations_of(m, event, &first, &n);
    for (size_t i = first; i < first + n; i++) {
        if (a[i].type != PP_VALUE_INT)
            continue;
        int slot = a[i].key == k->submit ? 0 : a[i].key == k->queue ? 1
                 : a[i].key == k->completion ? 2 : -1;
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
static void split(const pp_model *m, const pp_event_columns *c, const keys *k, size_t event,
                  int64_t wall, int64_t isolated, pp_wall_parts *p, int *was_split) {
    uint64_t hw = c->hw_ns[event], xfer = c->xfer_ns[event];
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
    const pp_annotation *a = pp_model_annotations(r->m, &nann);
    for (size_t i = 0; i < r->c.count; i++) {
        if (r->c.kind[i] != PP_EV_INSTANT || r->c.name[i] != name)
            continue;
        uint32_t d = r->track_device[r->c.track[i]];
        if (d == AN_NONE)
            continue;
        size_t first, n;
        pp_model_annotations_of(r->m, i, &first, &n);
        const char *method = NULL;
        int64_t error = -1;
        for (size_t k = first; k < first + n; k++) {
            if (a[k].key == kmethod && a[k].type == PP_VALUE_STR)
                method = pp_model_string(r->m, a[k].v.s);
            else if (a[k].key == kerror && a[k].type == PP_VALUE_INT)
                error = a[k].v.i;
        }
        if (!method || error < 0)
            continue;
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

/* A stable counting sort of the n exec indexes in `in` by key(exec) <
 * nkeys into `out`. */
static int count_sort(const pp_report *r, const size_t *in, size_t n, size_t *out, size_t nkeys,
                      int by_stage) {
    size_t *at = calloc(nkeys + 1, sizeof *at);
    if (!at)
        return PP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const an_exec *e = &r->execs[in[i]];
        at[(by_stage ? (e->stage == AN_NONE ? r->nstages : e->stage) : e->device) + 1]++;
    }
    for (size_t k = 0; k < nkeys; k++)
        at[k + 1] += at[k];
    for (size_t i = 0; i < n; i++) { /* at[key] is the key's cursor */
        const an_exec *e = &r->execs[in[i]];
        out[at[by_stage ? (e->stage == AN_NONE ? r->nstages : e->stage) : e->device]++] = in[i];
    }
    free(at);
    return PP_OK;
}

/* The device execs inside W grouped by (stage, device), unlabeled execs
 * last, with two stable counting sorts (by device, then by stage), so that
 * memory stays linear in the execs however many stages and devices there
 * are. Host execs (stage spans) are left out: host work is no request to a
 * device, and all of it would read as unattributed. The report keeps only
 * each exec's event, cell by cell (8 bytes an exec); pp_report_exec_parts
 * computes the parts from the model when asked. */
int an_decompose_compute(pp_report *r, const pp_analyze_options *o, pp_error *err) {
    keys k = keys_of(r->m);
    size_t n = 0;
    for (size_t i = 0; i < r->nexecs; i++)
        n += r->execs[i].inside && !r->execs[i].host && r->execs[i].device != AN_NONE;
    size_t *order = an_alloc(n, sizeof *order), *by_device = an_alloc(n, sizeof *by_device);
    int rc = order && by_device ? PP_OK : PP_ENOMEM;
    for (size_t i = 0, m = 0; rc == PP_OK && i < r->nexecs; i++)
        if (r->execs[i].inside && !r->execs[i].host && r->execs[i].device != AN_NONE)
            order[m++] = i;
    if (rc == PP_OK)
        rc = count_sort(r, order, n, by_device, r->ndevices, 0);
    if (rc == PP_OK)
        rc = count_sort(r, by_device, n, order, r->nstages + 1, 1);
    free(by_device);
    size_t ncells = 0;
    for (size_t i = 0; rc == PP_OK && i < n; i++)
        ncells += i == 0 || r->execs[order[i]].stage != r->execs[order[i - 1]].stage ||
                  r->execs[order[i]].device != r->execs[order[i - 1]].device;
    pp_decomp_stats *cells = rc == PP_OK ? calloc(ncells ? ncells : 1, sizeof *cells) : NULL;
    r->decomp_iso = rc == PP_OK ? calloc(ncells ? ncells : 1, sizeof *r->decomp_iso) : NULL;
    rc = rc == PP_OK && (!cells || !r->decomp_iso) ? PP_ENOMEM : rc;
    const an_exec *prev = NULL;
    for (size_t i = 0; rc == PP_OK && i < n; i++) {
        const an_exec *e = &r->execs[order[i]];
        if (!prev || e->stage != prev->stage || e->device != prev->device) {
            int64_t iso = isolated_of(r, o, e->stage, e->device);
            r->decomp_iso[r->ndecomp] = iso;
            cells[r->ndecomp++] = (pp_decomp_stats){.stage = e->stage, .device = e->device,
                                                    .has_contention = iso > 0};
        }
        pp_decomp_stats *c = &cells[r->ndecomp - 1];
        pp_wall_parts parts;
        int was_split;
        split(r->m, &r->c, &k, e->event, r->c.dur_ns[e->event], r->decomp_iso[r->ndecomp - 1],
              &parts, &was_split);
        c->execs++;
        c->split += (uint64_t)was_split;
        add_parts(&c->total, &parts);
        order[i] = e->event; /* order becomes the kept events */
        prev = e;
    }
    r->decomp = cells;
    r->part_events = order;
    r->npart_events = rc == PP_OK ? n : 0;
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
    "a backend with device timestamps (opencl) can say where it goes"};

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
        if (t->wall_ns <= 0 || part[big] * 3 < t->wall_ns || part[big] <= t->device_ns)
            continue;
        char dev[96];
        an_device_label(r, c->device, dev, sizeof dev);
        const char *stage = c->stage == AN_NONE ? "(no stage)" : r->stages[c->stage].name;
        int rc = an_finding_add(r, an_strdupf("%s on %s: %.0f%% of wall is %s: %s.", stage, dev,
                                              100.0 * (double)part[big] / (double)t->wall_ns,
                                              part_names[big], part_advice[big]));
        if (rc != PP_OK)
            return rc;
    }
    return PP_OK;
}

/* Each kept exec's parts, from the model: the cells hold their execs in
 * order, so the events of cell i are the next decomp[i].execs ones. */
static int exec_parts_build(pp_report *r) {
    pp_event_columns c;
    pp_model_columns(r->model, &c);
    keys k = keys_of(r->model);
    r->exec_parts = an_alloc(r->npart_events, sizeof *r->exec_parts);
    if (!r->exec_parts)
        return PP_ENOMEM;
    for (size_t i = 0, at = 0; i < r->ndecomp; i++)
        for (uint64_t j = 0; j < r->decomp[i].execs; j++, at++) {
            pp_exec_parts *x = &r->exec_parts[at];
            size_t event = r->part_events[at];
            int was_split;
            *x = (pp_exec_parts){.event = event, .stage = r->decomp[i].stage,
                                 .device = r->decomp[i].device};
            split(r->model, &c, &k, event, c.dur_ns[event], r->decomp_iso[i], &x->parts,
                  &was_split);
        }
    r->nexec_parts = r->npart_events;
    return PP_OK;
}

const pp_exec_parts *pp_report_exec_parts(const pp_report *r, size_t *n) {
    pp_report *w = (pp_report *)r; /* the report is never const: it caches the table */
    if (!r->exec_parts && r->npart_events > 0 && exec_parts_build(w) != PP_OK) {
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
