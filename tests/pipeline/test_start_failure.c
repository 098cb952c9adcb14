/* A request that fails to start inside a data-parallel stage: the stage
 * returns the error after waiting for the requests it did start, frees every
 * request slot (the next batch runs, nothing blocks), and a streaming
 * pipeline stops with the error instead of hanging. Run under ASan for the
 * "nothing leaks" half; alarm() turns a hang into a failure.
 *
 * The fault comes from a test backend, "flaky" (one device, FLAKY): the cpu
 * backend, except that the start numbered `fail_at` (counted over all its
 * requests) fails. */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "device/backend.h"
#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

#define NODES 96
#define DIM 16

static atomic_int starts;       /* starts seen by the flaky backend */
static atomic_int fail_at = -1; /* which start fails; -1: none */

static int flaky_start(pp_request *r) {
    if (atomic_fetch_add(&starts, 1) == atomic_load(&fail_at))
        return PP_EIO;
    return pp_backend_cpu.start(r);
}

static int flaky_check(const char *name, const pp_device_options *opt, pp_error *err) {
    (void)opt;
    return strcmp(name, "FLAKY") == 0
               ? PP_OK
               : pp_set_error(err, PP_ENOTFOUND, "flaky: no device \"%s\" (have: FLAKY)", name);
}

static pp_backend flaky;

static void add_flaky_backend(void) {
    flaky = pp_backend_cpu;
    flaky.name = "flaky";
    flaky.default_name = "FLAKY";
    flaky.check = flaky_check;
    flaky.start = flaky_start;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_backend_add(&flaky, &err), PP_OK);
    EXPECT_EQ_I64(pp_backend_add(&flaky, &err), PP_EINVAL); /* a name is taken once */
    EXPECT_CONTAINS(err.msg, "flaky");
}

static void fail_start(int n) {
    atomic_store(&starts, 0);
    atomic_store(&fail_at, n);
}

/* cpu (2 requests) -> flaky (2) -> sim:NPU (2): the first flaky start fails
 * after both cpu requests were started; the second flaky request and the
 * NPU's were acquired and filled but never started. */
static void test_stage_returns_the_error_and_frees_every_slot(void) {
    pp_device *cpu = NULL, *bad = NULL, *npu = NULL;
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    EXPECT_EQ_I64(pp_device_open("flaky", NULL, &bad, NULL), PP_OK);
    EXPECT_EQ_I64(pp_device_open("sim:NPU", NULL, &npu, NULL), PP_OK);
    pp_stage_config cfg = {.name = "Embed", .ndevices = 3, .devices = {cpu, bad, npu},
                           .requests = 2};
    pp_workload_init(&cfg.workload);
    cfg.workload.nodes = NODES;
    cfg.workload.in_dim = cfg.workload.out_dim = DIM;
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&scfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_stage *st = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_stage_create(s, &cfg, &st, &err), PP_OK);
    if (!st)
        return;

    static float in[NODES * DIM], out[NODES * DIM];
    for (int i = 0; i < NODES * DIM; i++)
        in[i] = (float)(i % 11) - 5.0f;
    fail_start(0);
    EXPECT_EQ_I64(pp_stage_run(st, 0, in, out, NULL, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "Embed");
    EXPECT_CONTAINS(err.msg, "cannot start request 0 on FLAKY");
    EXPECT_CONTAINS(err.msg, "batch 0");

    /* Every slot is free: the next batches acquire all six and finish. */
    fail_start(-1);
    for (int b = 1; b <= 2; b++)
        EXPECT_EQ_I64(pp_stage_run(st, b, in, out, NULL, &err), PP_OK);
    pp_stage_free(st);

    pp_model *m = recorded_model(s);
    /* The failed batch: the two cpu execs that started ran to the end and
     * were recorded; nothing else, and no stage span. */
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_EXEC, "Embed", 0), 2);
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_STAGE, "Embed", 0), 0);
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_EXEC, "Embed", 1), 6);
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_STAGE, "Embed", 2), 1);
    pp_model_free(m);
    pp_session_close(s);
    pp_device_close(npu);
    pp_device_close(bad);
    pp_device_close(cpu);
}

/* A streaming pipeline whose data-parallel stage fails on its fifth start:
 * the run returns the stage's error and every thread ends. */
static void test_pipeline_stops_with_the_error(void) {
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.nodes = NODES;
    cfg.edges = 4 * NODES;
    cfg.features = DIM;
    cfg.batches = 8;
    cfg.warmup = 0;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pipeline_create(&cfg, &p, &err), PP_OK);
    const pp_stage_spec stages[] = {
        {.name = "Prep", .ndevices = 1, .devices = {"cpu"}, .kind = PP_WORKLOAD_SAGE,
         .out_dim = DIM},
        {.name = "Embed", .ndevices = 2, .devices = {"sim:NPU", "flaky"}, .requests = 2,
         .kind = PP_WORKLOAD_MATMUL, .out_dim = DIM},
        {.name = "Head", .ndevices = 1, .devices = {"sim:GPU"}, .kind = PP_WORKLOAD_MATMUL,
         .out_dim = 4},
    };
    for (size_t i = 0; p && i < sizeof stages / sizeof stages[0]; i++)
        EXPECT_EQ_I64(pp_pipeline_add_stage(p, &stages[i], &err), PP_OK);
    if (!p)
        return;
    pp_run_options opt = {.warmup = -1};
    pp_pipeline_result res;
    fail_start(4); /* batch 2's first flaky request, after its NPU requests started */
    EXPECT_EQ_I64(pp_pipeline_run(p, NULL, &opt, &res, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "Embed");
    EXPECT_CONTAINS(err.msg, "batch 2");
    fail_start(-1);
    EXPECT_EQ_I64(pp_pipeline_run(p, NULL, &opt, &res, &err), PP_OK);
    EXPECT_EQ_I64(res.batches, 8);
    pp_pipeline_free(p);
}

int main(void) {
    alarm(60); /* a slot left reserved blocks the next acquire for ever */
    add_flaky_backend();
    RUN(test_stage_returns_the_error_and_frees_every_slot);
    RUN(test_pipeline_stops_with_the_error);
    return pp_test_finish();
}
