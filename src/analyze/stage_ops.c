/* stage_ops.c — the ops inside host stages: per stage, the spans nested in
 * its stage instances on their own thread (torch.profiler's cpu_op events
 * aten::linear, aten::addmm ...; a user's own spans), by name, with their
 * count, total time and self time (docs/analysis.md, "Ops inside
 * stages").
 *
 * Where host stages are the bottleneck, this is the breakdown a user needs
 * next (Holistic Trace Analysis's and `nsys stats`' per-op tables). A span
 * counts when it is a span of role none or user on the thread track of a
 * host exec (a stage instance with no device exec: host work), lies inside
 * one, and is itself no stage instance, partition, merge or batch span.
 * Self time is its duration less its direct children's among those spans
 * (spans on one thread nest). One pass over the events, a sort of the
 * spans found by (track, start), and a sort of the groups: linear in the
 * events plus the ops found. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

typedef struct op_span {
    uint32_t track, name, stage;
    int64_t start, end;
    int64_t self;
} op_span;

static int by_track_start(const void *a, const void *b) {
    const op_span *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* the longer (parent) first */
}

static int by_stage_name(const void *a, const void *b) {
    const op_span *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

static int by_stage_self(const void *a, const void *b) {
    const pp_stage_op_stats *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    if (x->self_ns != y->self_ns)
        return x->self_ns > y->self_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The host execs inside W, as spans sorted by (track, start), with their
 * stage; the events that are host execs or host spans marked in `taken`. */
static op_span *host_stage_spans(pp_report *r, uint8_t *taken, size_t *n) {
    const pp_cols *c = &r->c;
    op_span *v = malloc((r->nexecs - r->nreal + 1) * sizeof *v);
    *n = 0;
    for (size_t i = r->nreal; v && i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        taken[x->event / 8] |= (uint8_t)(1u << (x->event % 8));
        if (x->stage == AN_NONE || !an_exec_inside(r, x))
            continue;
        v[(*n)++] = (op_span){pp_cols_track(c, x->event), 0, x->stage, pp_cols_ts(c, x->event),
                              pp_cols_end(c, x->event), 0};
    }
    for (size_t i = 0; i < r->nhost; i++)
        taken[r->host[i].event / 8] |= (uint8_t)(1u << (r->host[i].event % 8));
    if (v)
        qsort(v, *n, sizeof *v, by_track_start);
    return v;
}

/* The stage of the host exec among hs[0..nh) on `track` that holds
 * [start, end), or AN_NONE. */
static uint32_t stage_around(const op_span *hs, size_t nh, uint32_t track, int64_t start,
                             int64_t end) {
    size_t lo = 0, hi = nh; /* the last host span on track starting at or before start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (hs[mid].track < track || (hs[mid].track == track && hs[mid].start <= start))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return AN_NONE;
    const op_span *h = &hs[lo - 1];
    return h->track == track && h->start <= start && end <= h->end ? h->stage : AN_NONE;
}

/* Self time: each span's duration less its direct children's (spans of one
 * track nest; v is sorted by track, start, longest first). */
static void self_times(op_span *v, size_t n, size_t *stack) {
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        while (depth > 0 && (v[stack[depth - 1]].track != v[i].track ||
                             v[stack[depth - 1]].end <= v[i].start))
            depth--;
        v[i].self = v[i].end - v[i].start;
        if (depth > 0 && v[i].end <= v[stack[depth - 1]].end)
            v[stack[depth - 1]].self -= v[i].end - v[i].start;
        stack[depth++] = i;
    }
}

static int groups_make(pp_report *r, op_span *v, size_t n) {
    qsort(v, n, sizeof *v, by_stage_name);
    size_t ngroups = 0;
    for (size_t i = 0; i < n; i++)
        ngroups += i == 0 || v[i].stage != v[i - 1].stage || v[i].name != v[i - 1].name;
    r->stage_ops = calloc(ngroups ? ngroups : 1, sizeof *r->stage_ops);
    if (!r->stage_ops)
        return PP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].stage != v[i - 1].stage || v[i].name != v[i - 1].name) {
            const char *name = an_keep_text(r, pp_model_string(r->m, v[i].name));
            if (!name)
                return PP_ENOMEM;
            r->stage_ops[r->nstage_ops++] = (pp_stage_op_stats){.stage = v[i].stage,
                                                                 .name = name};
        }
        pp_stage_op_stats *g = &r->stage_ops[r->nstage_ops - 1];
        g->count++;
        g->total_ns = an_sat_add(g->total_ns, v[i].end - v[i].start);
        g->self_ns = an_sat_add(g->self_ns, v[i].self);
    }
    qsort(r->stage_ops, r->nstage_ops, sizeof *r->stage_ops, by_stage_self);
    return PP_OK;
}

/* Whether any span of role none or user lies on a thread track of host
 * work: most pipeline traces have none, and then the step costs one pass
 * over the events and no sort. */
static int any_candidate(const pp_report *r, uint8_t *host_track) {
    const pp_cols *c = &r->c;
    for (size_t i = r->nreal; i < r->nexecs; i++)
        host_track[an_exec_track(r, &r->execs[i])] = 1;
    for (size_t i = 0; i < c->count; i++)
        if (c->kind[i] == PP_EV_SPAN && (c->role[i] == PP_ROLE_NONE || c->role[i] == PP_ROLE_USER) &&
            host_track[pp_cols_track(c, i)])
            return 1;
    return 0;
}

int an_stage_ops_compute(pp_report *r, pp_error *err) {
    if (r->nexecs == r->nreal) /* no host work: nothing to look inside */
        return PP_OK;
    const pp_cols *c = &r->c;
    uint8_t *host_track = calloc(pp_model_track_count(r->m) + 1, 1);
    if (!host_track)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    int any = any_candidate(r, host_track);
    free(host_track);
    if (!any)
        return PP_OK;
    uint8_t *taken = calloc(c->count / 8 + 1, 1);
    size_t nh = 0, n = 0, cap = 0;
    op_span *hs = taken ? host_stage_spans(r, taken, &nh) : NULL, *v = NULL;
    int rc = hs ? PP_OK : PP_ENOMEM;
    for (size_t i = 0; rc == PP_OK && nh > 0 && i < c->count; i++) {
        if (c->kind[i] != PP_EV_SPAN || (c->role[i] != PP_ROLE_NONE && c->role[i] != PP_ROLE_USER) ||
            (taken[i / 8] >> (i % 8) & 1))
            continue;
        uint32_t track = pp_cols_track(c, i);
        int64_t start = pp_cols_ts(c, i), end = pp_cols_end(c, i);
        uint32_t stage = stage_around(hs, nh, track, start, end);
        if (stage == AN_NONE)
            continue;
        if (n == cap) {
            size_t grown = cap ? 2 * cap : 256;
            op_span *g = realloc(v, grown * sizeof *g);
            if (!g) {
                rc = PP_ENOMEM;
                break;
            }
            v = g, cap = grown;
        }
        v[n++] = (op_span){track, pp_cols_name(c, i), stage, start, end, 0};
    }
    size_t *stack = rc == PP_OK && n ? malloc(n * sizeof *stack) : NULL;
    if (rc == PP_OK && n && !stack)
        rc = PP_ENOMEM;
    if (rc == PP_OK && n) {
        qsort(v, n, sizeof *v, by_track_start);
        self_times(v, n, stack);
        rc = groups_make(r, v, n);
    }
    free(stack), free(v), free(hs), free(taken);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}

const pp_stage_op_stats *pp_report_stage_ops(const pp_report *r, size_t *n) {
    *n = r->nstage_ops;
    return r->stage_ops;
}
