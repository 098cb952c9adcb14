/* sched_stage.h — a host stage made to spin or sleep, recorded at level 1
 * (the sched bit on), and its row of the scheduler split: what
 * test_sched.c and test_sched_contention.c share. */
#ifndef PP_TEST_SCHED_STAGE_H
#define PP_TEST_SCHED_STAGE_H

#include <time.h>

#include "pipeprof/analyze.h"
#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

#define BATCHES 4
#define MS 1000000LL

static inline int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins until the thread has run `*ctx` ns on a CPU. */
static inline int spin_fn(void *ctx, int64_t batch, const float *in, float *out, int64_t nodes,
                          int64_t in_dim, int64_t out_dim) {
    (void)batch, (void)in, (void)out, (void)nodes, (void)in_dim, (void)out_dim;
    int64_t until = thread_cpu_ns() + *(const int64_t *)ctx;
    volatile uint64_t x = 0;
    while (thread_cpu_ns() < until)
        x++;
    return PP_OK;
}

/* Sleeps `*ctx` ns. */
static inline int sleep_fn(void *ctx, int64_t batch, const float *in, float *out, int64_t nodes,
                           int64_t in_dim, int64_t out_dim) {
    (void)batch, (void)in, (void)out, (void)nodes, (void)in_dim, (void)out_dim;
    int64_t ns = *(const int64_t *)ctx;
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    return PP_OK;
}

/* Runs a host stage `fn` BATCHES times in a session of its own (level 1:
 * the sched bit is on by default) and returns its model. */
static inline pp_model *record_stage(pp_host_fn fn, int64_t *ctx) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT(pp_session_collect(s) & PP_COLLECT_SCHED);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_stage_config sc = {.name = "Work", .ndevices = 0, .host = fn, .host_ctx = ctx,
                          .workload = {.kind = PP_WORKLOAD_MATMUL, .nodes = 1, .in_dim = 1,
                                       .out_dim = 1, .layers = 1}};
    pp_stage *st = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_stage_create(s, &sc, &st, &err), PP_OK);
    float in = 0, out = 0;
    for (int b = 0; b < BATCHES; b++)
        EXPECT_EQ_I64(pp_stage_run(st, b, &in, &out, NULL, &err), PP_OK);
    pp_stage_free(st);
    pp_model *m = recorded_model(s);
    pp_session_close(s);
    return m;
}

/* The report's row of the Work stage spans; checks that it has every batch
 * and that its parts add up to the wall exactly. */
static inline pp_sched_stats work_row(const pp_report *r) {
    size_t n = 0;
    const pp_sched_stats *rows = pp_report_sched(r, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].stage, "Work") == 0 && strcmp(rows[i].span, "stage") == 0) {
            EXPECT_EQ_U64(rows[i].spans, BATCHES);
            EXPECT_EQ_I64(rows[i].cpu_ns + rows[i].wait_ns + rows[i].blocked_ns,
                          rows[i].wall_ns);
            EXPECT(rows[i].cpu_ns >= 0 && rows[i].wait_ns >= 0 && rows[i].blocked_ns >= 0);
            return rows[i];
        }
    pp_test_fail(__FILE__, __LINE__, "no sched row for the Work stage spans");
    return (pp_sched_stats){0};
}

static inline pp_report *report_of(const pp_model *m) {
    pp_report *r = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_report_build(m, NULL, &r, &err), PP_OK);
    return r;
}

#endif
