/* The executor: N request slots on one device behave as an async infer
 * queue, and every request leaves exactly one exec span on the row of its
 * slot, with its stage and batch, and hardware times at level >= 1. */
#include <pthread.h>

#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

#define REQUESTS 2
#define BATCHES 5

typedef struct done_log {
    pthread_mutex_t lock;
    int calls;
    int seen[BATCHES];
} done_log;

static void on_done(void *ctx, pp_request *r, int64_t batch, int status) {
    (void)r;
    done_log *log = ctx;
    pthread_mutex_lock(&log->lock);
    log->calls++;
    if (batch >= 0 && batch < BATCHES && status == PP_OK)
        log->seen[batch]++;
    pthread_mutex_unlock(&log->lock);
}

static pp_session *started_session(int level) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.level = level;
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    return s;
}

/* Submits BATCHES requests through REQUESTS slots (acquire blocks while both
 * run), waits for all, and returns the recorded model. */
static pp_model *run_queue(int level, pp_exec_window *win, done_log *log) {
    pp_session *s = started_session(level);
    pp_device *npu = NULL;
    EXPECT_EQ_I64(pp_device_open("sim:NPU", NULL, &npu, NULL), PP_OK);
    pp_executor_config cfg = {.device = npu, .requests = REQUESTS, .stage = "Embed"};
    pp_workload_init(&cfg.workload);
    pp_executor *ex = NULL;
    EXPECT_EQ_I64(pp_executor_create(s, &cfg, &ex, NULL), PP_OK);
    int64_t before = pp_now();
    for (int b = 0; b < BATCHES; b++) {
        pp_request *r = pp_executor_acquire(ex);
        EXPECT_EQ_I64(pp_executor_start(ex, r, b, on_done, log), PP_OK);
    }
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_executor_wait_all(ex, win, &err), PP_OK);
    int64_t after = pp_now();
    EXPECT(win->start_ns >= before && win->end_ns <= after);
    pp_executor_free(ex);
    pp_device_close(npu);
    pp_model *m = recorded_model(s);
    pp_session_close(s);
    return m;
}

static void test_each_request_is_one_exec_span_on_its_slot_row(void) {
    done_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pp_exec_window win;
    pp_model *m = run_queue(1, &win, &log);
    EXPECT_EQ_I64(log.calls, BATCHES);
    EXPECT_EQ_I64(win.count, BATCHES);
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_EXEC, NULL, -2), BATCHES);
    int64_t last_end[REQUESTS] = {0};
    for (int b = 0; b < BATCHES; b++) {
        EXPECT_EQ_I64(log.seen[b], 1);
        EXPECT_EQ_U64(count_spans(m, PP_ROLE_EXEC, "Embed", b), 1);
        pp_event e = event_at(m, find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, "Embed", b, 0));
        const pp_track_info *t = pp_model_track(m, e.track);
        EXPECT_EQ_I64(t->kind, PP_TRACK_KIND_DEVICE);
        EXPECT_STR(pp_model_string(m, t->device), "NPU");
        EXPECT(t->stream >= 0 && t->stream < REQUESTS);
        EXPECT(t->flags & PP_TRACK_SIMULATED);
        EXPECT(e.hw_ns > 0 && e.hw_ns <= (uint64_t)e.dur_ns);
        EXPECT(e.xfer_ns <= e.hw_ns);
        EXPECT(e.ts_ns >= win.start_ns && e.ts_ns + e.dur_ns <= win.end_ns);
        /* Batches are started in order, so a slot's next exec starts after
         * its previous one ended: one row never holds two at once. */
        EXPECT(e.ts_ns >= last_end[t->stream]);
        last_end[t->stream] = e.ts_ns + e.dur_ns;
    }
    pp_model_free(m);
}

static void test_level_zero_records_walls_without_hardware_times(void) {
    done_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pp_exec_window win;
    pp_model *m = run_queue(0, &win, &log);
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_EXEC, "Embed", -2), BATCHES);
    for (int b = 0; b < BATCHES; b++) {
        pp_event e = event_at(m, find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, "Embed", b, 0));
        EXPECT_EQ_U64(e.hw_ns, 0);
        EXPECT(e.dur_ns > 0);
    }
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_OP, NULL, -2), 0);
    pp_model_free(m);
}

static void test_level_two_adds_op_spans_inside_the_exec(void) {
    done_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pp_exec_window win;
    pp_model *m = run_queue(2, &win, &log);
    EXPECT(count_spans(m, PP_ROLE_OP, "Embed", -2) >= BATCHES);
    pp_event exec = event_at(m, find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, "Embed", 0, 0));
    pp_event op = event_at(m, find_event(m, PP_EV_SPAN, PP_ROLE_OP, "Embed", 0, 0));
    EXPECT_EQ_U64(op.track, exec.track);
    EXPECT(op.ts_ns >= exec.ts_ns && op.ts_ns + op.dur_ns <= exec.ts_ns + exec.dur_ns);
    pp_model_free(m);
}

/* With recording off the executor runs the same and records nothing. */
static void test_null_session_runs_without_recording(void) {
    pp_device *cpu = NULL;
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    pp_executor_config cfg = {.device = cpu, .requests = 1};
    pp_workload_init(&cfg.workload);
    pp_executor *ex = NULL;
    EXPECT_EQ_I64(pp_executor_create(NULL, &cfg, &ex, NULL), PP_OK);
    EXPECT_EQ_I64(pp_executor_start(ex, pp_executor_acquire(ex), 0, NULL, NULL), PP_OK);
    pp_exec_window win;
    EXPECT_EQ_I64(pp_executor_wait_all(ex, &win, NULL), PP_OK);
    EXPECT_EQ_I64(win.count, 1);
    EXPECT(win.end_ns > win.start_ns);
    pp_executor_free(ex);
    pp_device_close(cpu);
}

static void test_bad_request_count_is_refused(void) {
    pp_device *cpu = NULL;
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    pp_executor_config cfg = {.device = cpu, .requests = 0};
    pp_workload_init(&cfg.workload);
    pp_executor *ex = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_executor_create(NULL, &cfg, &ex, &err), PP_EINVAL);
    EXPECT(ex == NULL);
    EXPECT_CONTAINS(err.msg, "request");
    pp_device_close(cpu);
}

int main(void) {
    RUN(test_each_request_is_one_exec_span_on_its_slot_row);
    RUN(test_level_zero_records_walls_without_hardware_times);
    RUN(test_level_two_adds_op_spans_inside_the_exec);
    RUN(test_null_session_runs_without_recording);
    RUN(test_bad_request_count_is_refused);
    return pp_test_finish();
}
