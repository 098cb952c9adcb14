/* Executors record the bytes of their request's tensors on each exec
 * (bytes_in, bytes_out: docs/analysis.md, bandwidth), and the analyzer's
 * bandwidth of a real run is those bytes over the busy time of the recorded
 * exec intervals, both computed here from the workload's sizes and the
 * recorded spans. */
#include <stdlib.h>

#include "pipeprof/analyze.h"
#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

#define BATCHES 4
#define NODES 128
#define IN_DIM 32
#define OUT_DIM 16

static pp_model *run_cpu(int level) {
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    scfg.level = level;
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&scfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_device *cpu = NULL;
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    pp_executor_config cfg = {.device = cpu, .requests = 1, .stage = "Embed"};
    pp_workload_init(&cfg.workload);
    cfg.workload.nodes = NODES;
    cfg.workload.in_dim = IN_DIM;
    cfg.workload.out_dim = OUT_DIM;
    pp_executor *ex = NULL;
    EXPECT_EQ_I64(pp_executor_create(s, &cfg, &ex, NULL), PP_OK);
    for (int b = 0; b < BATCHES; b++) {
        pp_request *r = pp_executor_acquire(ex);
        EXPECT_EQ_I64(pp_executor_start(ex, r, b, NULL, NULL), PP_OK);
    }
    pp_exec_window win;
    EXPECT_EQ_I64(pp_executor_wait_all(ex, &win, NULL), PP_OK);
    pp_executor_free(ex);
    pp_device_close(cpu);
    pp_model *m = recorded_model(s);
    pp_session_close(s);
    return m;
}

/* FP32 tensors: NODES x IN_DIM in, NODES x OUT_DIM out. */
static void test_each_exec_carries_its_tensor_bytes(void) {
    pp_model *m = run_cpu(1);
    for (int b = 0; b < BATCHES; b++) {
        long i = find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, "Embed", b, 0);
        EXPECT(i >= 0);
        EXPECT_EQ_I64(annotation_int(m, i, "bytes_in"), NODES * IN_DIM * 4);
        EXPECT_EQ_I64(annotation_int(m, i, "bytes_out"), NODES * OUT_DIM * 4);
    }
    pp_model_free(m);
}

/* Level 0 records wall times only: no bytes either. */
static void test_level_zero_records_no_bytes(void) {
    pp_model *m = run_cpu(0);
    long i = find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, "Embed", 0, 0);
    EXPECT(i >= 0);
    EXPECT_EQ_I64(annotation_int(m, i, "bytes_in"), -1);
    pp_model_free(m);
}

/* One request slot: execs run one after another on one row, so busy time
 * is the sum of their walls (they may touch, never overlap). */
static void test_report_bandwidth_is_bytes_over_busy_time(void) {
    pp_model *m = run_cpu(1);
    int64_t busy = 0;
    for (int b = 0; b < BATCHES; b++)
        busy += event_at(m, find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, "Embed", b, 0)).dur_ns;
    pp_report *r = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_report_build(m, NULL, &r, &err), PP_OK);
    size_t n;
    const pp_device_stats *d = pp_report_devices(r, &n);
    EXPECT_EQ_U64(n, 1);
    const pp_bandwidth *bw = &d[0].bandwidth;
    EXPECT_EQ_U64(bw->execs, BATCHES);
    EXPECT_EQ_U64(bw->read_bytes, (uint64_t)BATCHES * NODES * IN_DIM * 4);
    EXPECT_EQ_U64(bw->write_bytes, (uint64_t)BATCHES * NODES * OUT_DIM * 4);
    EXPECT_EQ_I64(bw->busy_ns, busy);
    EXPECT_NEAR(bw->read_gbps, (double)BATCHES * NODES * IN_DIM * 4 / (double)busy, 1e-9);
    EXPECT_NEAR(bw->write_gbps, (double)BATCHES * NODES * OUT_DIM * 4 / (double)busy, 1e-9);
    const pp_stage_stats *st = pp_report_stages(r, &n);
    EXPECT_EQ_I64(st[0].bandwidth.busy_ns, busy);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_each_exec_carries_its_tensor_bytes);
    RUN(test_level_zero_records_no_bytes);
    RUN(test_report_bandwidth_is_bytes_over_busy_time);
    return pp_test_finish();
}
