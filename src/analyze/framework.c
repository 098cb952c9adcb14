/* framework.c — the three figures of the PipelineProfiler framework, the
 * user's earlier profiler (docs/analysis.md "PipelineProfiler figures"),
 * computed by its own definitions beside pipeprof's figures:
 *
 *   HW Utilization %    = Total HW Time / Total Wall Time of a device's tasks
 *                         (pipeprof's hw% divides by |W| instead, and eff%
 *                         leaves out execs of unknown hw, partitions, merges);
 *   Bubbles             = the mean gap between the end of one task and the
 *                         start of the next on the same device, tasks in
 *                         start order, gaps > 0 only (pipeprof's bubbles are
 *                         the gaps between the device's merged busy
 *                         intervals: a different number when tasks overlap);
 *   Concurrency penalty = Wall - HW, summed over the device's tasks.
 *
 * A task is an exec inside W (real or host work) or, on a device row, a
 * partition or merge inside W on a track that carries execs: the framework
 * logs Partition and Merge on its CPU row and counts them as that device's
 * work. Per (device, stage) rows take that stage's execs only. */
#include <stdlib.h>

#include "analyze/report.h"
#include "core/error.h"

typedef struct task {
    uint32_t device, stage; /* stage AN_NONE: a partition, merge or unlabeled exec */
    int64_t start, end, hw;
} task;

static int by_device(const void *a, const void *b) {
    const task *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static int by_stage(const void *a, const void *b) {
    const task *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

__extension__ typedef __int128 i128;

/* A sum or difference of times, saturated at the int64 range: hostile
 * hardware times near 2^64 read as the largest time, never as a wrapped
 * negative one (as the other steps' sums, percentiles.c). */
static int64_t saturate(i128 v) {
    return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* One row over tasks [t, t + n), already in start order. */
static pp_framework_stats row_of(const task *t, size_t n, uint32_t stage) {
    pp_framework_stats s = {.device = t[0].device, .stage = stage, .tasks = n};
    double gaps = 0;
    i128 wall = 0, hw = 0;
    for (size_t i = 0; i < n; i++) {
        wall += (i128)t[i].end - t[i].start;
        hw += t[i].hw;
        s.hw_known += t[i].hw != 0;
        if (i > 0 && t[i].start > t[i - 1].end) { /* the previous task in start order */
            s.bubbles++;
            gaps += (double)(t[i].start - t[i - 1].end);
        }
    }
    s.wall_ns = saturate(wall), s.hw_ns = saturate(hw);
    s.hw_utilization_pct = s.wall_ns > 0 ? 100.0 * (double)s.hw_ns / (double)s.wall_ns : 0;
    s.concurrency_penalty_ns = saturate(wall - hw);
    s.bubble_mean_ns = s.bubbles ? gaps / (double)s.bubbles : 0;
    return s;
}

static task task_of(const pp_report *r, size_t event, uint32_t device, uint32_t stage) {
    uint64_t hw = pp_cols_hw(&r->c, event); /* unsigned: 2^63 and more are the largest time */
    return (task){device, stage, an_start(r, event), an_end(r, event),
                  hw > INT64_MAX ? INT64_MAX : (int64_t)hw};
}

int an_framework_compute(pp_report *r, pp_error *err) {
    size_t n = 0;
    task *t = malloc((r->nexecs + r->nhost + 1) * sizeof *t);
    if (!t)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (an_exec_inside(r, x))
            t[n++] = task_of(r, x->event, an_exec_device(r, x), x->stage);
    }
    for (size_t i = 0; i < r->nhost; i++) {
        const an_host *h = &r->host[i];
        uint8_t role = an_host_role(h);
        uint32_t d = r->track_device[pp_cols_track(&r->c, h->event)];
        if ((role == PP_ROLE_PARTITION || role == PP_ROLE_MERGE) && d != AN_NONE &&
            an_host_inside(r, h))
            t[n++] = task_of(r, h->event, d, AN_NONE);
    }
    /* at most a device row and a stage row per task */
    r->framework = malloc((2 * n + 1) * sizeof *r->framework);
    if (!r->framework) {
        free(t);
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    }
    qsort(t, n, sizeof *t, by_device);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && t[j].device == t[i].device;)
            j++;
        r->framework[r->nframework++] = row_of(t + i, j - i, UINT32_MAX);
    }
    qsort(t, n, sizeof *t, by_stage);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && t[j].device == t[i].device && t[j].stage == t[i].stage;)
            j++;
        if (t[i].stage != AN_NONE)
            r->framework[r->nframework++] = row_of(t + i, j - i, t[i].stage);
    }
    free(t);
    return PP_OK;
}

const pp_framework_stats *pp_report_framework(const pp_report *r, size_t *n) {
    *n = r->nframework;
    return r->framework;
}
