/* ops.c — op statistics (docs/architecture.md §4): level-2 op spans (layers, kernels)
 * inside W on the device tracks that have execs, as two tables sorted by
 * total real time:
 *   - per device and op name, with its type and exec type;
 *   - per device, op type and exec type (what benchmark_app -pc sums).
 * Type, exec type and CPU time come from the op span's "type", "exec_type"
 * (strings) and "cpu_ns" (integer) annotations, as the pipeline executor
 * records them; real time is the span's duration.
 *
 * The annotations are gathered first, in an_execs_collect's pass over the
 * events (an_op_gather), so that pp_report_build_owned drops an owned
 * model's at once; the op step proper comes after the host execs, which
 * make host tracks devices. Groups are few and ops many: one pass hashes every op into its
 * two groups, then a counting sort by group gathers each group's
 * durations. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"
#include "core/grow.h"

typedef struct op_key {
    uint32_t device, name, type, exec; /* name 0 in the table by type */
} op_key;

typedef struct op_group {
    op_key key;
    uint32_t typed; /* by name: the group by type it falls in (UINT32_MAX: not yet known) */
    size_t count;
    uint64_t cpu_count;
    int64_t cpu_total;
} op_group;

/* One table's groups and an open-addressing index over them. */
typedef struct op_groups {
    op_group *g;
    size_t n, cap;
    an_index index;
} op_groups;

static size_t key_hash(const op_key *k) {
    uint64_t h = k->device * 0x9E3779B97F4A7C15ull;
    h = (h ^ k->name) * 0x9E3779B97F4A7C15ull;
    h = (h ^ k->type) * 0x9E3779B97F4A7C15ull;
    h = (h ^ k->exec) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17);
}

static int key_eq(const op_key *a, const op_key *b) {
    return a->device == b->device && a->name == b->name && a->type == b->type &&
           a->exec == b->exec;
}

static size_t group_hash_at(const void *groups, size_t i) {
    return key_hash(&((const op_group *)groups)[i].key);
}

static int rehash(op_groups *t, size_t nslot) {
    return an_index_rebuild(&t->index, nslot, t->n, group_hash_at, t->g);
}

/* The group of `k`, added when new; SIZE_MAX on no memory. */
static size_t group_of(op_groups *t, const op_key *k) {
    an_index *x = &t->index;
    size_t h = key_hash(k) & (x->nslot - 1);
    for (; x->slot[h]; h = (h + 1) & (x->nslot - 1))
        if (key_eq(&t->g[x->slot[h] - 1].key, k))
            return x->slot[h] - 1;
    if (t->n >= UINT32_MAX - 1 || pp_grow((void **)&t->g, &t->cap, t->n, sizeof *t->g))
        return SIZE_MAX;
    t->g[t->n] = (op_group){.key = *k, .typed = UINT32_MAX};
    x->slot[h] = (uint32_t)++t->n;
    if (2 * t->n > x->nslot && rehash(t, 2 * x->nslot) != PP_OK) /* keep it half empty */
        return SIZE_MAX;
    return t->n - 1;
}

an_op_keys an_op_keys_of(const pp_model *m) {
    return (an_op_keys){pp_model_find_string(m, "type"), pp_model_find_string(m, "exec_type"),
                        pp_model_find_string(m, "cpu_ns")};
}

void an_op_gather_start(const pp_report *r, an_op_gatherer *g) {
    g->ann = pp_model_anns(r->m, &g->nann);
    g->cursor = 0;
    g->keys = an_op_keys_of(r->m);
}

void an_op_gather(an_op_gatherer *g, size_t event, an_op *op) {
    const pp_ann *a = g->ann;
    uint32_t type = 0, exec = 0;
    int64_t cpu = 0;
    while (g->cursor < g->nann && a[g->cursor].event < event)
        g->cursor++;
    for (size_t j = g->cursor; j < g->nann && a[j].event == event; j++) {
        uint32_t key = pp_ann_key(&a[j]);
        if (key == 0)
            continue; /* the empty string: never one of the keys */
        if (pp_ann_type(&a[j]) == PP_VALUE_STR && key == g->keys.type)
            type = a[j].v.s;
        else if (pp_ann_type(&a[j]) == PP_VALUE_STR && key == g->keys.exec)
            exec = a[j].v.s | (exec & AN_OP_HAS_CPU);
        else if (pp_ann_type(&a[j]) == PP_VALUE_INT && key == g->keys.cpu)
            cpu = a[j].v.i, exec |= AN_OP_HAS_CPU;
    }
    op->ann.type = type;
    op->ann.exec = exec;
    op->ann.cpu = cpu;
}

static void group_add(op_group *g, int has_cpu, int64_t cpu) {
    g->count++;
    g->cpu_count += has_cpu != 0;
    g->cpu_total += has_cpu ? cpu : 0;
}

/* Whether op span i is counted: inside W, on a track with execs. */
static int counted(const pp_report *r, size_t i) {
    return r->track_device[pp_cols_track(&r->c, i)] != AN_NONE && an_event_inside(r, i);
}

/* One pass: every counted op's duration and groups, written over r->op
 * from the start (the k-th op span's annotations are read before the
 * k-th item, or one before it, is written); *n ops. */
static int ops_collect(pp_report *r, size_t *n, op_groups *named, op_groups *typed) {
    const pp_cols *c = &r->c;
    size_t m = 0;
    for (size_t i = 0, k = 0; i < c->count; i++) {
        if (!an_is_op_span(c, i))
            continue;
        an_op op = r->op[k++];
        if (!counted(r, i))
            continue;
        op_key key = {r->track_device[pp_cols_track(c, i)], pp_cols_name(c, i), op.ann.type,
                      op.ann.exec & ~AN_OP_HAS_CPU};
        int has_cpu = (op.ann.exec & AN_OP_HAS_CPU) != 0;
        size_t g1 = group_of(named, &key);
        if (g1 == SIZE_MAX)
            return PP_ENOMEM;
        if (named->g[g1].typed == UINT32_MAX) { /* a new name: its group by type */
            key.name = 0;
            size_t g = group_of(typed, &key);
            if (g == SIZE_MAX)
                return PP_ENOMEM;
            named->g[g1].typed = (uint32_t)g;
        }
        size_t g2 = named->g[g1].typed;
        group_add(&named->g[g1], has_cpu, op.ann.cpu);
        group_add(&typed->g[g2], has_cpu, op.ann.cpu);
        an_op *item = &r->op[m++];
        item->item.dur = pp_cols_dur(c, i);
        item->item.by_name = (uint32_t)g1;
        item->item.by_type = (uint32_t)g2;
    }
    *n = m;
    return PP_OK;
}

static int cmp_total(const void *a, const void *b) {
    const pp_op_stats *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    int c = strcmp(x->name, y->name);
    c = c ? c : strcmp(x->type, y->type);
    return c ? c : strcmp(x->exec_type, y->exec_type);
}

/* One table: each group's durations gathered by a counting sort on the
 * group, summarized, and the rows sorted by total. */
static int op_table(pp_report *r, const an_op *it, size_t n, const op_groups *t, int named,
                    pp_op_stats **out, size_t *nout) {
    size_t *at = calloc(t->n + 1, sizeof *at);
    int64_t *durs = an_buf_get(&r->values, n * sizeof *durs);
    *out = calloc(t->n, sizeof **out);
    if (!at || !durs || !*out) {
        free(at);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        at[(named ? it[i].item.by_name : it[i].item.by_type) + 1]++;
    for (size_t g = 0; g < t->n; g++)
        at[g + 1] += at[g];
    for (size_t i = 0; i < n; i++) /* at[g] is group g's cursor, then its end */
        durs[at[named ? it[i].item.by_name : it[i].item.by_type]++] = it[i].item.dur;
    int rc = PP_OK;
    for (size_t g = 0, start = 0; rc == PP_OK && g < t->n; start = at[g++]) {
        const op_group *grp = &t->g[g];
        pp_summary s;
        rc = an_summary(r, durs + start, at[g] - start, &s);
        pp_op_stats *o = &(*out)[(*nout)++];
        *o = (pp_op_stats){.device = grp->key.device, .count = s.n, .total = s.total,
                           .mean = s.mean, .p50 = s.p50, .p95 = s.p95, .max = s.max,
                           .cpu_count = grp->cpu_count, .cpu_total = grp->cpu_total};
        o->name = an_keep_text(r, named ? pp_model_string(r->m, grp->key.name) : "");
        o->type = an_keep_text(r, pp_model_string(r->m, grp->key.type));
        o->exec_type = an_keep_text(r, pp_model_string(r->m, grp->key.exec));
        if (rc == PP_OK && (!o->name || !o->type || !o->exec_type))
            rc = PP_ENOMEM;
    }
    free(at);
    if (rc == PP_OK)
        qsort(*out, *nout, sizeof **out, cmp_total);
    return rc;
}

int an_ops_compute(pp_report *r, pp_error *err) {
    size_t n = r->nop_spans;
    if (n == 0)
        return PP_OK;
    op_groups named = {0}, typed = {0};
    int rc = rehash(&named, 64);
    if (rc == PP_OK)
        rc = rehash(&typed, 64);
    if (rc == PP_OK)
        rc = ops_collect(r, &n, &named, &typed);
    if (rc == PP_OK && n > 0) /* else no op lies inside W on a device track: no tables */
        rc = op_table(r, r->op, n, &named, 1, &r->ops, &r->nops);
    if (rc == PP_OK && n > 0)
        rc = op_table(r, r->op, n, &typed, 0, &r->op_types, &r->nop_types);
    free(r->op);
    r->op = NULL;
    free(named.g), free(named.index.slot), free(typed.g), free(typed.index.slot);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
