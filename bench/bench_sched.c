/* bench_sched — what the sched bit costs a host span: a stage run (a
 * trivial host function, so the recording is all there is) in a session
 * collecting spans, beside the same in a session collecting spans and
 * sched, alternated in rounds, median of the rounds. Also the bare
 * pp_sched_read, and a span recorded by hand with pp_sched_read and
 * pp_annotate_sched beside the span alone. And the sampler (collect
 * "threads") at its default 10 ms over a process of 16 idle threads: its
 * own CPU time per second of recording, beside the CPU the process uses
 * in the same second without it. Prints BENCH lines (docs/architecture.md
 * §8); ratio = with / without (below 1 is better). */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "pipeprof/pipeline.h"
#include "pipeprof/sched.h"

#define ROUNDS 9
#define RUNS 4000

static int nothing(void *ctx, int64_t batch, const float *in, float *out, int64_t nodes,
                   int64_t in_dim, int64_t out_dim) {
    (void)ctx, (void)batch, (void)in, (void)out, (void)nodes, (void)in_dim, (void)out_dim;
    return PP_OK;
}

/* ns per pp_stage_run of a host stage that does nothing, under `collect`. */
static double stage_run_ns(unsigned collect) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.collect = collect;
    pp_session *s = NULL;
    if (pp_session_open(&cfg, &s) != PP_OK || pp_session_start(s) != PP_OK)
        return -1;
    pp_stage_config sc = {.name = "Work", .host = nothing,
                          .workload = {.kind = PP_WORKLOAD_MATMUL, .nodes = 1, .in_dim = 1,
                                       .out_dim = 1, .layers = 1}};
    pp_stage *st = NULL;
    pp_error err = {{0}};
    if (pp_stage_create(s, &sc, &st, &err) != PP_OK)
        return -1;
    float in = 0, out = 0;
    pp_stage_run(st, 0, &in, &out, NULL, &err); /* the thread's track and buffer */
    int64_t t0 = pp_now();
    for (int i = 1; i <= RUNS; i++)
        pp_stage_run(st, i, &in, &out, NULL, &err);
    double ns = (double)(pp_now() - t0) / RUNS;
    pp_stage_free(st);
    pp_session_close(s);
    return ns;
}

/* ns per span recorded by hand, with or without its scheduler figures. */
static double hand_span_ns(int sched) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    if (pp_session_open(&cfg, &s) != PP_OK || pp_session_start(s) != PP_OK)
        return -1;
    pp_track t;
    pp_track_thread(s, "bench", &t);
    pp_span_rec rec;
    pp_span_rec_init(&rec);
    rec.track = t;
    rec.name = rec.stage = pp_intern("Work");
    rec.role = PP_ROLE_STAGE;
    int64_t t0 = pp_now();
    for (int i = 0; i < RUNS; i++) {
        pp_sched_sample at;
        if (sched)
            pp_sched_read(&at);
        rec.ts_ns = pp_now();
        rec.batch = i;
        rec.dur_ns = pp_now() - rec.ts_ns;
        if (pp_span(s, &rec) == PP_OK && sched)
            pp_annotate_sched(s, &at);
    }
    double ns = (double)(pp_now() - t0) / RUNS;
    pp_session_close(s);
    return ns;
}

static double read_ns(void) {
    pp_sched_sample at;
    int64_t t0 = pp_now();
    for (int i = 0; i < RUNS; i++)
        pp_sched_read(&at);
    return (double)(pp_now() - t0) / RUNS;
}

static double clock_ns(void) {
    volatile int64_t sink = 0;
    int64_t t0 = pp_now();
    for (int i = 0; i < RUNS; i++)
        sink += pp_now();
    (void)sink;
    return (double)(pp_now() - t0) / RUNS;
}

#define IDLE_THREADS 16

static int idle_stop[2];

static void *idle_main(void *arg) {
    (void)arg;
    char c;
    while (read(idle_stop[0], &c, 1) < 0) /* sleeps until the pipe closes */
        ;
    return NULL;
}

/* Process CPU microseconds over `ms` of recording with `collect`, a
 * process of IDLE_THREADS sleeping threads beside it. */
static double process_cpu_us(unsigned collect, int ms) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.collect = collect;
    pp_session *s = NULL;
    if (pp_session_open(&cfg, &s) != PP_OK || pp_session_start(s) != PP_OK)
        return -1;
    double before = bench_process_cpu_us();
    struct timespec nap = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&nap, NULL);
    double used = bench_process_cpu_us() - before;
    pp_session_close(s);
    return used;
}

static void sampler_cost(void) {
    pthread_t th[IDLE_THREADS];
    if (pipe(idle_stop) != 0)
        return;
    for (int i = 0; i < IDLE_THREADS; i++)
        pthread_create(&th[i], NULL, idle_main, NULL);
    double with[3], without[3];
    for (int r = 0; r < 3; r++) {
        without[r] = process_cpu_us(PP_COLLECT_SPANS, 1000);
        with[r] = process_cpu_us(PP_COLLECT_SPANS | PP_COLLECT_THREADS, 1000);
    }
    close(idle_stop[1]);
    for (int i = 0; i < IDLE_THREADS; i++)
        pthread_join(th[i], NULL);
    close(idle_stop[0]);
    double w = bench_median(with, 3), wo = bench_median(without, 3);
    printf("BENCH sched_sampler_cpu_us_per_s value=%.0f unit=us/s baseline=no_sampler:%.0f "
           "ratio=%.2f threads=%d period_ms=10\n", w, wo, wo > 0 ? w / wo : 0.0,
           IDLE_THREADS + 2);
}

int main(void) {
    double without[ROUNDS], with[ROUNDS], bare[ROUNDS], hand[ROUNDS], reads[ROUNDS],
        clocks[ROUNDS];
    pp_sched_sample probe;
    if (pp_sched_read(&probe) != PP_OK) {
        fprintf(stderr, "bench_sched: no scheduler counters on this system; skipped\n");
        return 0;
    }
    for (int r = 0; r < ROUNDS; r++) { /* alternated: drift hits both alike */
        without[r] = stage_run_ns(PP_COLLECT_SPANS);
        with[r] = stage_run_ns(PP_COLLECT_SPANS | PP_COLLECT_SCHED);
        bare[r] = hand_span_ns(0);
        hand[r] = hand_span_ns(1);
        reads[r] = read_ns();
        clocks[r] = clock_ns();
    }
    double wo = bench_median(without, ROUNDS), w = bench_median(with, ROUNDS);
    double b = bench_median(bare, ROUNDS), h = bench_median(hand, ROUNDS);
    double rd = bench_median(reads, ROUNDS), ck = bench_median(clocks, ROUNDS);
    printf("BENCH sched_stage_run_ns value=%.0f unit=ns baseline=stage_run_without_sched:%.0f "
           "ratio=%.2f method=%s\n", w, wo, w / wo, pp_sched_method_name());
    printf("BENCH sched_span_ns value=%.0f unit=ns baseline=span_without_sched:%.0f "
           "ratio=%.2f method=%s\n", h, b, h / b, pp_sched_method_name());
    printf("BENCH sched_read_ns value=%.0f unit=ns baseline=pp_now:%.0f ratio=%.1f method=%s\n",
           rd, ck, rd / ck, pp_sched_method_name());
    if (pp_sched_method_get() == PP_SCHED_SCHEDSTAT)
        sampler_cost();
    return 0;
}
