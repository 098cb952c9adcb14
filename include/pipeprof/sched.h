/* pipeprof/sched.h — where a host thread's time goes: on a CPU, runnable
 * but waiting for a core (a run queue), or blocked (sleeping on a lock, a
 * queue, I/O, the GIL).
 *
 * The calling thread's scheduler counters are read at both ends of a span
 * and their differences annotate it (docs/recording.md "Scheduler
 * figures"): `sched_cpu_ns` (on a CPU), `sched_wait_ns` (runnable, waiting
 * for a core; absent when the method cannot tell), `sched_vcsw` and
 * `sched_ivcsw` (voluntary and involuntary context switches) and
 * `sched_method`. The analysis splits each host stage's wall into on-CPU,
 * waiting and blocked = wall - both (docs/analysis.md).
 *
 * pipeprof's stages, partitions, merges, host work and API spans do this
 * when the session collects PP_COLLECT_SCHED (on at level >= 1); a program
 * may do it for its own spans:
 *
 *     pp_sched_sample at;
 *     pp_sched_read(&at);                  // span start
 *     ... the work ...
 *     pp_span(s, &rec);                    // the finished span
 *     pp_annotate_sched(s, &at);           // its scheduler figures
 *
 * Cost: three system calls a read (the thread's CPU clock, a pread of
 * /proc/thread-self/schedstat, whose descriptor is opened once per thread,
 * and getrusage(RUSAGE_THREAD)), about 1.3 us together; bench/bench_sched.c
 * measures a span with and without them. Never call it per op. */
#ifndef PIPEPROF_SCHED_H
#define PIPEPROF_SCHED_H

#include "pipeprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The calling thread's counters since it started. */
typedef struct pp_sched_sample {
    int64_t cpu_ns;      /* time on a CPU */
    int64_t wait_ns;     /* time runnable on a run queue; -1 when the method cannot tell */
    int64_t voluntary;   /* context switches the thread asked for (it blocked) */
    int64_t involuntary; /* context switches forced on it (preempted) */
    int64_t ts_ns;       /* pp_now() at the read, beside the counters */
} pp_sched_sample;

/* How the counters are read, process-wide, chosen at the first read. Both
 * take on-CPU time from the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID)
 * and the switches from getrusage(RUSAGE_THREAD); the run-queue wait needs
 * /proc/thread-self/schedstat (a kernel with CONFIG_SCHED_INFO). */
typedef enum pp_sched_method {
    PP_SCHED_NONE = 0,      /* nothing readable: every read fails */
    PP_SCHED_SCHEDSTAT = 1, /* "schedstat": with the run-queue wait */
    PP_SCHED_CPUTIME = 2    /* "cputime": without it (wait_ns -1) */
} pp_sched_method;

#ifndef PIPEPROF_DISABLE

/* Reads the calling thread's counters. PP_EUNSUPPORTED when no method
 * works on this system. */
int pp_sched_read(pp_sched_sample *out);
/* The method in use ("schedstat", "cputime" or "none"), as the trace names
 * it in `sched_method`. */
const char *pp_sched_method_name(void);
pp_sched_method pp_sched_method_get(void);

/* Reads the calling thread's counters now and annotates its last record
 * with the differences from `start` (a pp_sched_read at the span's start,
 * on the same thread), as read: the analysis clips them to the span's wall
 * (the reads and the span's timestamps are a few hundred ns apart). 0, or
 * a negative PP_E* code (nothing annotated when the read fails). */
int pp_annotate_sched(pp_session *s, const pp_sched_sample *start);
/* The same with both ends given: for a span recorded after later work on
 * its thread (a partition recorded once the merge is done). */
int pp_annotate_sched_between(pp_session *s, const pp_sched_sample *start,
                              const pp_sched_sample *end);
/* Records `rec` as a span from rec->ts_ns to now (its dur_ns is set) with
 * the scheduler figures since `start`: the end time and the counters are
 * read together, so that nothing between them counts in the figures but
 * not in the span. For bindings whose every call may wait (Python takes
 * its GIL back after each C call): start = a pp_sched_read, rec->ts_ns =
 * start.ts_ns. Returns what pp_span returns; the figures go on only a kept
 * span. */
int pp_span_sched(pp_session *s, pp_span_rec *rec, const pp_sched_sample *start);

#else /* PIPEPROF_DISABLE: nothing is read or recorded. */

static inline int pp_sched_read(pp_sched_sample *out) { (void)out; return PP_EUNSUPPORTED; }
static inline const char *pp_sched_method_name(void) { return "none"; }
static inline pp_sched_method pp_sched_method_get(void) { return PP_SCHED_NONE; }
static inline int pp_annotate_sched(pp_session *s, const pp_sched_sample *a) {
    (void)s; (void)a; return 0; }
static inline int pp_annotate_sched_between(pp_session *s, const pp_sched_sample *a,
                                            const pp_sched_sample *b) {
    (void)s; (void)a; (void)b; return 0; }
static inline int pp_span_sched(pp_session *s, pp_span_rec *r, const pp_sched_sample *a) {
    (void)s; (void)r; (void)a; return 0; }

#endif

#ifdef __cplusplus
}
#endif
#endif
