/* bench_record — what one recorded span costs, beside the physical floor
 * measured in the same run. Prints BENCH lines:
 *
 *   clock_pair_ns          2 pp_now              (baseline: 2 raw TSC reads)
 *   clock_pair_gettime_ns  2 clock_gettime       (baseline: 2 raw TSC reads; pp_now's
 *                          fallback, PIPEPROF_CLOCK=monotonic)
 *   record_span_ns         pp_span, a session after another (its chunks from the pool)
 *                          (baseline: a naive 64-byte append into a used buffer)
 *   record_span_fresh_ns   pp_span, a first session (fresh memory) (baseline: a naive
 *                          append into fresh memory; target ratio <= 1.2)
 *   timed_span_ns          2 pp_now + pp_span     (baseline: the floor, 2 raw TSC reads +
 *                          a naive append into a per-thread buffer; target <= 1.5)
 *   timed_span_fresh_ns    the same in fresh memory (baseline: the floor, fresh memory)
 *   timed_span_gettime_ns  2 clock_gettime + pp_span (baseline: the floor)
 *   timed_spans_per_s_Nt   2 pp_now + pp_span, N = 1, 2, 4 threads into one session,
 *                          spans/s over all (baseline: 2 pp_now alone, pairs/s with as
 *                          many threads)
 *   timed_span_cpu_ns_Nt   the same runs' process CPU time per span (baseline: per pair)
 *
 * Single-thread figures are thread CPU time (CLOCK_THREAD_CPUTIME_ID, page
 * faults included), the least of ROUNDS rounds of PER_ROUND operations: the
 * round least disturbed by the other processes of a shared machine. The
 * thread figures are wall time over all threads, the median of their
 * rounds; more threads than cores only share the cores.
 *
 * `bench_record --instructions MODE N` runs N operations of one MODE only
 * (span, naive, timed, floor) for bench/record_instructions, which counts them under
 * valgrind --tool=callgrind. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "bench_stats.h"
#include "core/clock.h"
#include "core/session.h"
#include "pipeprof/trace.h"

#define PER_ROUND 200000
#define ROUNDS 25
#define MT_ROUNDS 5

typedef struct naive_rec {
    uint64_t f[8];
} naive_rec; /* 64 bytes, as pp_record */

static volatile int64_t sink;

static int64_t gettime_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The raw counter the floor reads: the TSC, the virtual counter on
 * aarch64, else clock_gettime itself. */
static inline int64_t raw_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
    return (int64_t)__rdtsc();
#elif defined(__aarch64__)
    int64_t t;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(t));
    return t;
#else
    return gettime_ns(CLOCK_MONOTONIC);
#endif
}

/* One session with room for every record of a round, and a span in it. */
typedef struct recording {
    pp_session *s;
    pp_span_rec r;
} recording;

static void recording_open(recording *rec, uint64_t records) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.max_records = records + 16;
    if (pp_session_open(&cfg, &rec->s) != PP_OK || pp_session_start(rec->s) != PP_OK) {
        fprintf(stderr, "bench_record: cannot start a session\n");
        exit(1);
    }
    pp_track t;
    pp_track_thread(rec->s, NULL, &t);
    pp_span_rec_init(&rec->r);
    rec->r.track = t;
    rec->r.name = pp_intern("span");
    rec->r.role = PP_ROLE_EXEC;
    pp_span(rec->s, &rec->r); /* attach the thread before the timed loop */
}

static void recording_close(recording *rec) {
    pp_session_stats st;
    pp_session_stop(rec->s, NULL);
    pp_session_stats_get(rec->s, &st);
    if (st.dropped)
        fprintf(stderr, "bench_record: %llu records dropped: budget too small\n",
                (unsigned long long)st.dropped);
    pp_session_close(rec->s);
}

/* What one operation of a round does: read a clock twice (or not), then
 * record into a session or append naively (or not), into memory already
 * used (warm: chunks from the pool, the per-thread buffer) or fresh. */
enum clock_kind { NO_CLOCK, PP_NOW, GETTIME, TSC };
enum sink_kind { NO_SINK, PP_SPAN, NAIVE };
typedef struct mode {
    enum clock_kind clock;
    enum sink_kind sink;
    int fresh;
} mode;

static naive_rec *fresh_memory(size_t n) {
    void *p = mmap(NULL, n * sizeof(naive_rec), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "bench_record: out of memory\n");
        exit(1);
    }
    return p;
}

/* The naive append: 64 bytes into the next slot, the count published. */
static inline void naive_append(naive_rec *buf, _Atomic size_t *used, size_t i, int64_t ts,
                                int64_t dur) {
    naive_rec *r = &buf[i];
    r->f[0] = (uint64_t)ts;
    r->f[1] = (uint64_t)dur;
    r->f[2] = i;
    r->f[3] = r->f[4] = r->f[5] = 0;
    r->f[6] = 1;
    r->f[7] = 2;
    atomic_store_explicit(used, i + 1, memory_order_release);
}

static inline int64_t read_clock(enum clock_kind c, size_t i) {
    switch (c) {
    case PP_NOW:
        return pp_now();
    case GETTIME:
        return gettime_ns(CLOCK_MONOTONIC);
    case TSC:
        return raw_ticks();
    default:
        return (int64_t)i;
    }
}

/* n operations of `m`; a warm naive append goes to `warm` (n records). */
static __attribute__((noinline)) void run_mode(mode m, size_t n, naive_rec *warm) {
    int64_t acc = 0;
    _Atomic size_t used = 0;
    recording rec = {0};
    naive_rec *buf = m.sink == NAIVE && m.fresh ? fresh_memory(n) : warm;
    if (m.sink == PP_SPAN)
        recording_open(&rec, n);
    for (size_t i = 0; i < n; i++) {
        int64_t a = read_clock(m.clock, i);
        int64_t dur = read_clock(m.clock, i + 5) - a;
        if (m.sink == PP_SPAN) {
            rec.r.ts_ns = a;
            rec.r.dur_ns = dur;
            rec.r.batch = (int64_t)i;
            pp_span(rec.s, &rec.r);
        } else if (m.sink == NAIVE) {
            naive_append(buf, &used, i, a, dur);
        }
        acc += dur;
    }
    sink = acc + (int64_t)atomic_load(&used);
    if (rec.s)
        recording_close(&rec);
    if (buf != warm)
        munmap(buf, n * sizeof(naive_rec));
}

/* The least thread CPU time per operation of `m` over the rounds. A fresh
 * recording first empties the chunk pool, so that its chunks are new
 * memory as in a program's first session. */
static double best_ns(mode m, naive_rec *warm) {
    double best = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        if (m.sink == PP_SPAN && m.fresh)
            pp_chunk_pool_trim();
        int64_t t0 = gettime_ns(CLOCK_THREAD_CPUTIME_ID);
        run_mode(m, PER_ROUND, warm);
        double ns = (double)(gettime_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / PER_ROUND;
        best = ns < best ? ns : best;
    }
    return best;
}

typedef struct mt_job {
    pp_session *s; /* NULL: two pp_now alone */
    pthread_barrier_t *start;
} mt_job;

/* PER_ROUND timed spans into the shared session, or clock pairs. */
static void *mt_thread(void *p) {
    mt_job *j = p;
    pp_span_rec r;
    pp_span_rec_init(&r);
    if (j->s) {
        pp_track_thread(j->s, NULL, &r.track);
        r.name = pp_intern("span");
        pp_span(j->s, &r); /* attach before the start */
    }
    pthread_barrier_wait(j->start);
    int64_t acc = 0;
    for (int i = 0; i < PER_ROUND; i++) {
        r.ts_ns = pp_now();
        r.dur_ns = pp_now() - r.ts_ns;
        if (j->s)
            pp_span(j->s, &r);
        acc += r.dur_ns;
    }
    sink = acc;
    return NULL;
}

/* Timed spans (or, with !spans, clock pairs) over `threads` threads
 * recording into one session, the median of MT_ROUNDS rounds: per second of
 * wall time from the start to the last thread's end (*cpu_ns: CPU time of
 * the process per operation, which another process sharing the cores does
 * not change). */
static double per_second(int spans, int threads, double *cpu_ns) {
    double rate[MT_ROUNDS], cpu[MT_ROUNDS];
    for (int r = 0; r < MT_ROUNDS; r++) {
        recording rec = {0};
        if (spans)
            recording_open(&rec, (uint64_t)threads * (PER_ROUND + 2 * 4096));
        pthread_t th[4];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
        mt_job job = {rec.s, &start};
        for (int i = 0; i < threads; i++)
            pthread_create(&th[i], NULL, mt_thread, &job);
        int64_t t0 = gettime_ns(CLOCK_MONOTONIC), c0 = gettime_ns(CLOCK_PROCESS_CPUTIME_ID);
        pthread_barrier_wait(&start); /* (the threads wait in it: none has started) */
        for (int i = 0; i < threads; i++)
            pthread_join(th[i], NULL);
        double ops = (double)threads * PER_ROUND;
        rate[r] = ops * 1e9 / (double)(gettime_ns(CLOCK_MONOTONIC) - t0);
        cpu[r] = (double)(gettime_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) / ops;
        pthread_barrier_destroy(&start);
        if (rec.s)
            recording_close(&rec);
    }
    *cpu_ns = bench_median(cpu, MT_ROUNDS);
    return bench_median(rate, MT_ROUNDS);
}

static void print_ns(const char *name, double value, const char *baseline, double base) {
    printf("BENCH %s value=%.2f unit=ns baseline=%s:%.2f ratio=%.2f\n", name, value, baseline,
           base, value / base);
}

static int instructions_mode(const char *what, const char *count) {
    static const char *const names[] = {"span", "naive", "timed", "floor"};
    static const mode modes[] = {{NO_CLOCK, PP_SPAN, 0}, {NO_CLOCK, NAIVE, 0},
                                 {PP_NOW, PP_SPAN, 0}, {TSC, NAIVE, 0}};
    size_t n = (size_t)strtoull(count, NULL, 10);
    for (size_t i = 0; n && i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(what, names[i]) == 0) {
            naive_rec *warm = fresh_memory(n);
            run_mode(modes[i], n, warm);
            munmap(warm, n * sizeof *warm);
            return 0;
        }
    }
    fprintf(stderr, "bench_record: --instructions takes span, naive, timed or floor and a "
            "count above 0, not %s %s\n", what, count);
    return 2;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--instructions") == 0)
        return instructions_mode(argv[2], argv[3]);
    fprintf(stderr, "bench_record: clock %s\n", pp_clock_source());
    naive_rec *warm = fresh_memory(PER_ROUND);
    memset(warm, 0, PER_ROUND * sizeof *warm);
    double tsc = best_ns((mode){TSC, NO_SINK, 0}, warm);
    double naive = best_ns((mode){NO_CLOCK, NAIVE, 0}, warm);
    double naive_fresh = best_ns((mode){NO_CLOCK, NAIVE, 1}, warm);
    double floor = best_ns((mode){TSC, NAIVE, 0}, warm);
    double floor_fresh = best_ns((mode){TSC, NAIVE, 1}, warm);
    print_ns("clock_pair_ns", best_ns((mode){PP_NOW, NO_SINK, 0}, warm), "two_tsc_reads", tsc);
    print_ns("clock_pair_gettime_ns", best_ns((mode){GETTIME, NO_SINK, 0}, warm),
             "two_tsc_reads", tsc);
    print_ns("record_span_ns", best_ns((mode){NO_CLOCK, PP_SPAN, 0}, warm), "naive_append",
             naive);
    print_ns("record_span_fresh_ns", best_ns((mode){NO_CLOCK, PP_SPAN, 1}, warm),
             "naive_append_fresh", naive_fresh);
    print_ns("timed_span_ns", best_ns((mode){PP_NOW, PP_SPAN, 0}, warm),
             "two_tsc_reads_naive_append", floor);
    print_ns("timed_span_fresh_ns", best_ns((mode){PP_NOW, PP_SPAN, 1}, warm),
             "two_tsc_reads_naive_append_fresh", floor_fresh);
    print_ns("timed_span_gettime_ns", best_ns((mode){GETTIME, PP_SPAN, 0}, warm),
             "two_tsc_reads_naive_append", floor);
    for (int threads = 1; threads <= 4; threads *= 2) {
        double span_cpu, pair_cpu;
        double spans = per_second(1, threads, &span_cpu), pairs = per_second(0, threads, &pair_cpu);
        printf("BENCH timed_spans_per_s_%dt value=%.3g unit=spans/s baseline=clock_pairs_per_s:%.3g "
               "ratio=%.2f\n", threads, spans, pairs, spans / pairs);
        char name[64];
        snprintf(name, sizeof name, "timed_span_cpu_ns_%dt", threads);
        print_ns(name, span_cpu, "clock_pair_cpu_ns", pair_cpu);
    }
    munmap(warm, PER_ROUND * sizeof *warm);
    return 0;
}
