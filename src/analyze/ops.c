/* ops.c — op statistics: level-2 op spans (layers, kernels) inside W per
 * device and op name: count, total, mean, p50, p95, max, sorted by total. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

typedef struct op_item {
    uint32_t device, name;
    int64_t dur;
} op_item;

static int cmp_op_item(const void *a, const void *b) {
    const op_item *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return (x->dur > y->dur) - (x->dur < y->dur);
}

static int cmp_op_total(const void *a, const void *b) {
    const pp_op_stats *x = a, *y = b;
    return (x->total < y->total) - (x->total > y->total);
}

int an_ops_compute(pp_report *r, const pp_model *m, pp_error *err) {
    pp_event_columns c;
    pp_model_columns(m, &c);
    size_t n = 0;
    for (size_t i = 0; i < c.count; i++)
        n += c.kind[i] == PP_EV_SPAN && c.role[i] == PP_ROLE_OP &&
             r->track_device[c.track[i]] != AN_NONE && an_inside(r, c.ts_ns[i], c.dur_ns[i]);
    if (n == 0)
        return PP_OK;
    op_item *it = malloc(n * sizeof *it);
    int64_t *durs = malloc(n * sizeof *durs);
    r->ops = calloc(n, sizeof *r->ops);
    r->op_names = calloc(n, sizeof *r->op_names);
    int rc = it && durs && r->ops && r->op_names ? PP_OK : PP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; rc == PP_OK && i < c.count; i++)
        if (c.kind[i] == PP_EV_SPAN && c.role[i] == PP_ROLE_OP &&
            r->track_device[c.track[i]] != AN_NONE && an_inside(r, c.ts_ns[i], c.dur_ns[i]))
            it[k++] = (op_item){r->track_device[c.track[i]], c.name[i], c.dur_ns[i]};
    if (rc == PP_OK)
        qsort(it, n, sizeof *it, cmp_op_item);
    for (size_t i = 0; rc == PP_OK && i < n;) {
        size_t j = i;
        for (; j < n && it[j].device == it[i].device && it[j].name == it[i].name; j++)
            durs[j - i] = it[j].dur;
        pp_summary s;
        pp_summary_compute(durs, j - i, &s);
        char *name = an_strdupf("%s", pp_model_string(m, it[i].name));
        if (!name)
            rc = PP_ENOMEM;
        r->op_names[r->nops] = name;
        r->ops[r->nops++] =
            (pp_op_stats){it[i].device, name, s.n, s.total, s.mean, s.p50, s.p95, s.max};
        i = j;
    }
    free(it);
    free(durs);
    if (rc != PP_OK)
        return pp_set_error(err, rc, "out of memory");
    /* names are owned by op_names in group order; the table sorts by total */
    qsort(r->ops, r->nops, sizeof *r->ops, cmp_op_total);
    return PP_OK;
}
