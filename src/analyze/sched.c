/* sched.c — the scheduler split of host spans (docs/analysis.md
 * "Scheduler split"): where a stage's wall went while its thread was not
 * computing.
 *
 * A span recorded with the sched bit (pipeprof/sched.h) carries the
 * differences of its thread's counters over it: sched_cpu_ns (on a CPU),
 * sched_wait_ns (runnable on a run queue; absent when the method could not
 * tell), sched_vcsw and sched_ivcsw (context switches) and sched_method.
 * The counters are read a few hundred ns from the span's timestamps, so
 * the parts are clipped to its wall: on-CPU to the wall, the wait to what
 * is left, and blocked is the rest, which makes the three sum to the wall
 * exactly and each >= 0. Spans are grouped by stage and kind (stage span,
 * partition, merge, or any other span by name: API calls, a program's own
 * spans); only those lying entirely inside W count, like every per-span
 * figure. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"
#include "core/grow.h"

#define MAX_ROWS 4096 /* a hostile trace's distinct span names fold into one row past it */
#define MAX_METHODS 4

typedef struct sched_keys {
    uint32_t cpu, wait, vcsw, ivcsw, method;
    uint32_t online, allowed, affinity, period, sampler_cpu; /* the sampler's marks */
} sched_keys;

/* One span's figures, as read from its annotations (or a sampler mark's:
 * `start` for its start mark, `end` for its end mark). */
typedef struct span_figures {
    int has_cpu, has_wait, start, end;
    int64_t cpu, wait, vcsw, ivcsw;
    uint32_t method;
    int64_t online, allowed, period, sampler_cpu;
    uint32_t affinity;
} span_figures;

/* A row while the spans are summed: its key and its stats. */
typedef struct sched_row {
    uint32_t stage;  /* model string id of the stage, 0 none */
    uint8_t kind;    /* 0 stage span, 1 partition, 2 merge, 3 other (by name) */
    uint32_t name;   /* model string id of an other span's name; UINT32_MAX: folded */
    uint32_t rank;   /* its stage's place in the report's order (name_rows) */
    pp_sched_stats st;
} sched_row;

static uint8_t kind_of(uint8_t role) {
    return role == PP_ROLE_STAGE ? 0 : role == PP_ROLE_PARTITION ? 1 : role == PP_ROLE_MERGE ? 2 : 3;
}

/* The figures of the annotations a[*j ..) of one event; *j moves past them. */
static span_figures read_span(const pp_ann *a, size_t na, size_t *j, const sched_keys *k) {
    span_figures f = {0};
    uint32_t event = a[*j].event;
    for (; *j < na && a[*j].event == event; (*j)++) {
        uint32_t key = pp_ann_key(&a[*j]);
        uint8_t type = pp_ann_type(&a[*j]);
        if (key == 0)
            continue;
        if (type == PP_VALUE_STR) {
            if (key == k->method)
                f.method = a[*j].v.s;
            else if (key == k->affinity)
                f.affinity = a[*j].v.s;
            continue;
        }
        int64_t v = type == PP_VALUE_INT ? a[*j].v.i : (int64_t)a[*j].v.d;
        if (key == k->cpu) {
            f.has_cpu = 1;
            f.cpu = v;
        } else if (key == k->wait) {
            f.has_wait = 1;
            f.wait = v;
        } else if (key == k->vcsw) {
            f.vcsw = v;
        } else if (key == k->ivcsw) {
            f.ivcsw = v;
        } else if (key == k->online) {
            f.start = 1;
            f.online = v;
        } else if (key == k->allowed) {
            f.allowed = v;
        } else if (key == k->period) {
            f.period = v;
        } else if (key == k->sampler_cpu) {
            f.end = 1;
            f.sampler_cpu = v;
        }
    }
    return f;
}

static int64_t clip(int64_t v, int64_t hi) {
    return v < 0 ? 0 : v > hi ? hi : v;
}

static void add_span(pp_sched_stats *st, int64_t wall, const span_figures *f) {
    int64_t cpu = clip(f->cpu, wall);
    int64_t wait = f->has_wait ? clip(f->wait, wall - cpu) : 0;
    st->spans++;
    st->no_wait += !f->has_wait;
    st->wall_ns = an_sat_add(st->wall_ns, wall);
    st->cpu_ns = an_sat_add(st->cpu_ns, cpu);
    st->wait_ns = an_sat_add(st->wait_ns, wait);
    st->blocked_ns = an_sat_add(st->blocked_ns, wall - cpu - wait);
    st->voluntary = an_sat_add(st->voluntary, f->vcsw > 0 ? f->vcsw : 0);
    st->involuntary = an_sat_add(st->involuntary, f->ivcsw > 0 ? f->ivcsw : 0);
}

typedef struct row_table {
    sched_row *rows;
    size_t n, cap;
    size_t last; /* the row found last: a thread's spans come in runs */
} row_table;

/* The row of (stage, kind, name), added when new; NULL on no memory. */
static sched_row *row_of(row_table *t, uint32_t stage, uint8_t kind, uint32_t name) {
    if (t->last < t->n) {
        sched_row *w = &t->rows[t->last];
        if (w->stage == stage && w->kind == kind && w->name == name)
            return w;
    }
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].stage == stage && t->rows[i].kind == kind && t->rows[i].name == name)
            return &t->rows[t->last = i];
    if (t->n == MAX_ROWS && name != UINT32_MAX)
        return row_of(t, stage, 3, UINT32_MAX);
    if (pp_grow((void **)&t->rows, &t->cap, t->n, sizeof *t->rows) != PP_OK)
        return NULL;
    t->rows[t->n] = (sched_row){.stage = stage, .kind = kind, .name = name};
    return &t->rows[t->last = t->n++];
}

/* Report order: stages in report order (spans without a known stage
 * last), then stage span, partition, merge, others by name. */
static int row_cmp(const void *pa, const void *pb) {
    const sched_row *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->stage != b->stage)
        return a->stage < b->stage ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    return strcmp(a->st.span, b->st.span);
}

/* Names each row for the public table (its stage and span text) and
 * ranks it by its stage. */
static int name_rows(pp_report *r, row_table *t) {
    static const char *const kinds[] = {"stage", "partition", "merge"};
    for (size_t i = 0; i < t->n; i++) {
        sched_row *w = &t->rows[i];
        uint32_t s = w->stage ? r->stage_of_string[w->stage] : AN_NONE;
        w->rank = s != AN_NONE ? s : w->stage ? UINT32_MAX - 1 : UINT32_MAX;
        w->st.stage = s != AN_NONE ? r->stage_names[s]
                                   : an_keep_text(r, pp_model_string(r->m, w->stage));
        w->st.span = w->kind < 3              ? kinds[w->kind]
                     : w->name == UINT32_MAX ? "(other spans)"
                                             : an_keep_text(r, pp_model_string(r->m, w->name));
        if (!w->st.stage || !w->st.span)
            return PP_ENOMEM;
    }
    return PP_OK;
}

/* The methods seen, joined by '+' ("schedstat"; "unknown" for figures
 * without a method). */
static int keep_methods(pp_report *r, const uint32_t *methods, size_t n) {
    char text[160] = "";
    for (size_t i = 0; i < n; i++) {
        const char *m = methods[i] ? pp_model_string(r->m, methods[i]) : "unknown";
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "%s%s", i ? "+" : "", m);
    }
    r->sched_method = an_keep_text(r, text);
    return r->sched_method ? PP_OK : PP_ENOMEM;
}

/* The sampler's marks: the process's CPUs at its start, its cost at its
 * end (the first of each, for a merged trace). */
static int keep_process(pp_report *r, const span_figures *f, uint32_t e, int64_t *started) {
    pp_sched_process *p = &r->sched_process;
    if (f->start && !r->has_sched_process) {
        r->has_sched_process = 1;
        *p = (pp_sched_process){.cpus_online = f->online, .cpus_allowed = f->allowed,
                                .period_ns = f->period, .sampler_cpu_ns = -1,
                                .affinity = an_keep_text(r, pp_model_string(r->m, f->affinity))};
        *started = pp_cols_ts(&r->c, e);
        if (!p->affinity)
            return PP_ENOMEM;
    } else if (f->end && r->has_sched_process && p->sampler_cpu_ns < 0) {
        p->sampler_cpu_ns = f->sampler_cpu;
        p->sampled_ns = pp_cols_ts(&r->c, e) - *started;
    }
    return PP_OK;
}

int an_sched_compute(pp_report *r, pp_error *err) {
    const pp_model *m = r->m;
    sched_keys k = {pp_model_find_string(m, "sched_cpu_ns"), pp_model_find_string(m, "sched_wait_ns"),
                    pp_model_find_string(m, "sched_vcsw"), pp_model_find_string(m, "sched_ivcsw"),
                    pp_model_find_string(m, "sched_method"), pp_model_find_string(m, "cpus_online"),
                    pp_model_find_string(m, "cpus_allowed"), pp_model_find_string(m, "affinity"),
                    pp_model_find_string(m, "period_ns"),
                    pp_model_find_string(m, "sampler_cpu_ns")};
    if (k.cpu == 0 && k.online == 0)
        return PP_OK; /* none recorded: the report says so */
    size_t na;
    const pp_ann *a = pp_model_anns(r->m, &na);
    row_table t = {0};
    uint32_t methods[MAX_METHODS];
    size_t nmethods = 0, seen = 0;
    int64_t started = 0;
    int rc = PP_OK;
    for (size_t j = 0; j < na && rc == PP_OK;) {
        uint32_t e = a[j].event;
        span_figures f = read_span(a, na, &j, &k);
        if ((f.start || f.end) && r->c.kind[e] == PP_EV_INSTANT) {
            rc = keep_process(r, &f, e, &started);
            continue;
        }
        uint8_t role = r->c.role[e];
        if (!f.has_cpu || r->c.kind[e] != PP_EV_SPAN || role == PP_ROLE_EXEC ||
            role == PP_ROLE_OP)
            continue;
        seen++;
        size_t m = 0;
        while (m < nmethods && methods[m] != f.method)
            m++;
        if (m == nmethods && nmethods < MAX_METHODS)
            methods[nmethods++] = f.method;
        if (!an_event_inside(r, e))
            continue;
        uint8_t kind = kind_of(role);
        sched_row *w = row_of(&t, pp_cols_stage(&r->c, e), kind,
                              kind == 3 ? pp_cols_name(&r->c, e) : 0);
        if (!w) {
            rc = PP_ENOMEM;
            break;
        }
        add_span(&w->st, pp_cols_dur(&r->c, e), &f);
    }
    if (rc == PP_OK && seen > 0)
        rc = keep_methods(r, methods, nmethods);
    if (rc == PP_OK)
        rc = name_rows(r, &t);
    if (rc == PP_OK && t.n > 0) {
        qsort(t.rows, t.n, sizeof *t.rows, row_cmp);
        r->sched = malloc(t.n * sizeof *r->sched);
        if (!r->sched)
            rc = PP_ENOMEM;
        for (size_t i = 0; r->sched && i < t.n; i++)
            r->sched[i] = t.rows[i].st;
        r->nsched = r->sched ? t.n : 0;
    }
    free(t.rows);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "scheduler split: out of memory");
}
