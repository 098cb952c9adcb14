/* sched_rivals.c — which other threads ran while a host stage waited for a
 * core (docs/analysis.md "Scheduler split"): from the sampler's per-thread
 * counters ("cpu% NAME [tid]", collect "threads"), the CPU time each group
 * of same-named threads used during the stage's spans, and the group that
 * used the most, the stage's `rival`.
 *
 * A sample at ts covers the period before it (ts - period, ts]; its share
 * of the overlap with a span, times the cpu% it gives, is that thread's CPU
 * during the span, an estimate at the sampler's resolution. The stage's own
 * thread (the span's track's tid, else its name) is left out. Only the
 * stage spans of rows with scheduler figures count, inside W; runs only
 * when the trace has the sampler's marks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"
#include "core/grow.h"

typedef struct stage_span {
    int64_t start, end;
    int64_t tid;
    uint32_t row; /* index in r->sched */
} stage_span;

typedef struct group_cpu {
    uint32_t row;
    char name[64];
    double ns;
} group_cpu;

static int by_start(const void *a, const void *b) {
    const stage_span *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* "cpu% NAME [tid]" -> NAME (in out) and tid; 0 when it is not one. */
static int parse_counter(const char *text, char *out, size_t len, int64_t *tid) {
    if (strncmp(text, "cpu% ", 5) != 0)
        return 0;
    const char *open = strrchr(text, '[');
    if (!open || open < text + 6)
        return 0;
    size_t n = (size_t)(open - 1 - (text + 5));
    n = n < len - 1 ? n : len - 1;
    memcpy(out, text + 5, n);
    out[n] = '\0';
    *tid = strtoll(open + 1, NULL, 10);
    return 1;
}

/* The row of (stage name, "stage"), or UINT32_MAX. */
static uint32_t stage_row(const pp_report *r, const char *stage) {
    for (size_t i = 0; i < r->nsched; i++)
        if (strcmp(r->sched[i].span, "stage") == 0 && strcmp(r->sched[i].stage, stage) == 0)
            return (uint32_t)i;
    return UINT32_MAX;
}

static int add_cpu(group_cpu **g, size_t *n, size_t *cap, uint32_t row, const char *name,
                   double ns) {
    for (size_t i = 0; i < *n; i++)
        if ((*g)[i].row == row && strcmp((*g)[i].name, name) == 0) {
            (*g)[i].ns += ns;
            return PP_OK;
        }
    if (pp_grow((void **)g, cap, *n, sizeof **g) != PP_OK)
        return PP_ENOMEM;
    group_cpu *x = &(*g)[(*n)++];
    x->row = row;
    snprintf(x->name, sizeof x->name, "%s", name);
    x->ns = ns;
    return PP_OK;
}

int an_sched_rivals(pp_report *r, pp_error *err) {
    if (!r->has_sched_process || r->nsched == 0 || r->sched_process.period_ns <= 0)
        return PP_OK;
    const pp_cols *c = &r->c;
    size_t n = pp_model_event_count(r->m);
    stage_span *spans = NULL;
    size_t nspans = 0, cap = 0;
    int64_t longest = 0;
    int rc = PP_OK;
    for (size_t i = 0; i < n && rc == PP_OK; i++) { /* the stage spans of the rows */
        if (c->kind[i] != PP_EV_SPAN || c->role[i] != PP_ROLE_STAGE || !an_event_inside(r, i))
            continue;
        uint32_t row = stage_row(r, pp_model_string(r->m, pp_cols_stage(c, i)));
        if (row == UINT32_MAX)
            continue;
        if (pp_grow((void **)&spans, &cap, nspans, sizeof *spans) != PP_OK) {
            rc = PP_ENOMEM;
            break;
        }
        const pp_track_info *t = pp_model_track(r->m, pp_cols_track(c, i));
        spans[nspans++] = (stage_span){.start = pp_cols_ts(c, i), .end = pp_cols_end(c, i),
                                       .tid = t ? t->tid : 0, .row = row};
        longest = pp_cols_dur(c, i) > longest ? pp_cols_dur(c, i) : longest;
    }
    qsort(spans, nspans, sizeof *spans, by_start);
    group_cpu *groups = NULL;
    size_t ngroups = 0, gcap = 0;
    int64_t period = r->sched_process.period_ns;
    for (size_t i = 0; i < n && rc == PP_OK && nspans > 0; i++) {
        if (c->kind[i] != PP_EV_COUNTER)
            continue;
        char name[64];
        int64_t tid;
        if (!parse_counter(pp_model_string(r->m, pp_cols_name(c, i)), name, sizeof name, &tid))
            continue;
        int64_t hi = pp_cols_ts(c, i), lo = hi - period;
        double share = c->value[i] / 100.0;
        /* spans overlapping (lo, hi]: start < hi and end > lo; starts are
         * sorted, and none is longer than `longest` */
        size_t a = 0, b = nspans;
        while (a < b) { /* first span with start >= hi */
            size_t mid = a + (b - a) / 2;
            if (spans[mid].start < hi)
                a = mid + 1;
            else
                b = mid;
        }
        for (size_t k = a; k-- > 0 && spans[k].start > lo - longest;) {
            const stage_span *s = &spans[k];
            int64_t from = s->start > lo ? s->start : lo, to = s->end < hi ? s->end : hi;
            if (to <= from || s->tid == tid)
                continue;
            if (strcmp(name, r->sched[s->row].stage) == 0)
                continue; /* the stage's own thread, named after it */
            rc = add_cpu(&groups, &ngroups, &gcap, s->row, name, share * (double)(to - from));
        }
    }
    for (size_t g = 0; g < ngroups && rc == PP_OK; g++) {
        pp_sched_stats *v = &r->sched[groups[g].row];
        if ((int64_t)groups[g].ns > v->rival_cpu_ns) {
            v->rival_cpu_ns = (int64_t)groups[g].ns;
            v->rival = an_keep_text(r, groups[g].name);
            if (!v->rival)
                rc = PP_ENOMEM;
        }
    }
    free(groups);
    free(spans);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "scheduler split: out of memory");
}
