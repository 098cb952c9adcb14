/* findings_sched.c — the finding that names where a host stage's time goes
 * when its thread is not computing (docs/analysis.md "Scheduler split").
 *
 * A host stage (timed by its own spans: no execs) whose spans were off a
 * CPU for at least a fifth of their wall gets one statement, the largest
 * off-CPU share first, at most three: "GraphPrep: 44.9 ms per batch, 21.0
 * on CPU, 15.2 waiting for a core, 8.7 blocked". A device stage's spans
 * are blocked while they wait for the device, which the wall decomposition
 * already explains, so they get none. Kept apart from findings.c, which
 * only calls it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

#define MAX_STATEMENTS 3
#define MIN_OFF_CPU 0.2

static double off_cpu_share(const pp_sched_stats *v) {
    return an_ratio(v->wait_ns + v->blocked_ns, v->wall_ns);
}

/* 1 when row v is the stage spans of a host stage that was off a CPU for
 * at least MIN_OFF_CPU of their wall. */
static int worth_saying(const pp_report *r, const pp_sched_stats *v) {
    if (v->spans == 0 || v->wall_ns <= 0 || v->span[0] != 's' || v->span[1] != 't')
        return 0; /* not the "stage" row */
    uint32_t s = an_find_stage(r, v->stage);
    return s != AN_NONE && r->stages[s].exec_less && off_cpu_share(v) >= MIN_OFF_CPU;
}

/* Blocked time in a Python process (its name: python3.11, the Python
 * package's sessions) while other threads of it ran for at least half as
 * long: likely the GIL, which one thread at a time holds while the others
 * sleep on it. An inference, and said to be one. */
static int likely_gil(const pp_report *r, const pp_sched_stats *v) {
    const char *process = pp_model_string(r->m, r->meta.process_name);
    return v->rival && strncmp(process, "python", 6) == 0 &&
           2 * v->rival_cpu_ns >= v->blocked_ns;
}

static char *statement(const pp_report *r, const pp_sched_stats *v) {
    double n = (double)v->spans, ms = 1e6;
    char cause[300];
    if (v->wait_ns >= v->blocked_ns && v->rival)
        snprintf(cause, sizeof cause, "waiting for a core while %s's threads ran (%.1f ms of CPU "
                 "during its spans, by the sampler); with a core of its own it would take about "
                 "%.1f ms per batch (its wait removed, nothing else changed)", v->rival,
                 (double)v->rival_cpu_ns / ms, (double)(v->wall_ns - v->wait_ns) / n / ms);
    else if (v->wait_ns >= v->blocked_ns)
        snprintf(cause, sizeof cause, "other threads held the cores; with a core of its own it "
                 "would take about %.1f ms per batch (its wait removed, nothing else changed)",
                 (double)(v->wall_ns - v->wait_ns) / n / ms);
    else if (likely_gil(r, v))
        snprintf(cause, sizeof cause, "blocked while %s's threads ran (%.1f ms of CPU during "
                 "its spans, by the sampler): likely GIL wait in this Python process (an "
                 "inference: pipeprof cannot see the GIL)", v->rival,
                 (double)v->rival_cpu_ns / ms);
    else
        snprintf(cause, sizeof cause, "its thread slept (a queue, a lock, I/O, or in Python "
                 "the GIL)");
    if (v->no_wait == v->spans) /* the method could not tell waiting from blocked */
        return an_strdupf("%s: %.1f ms per batch, %.1f on CPU, %.1f off CPU (waiting for a "
                          "core and blocked not told apart: %s has no run-queue figure).",
                          v->stage, (double)v->wall_ns / n / ms, (double)v->cpu_ns / n / ms,
                          (double)(v->wait_ns + v->blocked_ns) / n / ms, r->sched_method);
    return an_strdupf("%s: %.1f ms per batch, %.1f on CPU, %.1f waiting for a core, %.1f "
                      "blocked (%.0f%% off CPU: %s; %.1f voluntary and %.1f involuntary "
                      "context switches per batch).",
                      v->stage, (double)v->wall_ns / n / ms, (double)v->cpu_ns / n / ms,
                      (double)v->wait_ns / n / ms, (double)v->blocked_ns / n / ms,
                      100.0 * off_cpu_share(v), cause, (double)v->voluntary / n,
                      (double)v->involuntary / n);
}

int an_sched_findings(pp_report *r) {
    int said[MAX_STATEMENTS];
    size_t nsaid = 0;
    while (nsaid < MAX_STATEMENTS) {
        int best = -1;
        for (size_t i = 0; i < r->nsched; i++) {
            int taken = 0;
            for (size_t j = 0; j < nsaid; j++)
                taken |= said[j] == (int)i;
            if (!taken && worth_saying(r, &r->sched[i]) &&
                (best < 0 || off_cpu_share(&r->sched[i]) > off_cpu_share(&r->sched[best])))
                best = (int)i;
        }
        if (best < 0)
            break;
        const pp_sched_stats *v = &r->sched[best];
        pp_finding *f = an_finding_add(r, PP_FINDING_SCHED, an_find_stage(r, v->stage), AN_NONE,
                                       statement(r, v));
        if (!f)
            return PP_ENOMEM;
        double share = off_cpu_share(v);
        an_finding_figure(f, "off_cpu_share", "share", share, share, share);
        said[nsaid++] = best;
    }
    return PP_OK;
}
