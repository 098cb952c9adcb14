/* Scheduler figures of host stages: a stage that spins is on a CPU, one
 * that sleeps is blocked, one that competes with busy threads pinned to its
 * core waits for the core, and the three parts add up to the stage's wall
 * exactly (tests/pipeline/test_sched_contention.c has the one that
 * competes). Each expected figure follows from what the stage was made to do
 * (a spin of so much thread CPU time, a sleep of so long, three busy
 * threads sharing its one core), never from a clock's speed. The method is
 * named in the trace and survives the .pptrace and Chrome JSON round
 * trips; without schedstat the fallback records no run-queue figure. */
#include <stdio.h>
#include <stdlib.h>

#include "core/sched.h"
#include "pipeprof/io.h"

#include "sched_stage.h"

/* A spinning stage is on a CPU or waiting for one, never asleep: blocked is
 * only the few hundred ns between the counters' reads and the span's
 * timestamps (the machine is shared, so part of the spin may wait). */
static void test_a_spinning_stage_is_on_cpu(void) {
    int64_t spin = 20 * MS;
    pp_model *m = record_stage(spin_fn, &spin);
    pp_report *r = report_of(m);
    pp_sched_stats v = work_row(r);
    EXPECT(v.cpu_ns >= BATCHES * spin); /* it ran that long by construction */
    EXPECT(v.blocked_ns < v.wall_ns / 10);
    EXPECT_STR(pp_report_sched_method(r), pp_sched_method_name());
    pp_report_free(r);
    pp_model_free(m);
}

/* A sleeping stage is blocked for at least its sleep, and the sleep is a
 * voluntary switch each time. */
static void test_a_sleeping_stage_is_blocked(void) {
    int64_t nap = 20 * MS;
    pp_model *m = record_stage(sleep_fn, &nap);
    pp_report *r = report_of(m);
    pp_sched_stats v = work_row(r);
    /* the reads sit outside the span by a few us: allow 1 ms a batch */
    EXPECT(v.blocked_ns >= BATCHES * (nap - 1 * MS));
    EXPECT(v.voluntary >= BATCHES);
    EXPECT(v.cpu_ns < v.wall_ns / 10);
    pp_report_free(r);
    pp_model_free(m);
}

/* The figures and the method survive writing and reading .pptrace and
 * Chrome JSON: the split read back is the split recorded. */
static void test_the_split_survives_both_formats(void) {
    int64_t nap = 2 * MS;
    pp_model *m = record_stage(sleep_fn, &nap);
    pp_report *r = report_of(m);
    pp_sched_stats v = work_row(r);
    static const char *const ext[] = {"pptrace", "json"};
    for (int i = 0; i < 2; i++) {
        char name[64];
        snprintf(name, sizeof name, "sched_roundtrip.%s", ext[i]);
        const char *path = pp_test_path(name);
        pp_error err = {{0}};
        EXPECT_EQ_I64(pp_trace_write(m, path, &err), PP_OK);
        pp_model *back = NULL;
        EXPECT_EQ_I64(pp_trace_read(path, &back, &err), PP_OK);
        if (!back)
            continue;
        pp_report *rb = report_of(back);
        pp_sched_stats w = work_row(rb);
        EXPECT_EQ_I64(w.cpu_ns, v.cpu_ns);
        EXPECT_EQ_I64(w.wait_ns, v.wait_ns);
        EXPECT_EQ_I64(w.blocked_ns, v.blocked_ns);
        EXPECT_EQ_I64(w.voluntary, v.voluntary);
        EXPECT_STR(pp_report_sched_method(rb), pp_report_sched_method(r));
        pp_report_free(rb);
        pp_model_free(back);
    }
    pp_report_free(r);
    pp_model_free(m);
}

/* Without schedstat (forced here), the fallback reads on-CPU time and the
 * switches, names itself "cputime", and every off-CPU ns counts as
 * blocked: no span claims a run-queue figure it did not have. */
static void test_the_fallback_has_no_run_queue_figure(void) {
    pp_sched_force(PP_SCHED_CPUTIME);
    int64_t nap = 5 * MS;
    pp_model *m = record_stage(sleep_fn, &nap);
    pp_sched_force(PP_SCHED_NONE);
    pp_report *r = report_of(m);
    pp_sched_stats v = work_row(r);
    EXPECT_STR(pp_report_sched_method(r), "cputime");
    EXPECT_EQ_U64(v.no_wait, BATCHES);
    EXPECT_EQ_I64(v.wait_ns, 0);
    EXPECT(v.blocked_ns >= BATCHES * (nap - 1 * MS));
    pp_report_free(r);
    pp_model_free(m);
}

/* Without the bit, nothing is read or recorded: the report says the trace
 * carries no scheduler figures. */
static void test_without_the_bit_the_report_says_none(void) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.collect = PP_COLLECT_SPANS | PP_COLLECT_HW;
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    int64_t nap = 1 * MS;
    pp_stage_config sc = {.name = "Work", .host = sleep_fn, .host_ctx = &nap,
                          .workload = {.kind = PP_WORKLOAD_MATMUL, .nodes = 1, .in_dim = 1,
                                       .out_dim = 1, .layers = 1}};
    pp_stage *st = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_stage_create(s, &sc, &st, &err), PP_OK);
    float in = 0, out = 0;
    EXPECT_EQ_I64(pp_stage_run(st, 0, &in, &out, NULL, &err), PP_OK);
    pp_stage_free(st);
    pp_model *m = recorded_model(s);
    pp_session_close(s);
    EXPECT_EQ_U64(pp_model_find_string(m, "sched_cpu_ns"), 0);
    pp_report *r = report_of(m);
    size_t n = 1;
    pp_report_sched(r, &n);
    EXPECT_EQ_U64(n, 0);
    EXPECT(pp_report_sched_method(r) == NULL);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    pp_report_write_text(r, f);
    fclose(f);
    EXPECT_CONTAINS(text, "Scheduler split: none (the trace carries no scheduler figures");
    free(text);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_a_spinning_stage_is_on_cpu);
    RUN(test_a_sleeping_stage_is_blocked);
    RUN(test_the_split_survives_both_formats);
    RUN(test_the_fallback_has_no_run_queue_figure);
    RUN(test_without_the_bit_the_report_says_none);
    return pp_test_finish();
}
