/* The split of an exec's wall that executors record from the sim and cpu
 * backends' device times (submit_ns, queue_ns, completion_ns annotations;
 * docs/backends.md, what each part means): on a simulated NPU the submit
 * part holds the modeled launch and a request waiting for the device's one
 * unit shows it as queue; on every backend the recorded parts and hw_ns
 * fit the wall, so nothing is left unattributed. */
#include "pipeprof/analyze.h"
#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

/* The NPU's built-in launch overhead (include/pipeprof/device.h defaults). */
#define NPU_LAUNCH_NS 250000

static pp_model *run_two_collecting(const char *spec, unsigned collect) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.collect = collect;
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_device *d = NULL;
    EXPECT_EQ_I64(pp_device_open(spec, NULL, &d, NULL), PP_OK);
    pp_executor_config ec = {.device = d, .requests = 2, .stage = "S"};
    pp_workload_init(&ec.workload);
    pp_executor *ex = NULL;
    EXPECT_EQ_I64(pp_executor_create(s, &ec, &ex, NULL), PP_OK);
    for (int b = 0; b < 2; b++)
        EXPECT_EQ_I64(pp_executor_start(ex, pp_executor_acquire(ex), b, NULL, NULL), PP_OK);
    EXPECT_EQ_I64(pp_executor_wait_all(ex, NULL, NULL), PP_OK);
    pp_executor_free(ex);
    pp_device_close(d);
    pp_model *m = recorded_model(s);
    pp_session_close(s);
    return m;
}

static pp_model *run_two_at_once(const char *spec) {
    return run_two_collecting(spec, 0);
}

static const pp_exec_parts *parts(pp_report **r, const pp_model *m, size_t *n) {
    EXPECT_EQ_I64(pp_report_build(m, NULL, r, NULL), PP_OK);
    return *r ? pp_report_exec_parts(*r, n) : NULL;
}

/* Two requests started together on the NPU (one unit): both launch at
 * once, and the one queued second starts on the device when the first
 * ends there (or when it is queued, if that is later), as the model's FIFO
 * says; each time is rebuilt from the exec's start and its parts. */
static void test_sim_launch_is_submit_and_a_busy_unit_is_queue(void) {
    pp_model *m = run_two_at_once("sim:NPU");
    pp_report *r = NULL;
    size_t n = 0;
    const pp_exec_parts *x = parts(&r, m, &n);
    EXPECT_EQ_U64(n, 2);
    pp_event_columns c;
    pp_model_columns(m, &c);
    int64_t queued[2] = {0}, start[2] = {0}, end[2] = {0};
    for (size_t i = 0; i < n && i < 2; i++) {
        const pp_wall_parts *p = &x[i].parts;
        EXPECT(p->submit_ns >= NPU_LAUNCH_NS);
        EXPECT_EQ_I64(p->unattributed_ns, 0);
        EXPECT_EQ_I64(p->submit_ns + p->queue_ns + p->device_ns + p->completion_ns, p->wall_ns);
        queued[i] = c.ts_ns[x[i].event] + p->submit_ns;
        start[i] = queued[i] + p->queue_ns;
        end[i] = start[i] + p->device_ns;
    }
    int first = queued[0] <= queued[1] ? 0 : 1, second = 1 - first;
    int64_t want = end[first] > queued[second] ? end[first] : queued[second];
    EXPECT_NEAR(start[second], want, 2); /* model times are rounded to ns once each */
    EXPECT_NEAR(start[first], queued[first], 2);
    pp_report_free(r);
    pp_model_free(m);
}

static void test_cpu_handoff_parts_fit_the_wall(void) {
    pp_model *m = run_two_at_once("cpu");
    pp_report *r = NULL;
    size_t n = 0;
    const pp_exec_parts *x = parts(&r, m, &n);
    EXPECT_EQ_U64(n, 2);
    for (size_t i = 0; i < n; i++) {
        const pp_wall_parts *p = &x[i].parts;
        EXPECT(p->device_ns > 0);
        EXPECT_EQ_I64(p->unattributed_ns, 0);
        EXPECT_EQ_I64(p->submit_ns + p->queue_ns + p->device_ns + p->completion_ns, p->wall_ns);
    }
    size_t nd;
    const pp_decomp_stats *d = pp_report_decomposition(r, &nd);
    EXPECT_EQ_U64(nd, 1);
    EXPECT_EQ_U64(d[0].split, 2);
    pp_report_free(r);
    pp_model_free(m);
}

/* The split is hardware information: a session collecting spans but not
 * hardware times records none (nor any hw_ns), and every exec reads as
 * unattributed. */
static void test_no_split_without_hardware_times(void) {
    pp_model *m = run_two_collecting("sim:NPU", PP_COLLECT_SPANS);
    EXPECT_EQ_I64(pp_model_find_string(m, "submit_ns"), 0);
    pp_report *r = NULL;
    size_t n = 0;
    const pp_exec_parts *x = parts(&r, m, &n);
    EXPECT_EQ_U64(n, 2);
    for (size_t i = 0; i < n; i++)
        EXPECT_EQ_I64(x[i].parts.unattributed_ns, x[i].parts.wall_ns);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_sim_launch_is_submit_and_a_busy_unit_is_queue);
    RUN(test_cpu_handoff_parts_fit_the_wall);
    RUN(test_no_split_without_hardware_times);
    return pp_test_finish();
}
