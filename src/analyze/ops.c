/* ops.c — op statistics (docs/architecture.md §4): level-2 op spans (layers, kernels)
 * inside W on the device tracks that have execs, as two tables sorted by
 * total real time:
 *   - per device and op name, with its type and exec type;
 *   - per device, op type and exec type (what benchmark_app -pc sums).
 * Type, exec type and CPU time come from the op span's "type", "exec_type"
 * (strings) and "cpu_ns" (integer) annotations, as the pipeline executor
 * records them; real time is the span's duration.
 *
 * Groups are few and ops many: one pass hashes every op into its two groups,
 * then a counting sort by group gathers each group's durations. */
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

/* One op: its duration and its group in each table. */
typedef struct op_item {
    int64_t dur;
    uint32_t by_name, by_type;
} op_item;

/* String ids of the annotation keys an op may carry; 0 = absent. */
typedef struct ann_keys {
    uint32_t type, exec, cpu;
} ann_keys;

/* Reads the annotations of op event i into k and its CPU time; *c is a
 * cursor into the annotation table, sorted by event, so the ops are read in
 * one pass. */
static int op_annotations(const pp_ann *a, size_t na, size_t *c, size_t i,
                          const ann_keys *keys, op_key *k, int64_t *cpu) {
    int has_cpu = 0;
    while (*c < na && a[*c].event < i)
        (*c)++;
    for (size_t j = *c; j < na && a[j].event == i; j++) {
        if (pp_ann_key(&a[j]) == 0)
            continue; /* the empty string: never one of the keys */
        if (pp_ann_type(&a[j]) == PP_VALUE_STR && pp_ann_key(&a[j]) == keys->type)
            k->type = a[j].v.s;
        else if (pp_ann_type(&a[j]) == PP_VALUE_STR && pp_ann_key(&a[j]) == keys->exec)
            k->exec = a[j].v.s;
        else if (pp_ann_type(&a[j]) == PP_VALUE_INT && pp_ann_key(&a[j]) == keys->cpu)
            *cpu = a[j].v.i, has_cpu = 1;
    }
    return has_cpu;
}

static void group_add(op_group *g, int has_cpu, int64_t cpu) {
    g->count++;
    g->cpu_count += has_cpu != 0;
    g->cpu_total += has_cpu ? cpu : 0;
}

static int is_op(const pp_report *r, size_t i) {
    const pp_cols *c = &r->c;
    return an_is_op_span(c, i) && r->track_device[pp_cols_track(c, i)] != AN_NONE &&
           an_inside(r, pp_cols_ts(c, i), pp_cols_dur(c, i));
}

/* One pass: every op's duration and groups; *n ops. */
static int ops_collect(pp_report *r, op_item *it, size_t *n, op_groups *named,
                       op_groups *typed) {
    const pp_cols *c = &r->c;
    const ann_keys keys = {pp_model_find_string(r->m, "type"),
                           pp_model_find_string(r->m, "exec_type"),
                           pp_model_find_string(r->m, "cpu_ns")};
    size_t na, cursor = 0, m = 0;
    const pp_ann *a = pp_model_anns(r->m, &na);
    for (size_t i = 0; i < c->count; i++) {
        if (!is_op(r, i))
            continue;
        op_key k = {r->track_device[pp_cols_track(c, i)], c->name[i], 0, 0};
        int64_t cpu = 0;
        int has_cpu = op_annotations(a, na, &cursor, i, &keys, &k, &cpu);
        size_t g1 = group_of(named, &k);
        if (g1 == SIZE_MAX)
            return PP_ENOMEM;
        if (named->g[g1].typed == UINT32_MAX) { /* a new name: its group by type */
            k.name = 0;
            size_t g = group_of(typed, &k);
            if (g == SIZE_MAX)
                return PP_ENOMEM;
            named->g[g1].typed = (uint32_t)g;
        }
        size_t g2 = named->g[g1].typed;
        group_add(&named->g[g1], has_cpu, cpu);
        group_add(&typed->g[g2], has_cpu, cpu);
        it[m++] = (op_item){pp_cols_dur(c, i), (uint32_t)g1, (uint32_t)g2};
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
static int op_table(pp_report *r, const op_item *it, size_t n, const op_groups *t, int named,
                    pp_op_stats **out, size_t *nout) {
    size_t *at = calloc(t->n + 1, sizeof *at);
    int64_t *durs = an_buf_get(&r->values, n * sizeof *durs);
    *out = calloc(t->n, sizeof **out);
    if (!at || !durs || !*out) {
        free(at);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        at[(named ? it[i].by_name : it[i].by_type) + 1]++;
    for (size_t g = 0; g < t->n; g++)
        at[g + 1] += at[g];
    for (size_t i = 0; i < n; i++) /* at[g] is group g's cursor, then its end */
        durs[at[named ? it[i].by_name : it[i].by_type]++] = it[i].dur;
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
    op_item *it = an_alloc(n, sizeof *it); /* room for every op span (an_execs_collect */
    int rc = it ? rehash(&named, 64) : PP_ENOMEM; /* counted them): ops left out are never touched */
    if (rc == PP_OK)
        rc = rehash(&typed, 64);
    if (rc == PP_OK)
        rc = ops_collect(r, it, &n, &named, &typed);
    if (rc == PP_OK && n > 0) /* else no op lies inside W on a device track: no tables */
        rc = op_table(r, it, n, &named, 1, &r->ops, &r->nops);
    if (rc == PP_OK && n > 0)
        rc = op_table(r, it, n, &typed, 0, &r->op_types, &r->nop_types);
    free(it);
    free(named.g), free(named.index.slot), free(typed.g), free(typed.index.slot);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
