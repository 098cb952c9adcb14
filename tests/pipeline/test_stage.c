/* Stages: a data-parallel stage partitions and merges on the host thread's
 * track, runs one exec per request slot on the devices' rows, and its stage
 * span says partition + slowest device + merge; the split changes who
 * computes which rows, never the result. */
#include <math.h>

#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

#define NODES 64
#define DIM 16
#define BATCHES 3

static pp_session *started_session(void) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    return s;
}

static pp_stage_config matmul_stage(const char *name) {
    pp_stage_config cfg = {.name = name, .requests = 1};
    pp_workload_init(&cfg.workload);
    cfg.workload.nodes = NODES;
    cfg.workload.in_dim = cfg.workload.out_dim = DIM;
    return cfg;
}

static void fill(float *in) {
    for (int i = 0; i < NODES * DIM; i++)
        in[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
}

/* Runs `cfg` on BATCHES batches of the same input into `out`. */
static void run_stage(pp_session *s, const pp_stage_config *cfg, float *out,
                      pp_stage_timing *timing) {
    float in[NODES * DIM];
    fill(in);
    pp_stage *st = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_stage_create(s, cfg, &st, &err), PP_OK);
    for (int b = 0; b < BATCHES && st; b++)
        EXPECT_EQ_I64(pp_stage_run(st, b, in, out, &timing[b], &err), PP_OK);
    pp_stage_free(st);
}

static void test_data_parallel_spans_and_fields(void) {
    pp_device *cpu = NULL, *npu = NULL;
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    EXPECT_EQ_I64(pp_device_open("sim:NPU", NULL, &npu, NULL), PP_OK);
    pp_stage_config cfg = matmul_stage("Embed");
    cfg.ndevices = 2;
    cfg.devices[0] = cpu;
    cfg.devices[1] = npu;
    pp_session *s = started_session();
    float out[NODES * DIM];
    pp_stage_timing t[BATCHES];
    run_stage(s, &cfg, out, t);
    pp_model *m = recorded_model(s);
    for (int b = 0; b < BATCHES; b++) {
        EXPECT_EQ_U64(count_spans(m, PP_ROLE_PARTITION, "Embed", b), 1);
        EXPECT_EQ_U64(count_spans(m, PP_ROLE_MERGE, "Embed", b), 1);
        EXPECT_EQ_U64(count_spans(m, PP_ROLE_STAGE, "Embed", b), 1);
        EXPECT_EQ_U64(count_spans(m, PP_ROLE_EXEC, "Embed", b), 2); /* one per device */
        long part_i = find_event(m, PP_EV_SPAN, PP_ROLE_PARTITION, "Embed", b, 0);
        long merge_i = find_event(m, PP_EV_SPAN, PP_ROLE_MERGE, "Embed", b, 0);
        long stage_i = find_event(m, PP_EV_SPAN, PP_ROLE_STAGE, "Embed", b, 0);
        pp_event part = event_at(m, part_i), merge = event_at(m, merge_i);
        pp_event stage = event_at(m, stage_i);
        /* Host work is on the host thread's track, never on a device row. */
        EXPECT_EQ_I64(pp_model_track(m, part.track)->kind, PP_TRACK_KIND_THREAD);
        EXPECT_EQ_U64(merge.track, part.track);
        EXPECT_EQ_U64(stage.track, part.track);
        int64_t max_device = 0;
        for (int d = 0; d < 2; d++) {
            pp_event e = event_at(m, find_event(m, PP_EV_SPAN, PP_ROLE_EXEC, "Embed", b, d));
            EXPECT_EQ_I64(pp_model_track(m, e.track)->kind, PP_TRACK_KIND_DEVICE);
            EXPECT(e.ts_ns >= part.ts_ns && e.ts_ns + e.dur_ns <= merge.ts_ns);
            if (e.dur_ns > max_device)
                max_device = e.dur_ns;
        }
        int64_t p_ns = annotation_int(m, stage_i, "partition_ns");
        int64_t d_ns = annotation_int(m, stage_i, "max_device_ns");
        int64_t m_ns = annotation_int(m, stage_i, "merge_ns");
        EXPECT_EQ_I64(p_ns, part.dur_ns);
        EXPECT_EQ_I64(m_ns, merge.dur_ns);
        EXPECT_EQ_I64(d_ns, max_device);
        EXPECT_EQ_I64(annotation_int(m, stage_i, "total_ns"), p_ns + d_ns + m_ns);
        EXPECT_EQ_I64(t[b].total_ns, p_ns + d_ns + m_ns);
        EXPECT_EQ_I64(stage.ts_ns, part.ts_ns);
        EXPECT_EQ_I64(stage.ts_ns + stage.dur_ns, merge.ts_ns + merge.dur_ns);
    }
    pp_model_free(m);
    pp_session_close(s);
    pp_device_close(npu);
    pp_device_close(cpu);
}

/* A matmul computes each row from that row alone, so any split over any
 * number of slots must give the single-request result, up to rounding
 * (OpenBLAS may sum in another order for another number of rows); a row in
 * the wrong place would be off by the values' own size. */
static void test_split_does_not_change_the_result(void) {
    pp_device *cpu = NULL;
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    pp_stage_config one = matmul_stage("One");
    one.ndevices = 1;
    one.devices[0] = cpu;
    pp_stage_config split = matmul_stage("Split");
    split.ndevices = 2;
    split.devices[0] = split.devices[1] = cpu;
    split.split[0] = 1; /* 21 rows: requests of 11 and 10 (the last padded) */
    split.split[1] = 2; /* 43 rows: requests of 22 and 21 */
    split.requests = 2;
    float want[NODES * DIM], got[NODES * DIM];
    pp_stage_timing t[BATCHES];
    run_stage(NULL, &one, want, t);
    EXPECT_EQ_I64(t[0].partition_ns, 0); /* one slot: no partition */
    EXPECT_EQ_I64(t[0].total_ns, t[0].end_ns - t[0].start_ns);
    run_stage(NULL, &split, got, t);
    int same = 1;
    for (int i = 0; i < NODES * DIM; i++)
        same &= fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i]));
    EXPECT(same);
    pp_device_close(cpu);
}

static int negate(void *ctx, int64_t batch, const float *in, float *out, int64_t nodes,
                  int64_t in_dim, int64_t out_dim) {
    (void)ctx;
    (void)batch;
    for (int64_t i = 0; i < nodes * (in_dim < out_dim ? in_dim : out_dim); i++)
        out[i] = -in[i];
    return PP_OK;
}

static int refuse(void *ctx, int64_t batch, const float *in, float *out, int64_t nodes,
                  int64_t in_dim, int64_t out_dim) {
    (void)ctx, (void)batch, (void)in, (void)out, (void)nodes, (void)in_dim, (void)out_dim;
    return PP_EINVAL;
}

static void test_host_stage_is_one_stage_span(void) {
    pp_stage_config cfg = matmul_stage("Host");
    cfg.host = negate;
    pp_session *s = started_session();
    float in[NODES * DIM], out[NODES * DIM];
    fill(in);
    pp_stage_timing t[BATCHES];
    run_stage(s, &cfg, out, t);
    EXPECT_EQ_I64(out[5], -in[5]);
    pp_model *m = recorded_model(s);
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_STAGE, "Host", -2), BATCHES);
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_EXEC, NULL, -2), 0);
    EXPECT_EQ_U64(count_spans(m, PP_ROLE_PARTITION, NULL, -2), 0);
    pp_model_free(m);
    pp_session_close(s);

    cfg.host = refuse;
    pp_stage *st = NULL;
    EXPECT_EQ_I64(pp_stage_create(NULL, &cfg, &st, NULL), PP_OK);
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_stage_run(st, 4, in, out, NULL, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "Host: the host function failed on batch 4: invalid argument");
    pp_stage_free(st);
}

static void test_bad_stage_configs_say_why(void) {
    pp_device *cpu = NULL;
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    pp_stage_config cfg = matmul_stage("S");
    pp_stage *st = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_stage_create(NULL, &cfg, &st, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "S: a stage without devices needs a host function");
    cfg.ndevices = 2;
    cfg.devices[0] = cfg.devices[1] = cpu;
    cfg.split[0] = 1;
    cfg.split[1] = NODES * 2; /* device 0 gets 0 rows */
    EXPECT_EQ_I64(pp_stage_create(NULL, &cfg, &st, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "S: device 0 gets 0 rows of 64, fewer than its 1 requests");
    cfg.split[1] = -1;
    EXPECT_EQ_I64(pp_stage_create(NULL, &cfg, &st, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "S: split[1] is negative");
    cfg.split[1] = 1;
    cfg.requests = 17;
    EXPECT_EQ_I64(pp_stage_create(NULL, &cfg, &st, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "S: 17 requests per device (expected 1..16)");
    EXPECT(st == NULL);
    pp_device_close(cpu);
}

int main(void) {
    RUN(test_data_parallel_spans_and_fields);
    RUN(test_split_does_not_change_the_result);
    RUN(test_host_stage_is_one_stage_span);
    RUN(test_bad_stage_configs_say_why);
    return pp_test_finish();
}
