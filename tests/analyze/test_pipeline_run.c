/* The analysis of a real pipeline run (src/pipeline): three stages streaming
 * on simulated devices, after two warm-up batches:
 *   Prep   one device, one request
 *   Embed  data parallel over two devices (partition, execs, merge)
 *   Cls    one device, two requests (two execs per batch)
 * The runtime keeps its own accounting beside the spans (the stage span's
 * partition_ns / max_device_ns / merge_ns / total_ns annotations, from the
 * same clock readings), so the report's figures can be checked against it
 * to the nanosecond. The simulated devices take 4 ms to launch, far longer
 * than anything else, so the run's shape does not depend on the machine. */
#include "pipeprof/pipeline.h"

#include "../pipeline/recorded.h"
#include "builder.h"

#define WARMUP 2
#define BATCHES 6

static const pp_sim_device_params slow[4] = {
    {.name = "S0", .launch_ns = 4000000, .gflops = 100, .units = 1},
    {.name = "S1", .launch_ns = 4000000, .gflops = 100, .units = 1},
    {.name = "S2", .launch_ns = 4000000, .gflops = 100, .units = 1},
    {.name = "S3", .launch_ns = 4000000, .gflops = 100, .units = 2},
};

static pp_model *run_pipeline(void) {
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.nodes = 64, cfg.edges = 128, cfg.features = 8;
    cfg.batches = BATCHES, cfg.warmup = WARMUP;
    cfg.devices.nsim = 4, cfg.devices.sim = slow;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pipeline_create(&cfg, &p, &err), PP_OK);
    pp_stage_spec specs[3] = {
        {.name = "Prep", .ndevices = 1, .devices = {"sim:S0"}, .kind = PP_WORKLOAD_MATMUL,
         .out_dim = 8},
        {.name = "Embed", .ndevices = 2, .devices = {"sim:S1", "sim:S2"},
         .kind = PP_WORKLOAD_MATMUL, .out_dim = 8},
        {.name = "Cls", .ndevices = 1, .devices = {"sim:S3"}, .requests = 2,
         .kind = PP_WORKLOAD_MATMUL, .out_dim = 8},
    };
    for (int k = 0; k < 3; k++)
        EXPECT_EQ_I64(pp_pipeline_add_stage(p, &specs[k], &err), PP_OK);
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&scfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_run_options opt = {.warmup = -1};
    EXPECT_EQ_I64(pp_pipeline_run(p, s, &opt, NULL, &err), PP_OK);
    pp_model *m = recorded_model(s);
    pp_session_close(s);
    pp_pipeline_free(p);
    return m;
}

static const pp_stage_time *time_of(const pp_report *r, size_t stage, int64_t batch) {
    size_t n;
    const pp_stage_time *t = pp_report_stage_times(r, &n);
    for (size_t i = 0; i < n; i++)
        if (t[i].stage == stage && t[i].batch == batch)
            return &t[i];
    pp_test_fail(__FILE__, __LINE__, "no time for stage %zu batch %lld", stage, (long long)batch);
    exit(1);
}

/* First start .. last end of the execs of (stage, batch). */
static int64_t exec_hull(const pp_model *m, const char *stage, int64_t batch) {
    int64_t s = INT64_MAX, e = INT64_MIN;
    long i;
    for (int k = 0; (i = find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, stage, batch, k)) >= 0; k++) {
        pp_event x = event_at(m, i);
        s = x.ts_ns < s ? x.ts_ns : s;
        e = x.ts_ns + x.dur_ns > e ? x.ts_ns + x.dur_ns : e;
    }
    return e - s;
}

static void test_report_of_a_pipeline_run(void) {
    pp_model *m = run_pipeline();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.exclude_region = "warm up";
    pp_report *r = b_report(m, &o);

    /* W starts where the warm-up region ends; the measured batches lie in it */
    long region = find_event(m, PP_EV_REGION, 0, NULL, -2, 0);
    pp_event warm = event_at(m, region);
    EXPECT_EQ_I64(pp_report_window(r)->start_ns, warm.ts_ns + warm.dur_ns);
    const pp_cycle_stats *c = pp_report_cycles(r);
    EXPECT_EQ_U64(c->batches, BATCHES);
    EXPECT_EQ_U64(c->complete, BATCHES);

    size_t n;
    const pp_stage_stats *st = pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 3);
    EXPECT_STR(st[0].name, "Prep");
    EXPECT_STR(st[1].name, "Embed");
    EXPECT_STR(st[2].name, "Cls");
    EXPECT(!st[0].data_parallel && st[1].data_parallel && !st[2].data_parallel);

    const pp_batch_stats *b = pp_report_batches(r, &n);
    for (int64_t batch = WARMUP; batch < WARMUP + BATCHES; batch++) {
        /* Embed: partition + max device wall + merge, as the runtime summed
         * it; the measured span is the runtime's stage span */
        long span = find_event(m, PP_EV_SPAN, PP_ROLE_STAGE, "Embed", batch, 0);
        const pp_stage_time *t = time_of(r, 1, batch);
        EXPECT_EQ_I64(t->time_ns, annotation_int(m, span, "total_ns"));
        EXPECT_EQ_I64(t->measured_ns, event_at(m, span).dur_ns);
        /* Prep and Cls: first exec start to last exec end; for Cls that is
         * the runtime's device window */
        EXPECT_EQ_I64(time_of(r, 0, batch)->time_ns, exec_hull(m, "Prep", batch));
        long cls = find_event(m, PP_EV_SPAN, PP_ROLE_STAGE, "Cls", batch, 0);
        EXPECT_EQ_I64(time_of(r, 2, batch)->time_ns, annotation_int(m, cls, "max_device_ns"));
        /* the cycle is the slowest stage of the batch */
        const pp_batch_stats *row = &b[batch - WARMUP];
        EXPECT_EQ_I64(row->batch, batch);
        int64_t want = 0;
        for (size_t s = 0; s < 3; s++)
            want = time_of(r, s, batch)->time_ns > want ? time_of(r, s, batch)->time_ns : want;
        EXPECT_EQ_I64(row->cycle_ns, want);
        EXPECT_EQ_I64(time_of(r, row->bottleneck, batch)->time_ns, want);
    }

    /* one request slot: S0's execs never overlap, so busy is their sum */
    int64_t sum = 0;
    long i;
    for (int k = 0; (i = find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, "Prep", -2, k)) >= 0; k++) {
        pp_event x = event_at(m, i);
        if (x.batch >= WARMUP)
            sum += x.dur_ns;
    }
    EXPECT_EQ_I64(b_find_device(r, "S0")->busy_ns, sum);
    EXPECT(b_find_device(r, "S0")->simulated);
    EXPECT_EQ_U64(b_find_device(r, "S3")->tracks, 2);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_report_of_a_pipeline_run);
    return pp_test_finish();
}
