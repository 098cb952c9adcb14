/* Pipelines: streaming overlaps different batches across stages, serial
 * does not; flows link each batch through its stages; warm-up batches lie
 * inside a "warm up" region; descriptions are validated field by field.
 *
 * The stages run on simulated devices that take 4 ms to launch, far longer
 * than anything else a stage does, so the order of events is unambiguous
 * even under a sanitizer. */
#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

#define STAGES 3
#define BATCHES 4

static const pp_sim_device_params slow_devices[STAGES] = {
    {.name = "S0", .launch_ns = 4000000, .gflops = 100, .units = 1},
    {.name = "S1", .launch_ns = 4000000, .gflops = 100, .units = 1},
    {.name = "S2", .launch_ns = 4000000, .gflops = 100, .units = 1},
};
static const char *const stage_names[STAGES] = {"A", "B", "C"};

static pp_pipeline *slow_pipeline(int warmup) {
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.nodes = 64;
    cfg.edges = 128;
    cfg.features = 8;
    cfg.batches = BATCHES;
    cfg.warmup = warmup;
    cfg.devices.nsim = STAGES;
    cfg.devices.sim = slow_devices;
    pp_pipeline *p = NULL;
    EXPECT_EQ_I64(pp_pipeline_create(&cfg, &p, NULL), PP_OK);
    const char *specs[STAGES] = {"sim:S0", "sim:S1", "sim:S2"};
    for (int k = 0; k < STAGES; k++) {
        pp_stage_spec spec = {.name = stage_names[k], .ndevices = 1, .devices = {specs[k]},
                              .kind = PP_WORKLOAD_MATMUL, .out_dim = 8};
        EXPECT_EQ_I64(pp_pipeline_add_stage(p, &spec, NULL), PP_OK);
    }
    return p;
}

static pp_model *run_recorded(pp_pipeline *p, int serial, pp_pipeline_result *res) {
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&scfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_run_options opt = {.serial = serial, .warmup = -1};
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pipeline_run(p, s, &opt, res, &err), PP_OK);
    pp_model *m = recorded_model(s);
    pp_session_close(s);
    return m;
}

static pp_event stage_span(const pp_model *m, int k, int64_t batch) {
    return event_at(m, find_event(m, PP_EV_SPAN, PP_ROLE_STAGE, stage_names[k], batch, 0));
}

/* Streaming: while stage k+1 still works on batch b, stage k has already
 * started batch b+1. */
static void test_streaming_overlaps_batches_across_stages(void) {
    pp_pipeline *p = slow_pipeline(0);
    pp_pipeline_result res;
    pp_model *m = run_recorded(p, 0, &res);
    EXPECT_EQ_I64(res.batches, BATCHES);
    for (int k = 0; k < STAGES; k++)
        EXPECT_EQ_U64(count_spans(m, PP_ROLE_STAGE, stage_names[k], -2), BATCHES);
    for (int b = 0; b + 1 < BATCHES; b++) {
        for (int k = 0; k + 1 < STAGES; k++) {
            pp_event next = stage_span(m, k, b + 1), down = stage_span(m, k + 1, b);
            EXPECT(next.ts_ns < down.ts_ns + down.dur_ns);
        }
    }
    /* One host thread per stage: three different host tracks. */
    EXPECT(stage_span(m, 0, 0).track != stage_span(m, 1, 0).track);
    EXPECT(stage_span(m, 1, 0).track != stage_span(m, 2, 0).track);
    pp_model_free(m);
    pp_pipeline_free(p);
}

/* Serial: batch b+1 enters the first stage only after batch b left the last. */
static void test_serial_runs_one_batch_at_a_time(void) {
    pp_pipeline *p = slow_pipeline(0);
    pp_pipeline_result res;
    pp_model *m = run_recorded(p, 1, &res);
    EXPECT_EQ_I64(res.batches, BATCHES);
    for (int b = 0; b + 1 < BATCHES; b++) {
        pp_event next = stage_span(m, 0, b + 1), last = stage_span(m, STAGES - 1, b);
        EXPECT(next.ts_ns >= last.ts_ns + last.dur_ns);
    }
    pp_model_free(m);
    pp_pipeline_free(p);
}

/* Each batch's flow (id batch + 1) begins on the first stage's track, steps
 * through the middle one and ends on the last, at its stage spans. */
static void test_flows_link_each_batch_through_its_stages(void) {
    pp_pipeline *p = slow_pipeline(0);
    pp_pipeline_result res;
    pp_model *m = run_recorded(p, 0, &res);
    static const int phases[STAGES] = {PP_FLOW_BEGIN, PP_FLOW_STEP, PP_FLOW_END};
    for (int b = 0; b < BATCHES; b++) {
        int found[STAGES] = {0};
        for (size_t i = 0; i < pp_model_event_count(m); i++) {
            pp_event e = event_at(m, (long)i);
            if (e.kind != PP_EV_FLOW || e.id != (uint64_t)b + 1)
                continue;
            for (int k = 0; k < STAGES; k++) {
                pp_event st = stage_span(m, k, b);
                if (e.track == st.track && e.ts_ns == st.ts_ns && e.phase == phases[k])
                    found[k]++;
            }
        }
        for (int k = 0; k < STAGES; k++)
            EXPECT_EQ_I64(found[k], 1);
    }
    pp_model_free(m);
    pp_pipeline_free(p);
}

static void test_warmup_batches_are_inside_the_warm_up_region(void) {
    pp_pipeline *p = slow_pipeline(2);
    pp_pipeline_result res;
    pp_model *m = run_recorded(p, 0, &res);
    EXPECT_EQ_I64(res.batches, BATCHES); /* warm-up is not counted */
    EXPECT(res.wall_ns > 0);
    pp_event region = event_at(m, find_event(m, PP_EV_REGION, 0, NULL, -2, 0));
    EXPECT_STR(pp_model_string(m, region.name), "warm up");
    for (int b = 0; b < 2 + BATCHES; b++) {
        pp_event e = stage_span(m, STAGES - 1, b);
        int inside = e.ts_ns >= region.ts_ns && e.ts_ns + e.dur_ns <= region.ts_ns + region.dur_ns;
        EXPECT_EQ_I64(inside, b < 2);
    }
    /* Warm-up and measured batches go through the same stage threads. */
    EXPECT_EQ_U64(stage_span(m, 1, 0).track, stage_span(m, 1, 2 + BATCHES - 1).track);
    pp_stage_summary sum;
    EXPECT_EQ_I64(pp_pipeline_stage_summary(p, 1, &sum), PP_OK);
    EXPECT_STR(sum.name, "B");
    EXPECT_EQ_I64(sum.batches, BATCHES);
    EXPECT_STR(sum.device_labels[0], "S1 (simulated)");
    EXPECT(sum.max_ns >= sum.mean_ns && sum.mean_ns >= 4000000);
    pp_model_free(m);
    pp_pipeline_free(p);
}

static void expect_stage_error(pp_stage_spec spec, const char *message) {
    pp_pipeline *p = slow_pipeline(0);
    pp_error err = {{0}};
    EXPECT(pp_pipeline_add_stage(p, &spec, &err) < 0);
    EXPECT_STR(err.msg, message);
    EXPECT_EQ_I64(pp_pipeline_stage_count(p), STAGES);
    pp_pipeline_free(p);
}

static void test_bad_stages_name_the_field(void) {
    pp_stage_spec ok = {.name = "D", .ndevices = 1, .devices = {"cpu"}, .out_dim = 8};
    pp_stage_spec s = ok;
    s.devices[0] = "opnvino";
    expect_stage_error(s, "stages[3].devices[0]: unknown backend \"opnvino\" (have: " PP_TEST_BACKENDS ")");
    s = ok;
    s.name = "B";
    expect_stage_error(s, "stages[3].name: \"B\" is also stages[1]");
    s = ok;
    s.ndevices = 0;
    expect_stage_error(s, "stages[3].devices: none given (name at least one)");
    s = ok;
    s.ndevices = 2;
    s.devices[1] = "sim:S0";
    s.split[0] = 1;
    expect_stage_error(s, "stages[3].split[1]: 0 (give every device a share, or none)");
    s = ok;
    s.requests = 17;
    expect_stage_error(s, "stages[3].requests: 17 (expected 1..16)");
    s = ok;
    s.out_dim = 0;
    expect_stage_error(s, "stages[3].out_dim: 0 (expected 1..16384)");
}

static void test_bad_configs_name_the_field(void) {
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.queue_depth = 0;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pipeline_create(&cfg, &p, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "queue_depth: 0 (expected 1..64)");
    pp_pipeline_config_init(&cfg);
    cfg.batches = 0;
    EXPECT_EQ_I64(pp_pipeline_create(&cfg, &p, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "batches: 0 (expected at least 1)");
    EXPECT(p == NULL);
    pp_pipeline_config_init(&cfg);
    EXPECT_EQ_I64(pp_pipeline_create(&cfg, &p, NULL), PP_OK);
    EXPECT_EQ_I64(pp_pipeline_run(p, NULL, NULL, NULL, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "stages: the pipeline has none");
    pp_pipeline_free(p);
}

int main(void) {
    RUN(test_streaming_overlaps_batches_across_stages);
    RUN(test_serial_runs_one_batch_at_a_time);
    RUN(test_flows_link_each_batch_through_its_stages);
    RUN(test_warmup_batches_are_inside_the_warm_up_region);
    RUN(test_bad_stages_name_the_field);
    RUN(test_bad_configs_name_the_field);
    return pp_test_finish();
}
