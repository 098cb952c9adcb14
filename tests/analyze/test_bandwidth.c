/* Bandwidth (docs/analysis.md): the bytes that execs inside W carry, per
 * device, track and stage, over the busy time of each (a union of
 * intervals, never a sum) and over the execs' transfer time; a foreign
 * copy's `bytes` counted by its direction. Expected rates are bytes / ns
 * (= GB/s with GB = 10^9) of the constructed intervals. */
#include <stdio.h>

#include "builder.h"

static void annotate(pp_model *m, size_t event, const char *key, int64_t v) {
    pp_annotation a = {.event = event, .key = b_str(m, key), .type = PP_VALUE_INT, .v.i = v};
    if (pp_model_add_annotation(m, &a) != PP_OK)
        abort();
}

/* An exec that read `in` and wrote `out` bytes (0: no annotation). */
static size_t bytes_exec(pp_model *m, uint32_t track, const char *stage, int64_t batch,
                         int64_t start, int64_t end, uint64_t xfer, int64_t in, int64_t out) {
    size_t i = b_exec(m, track, stage, batch, start, end, end - start, xfer);
    if (in)
        annotate(m, i, "bytes_in", in);
    if (out)
        annotate(m, i, "bytes_out", out);
    return i;
}

static const pp_track_stats *find_track(const pp_report *r, uint32_t track) {
    size_t n;
    const pp_track_stats *t = pp_report_tracks(r, &n);
    for (size_t i = 0; i < n; i++)
        if (t[i].track == track)
            return &t[i];
    pp_test_fail(__FILE__, __LINE__, "no track %u in the report", track);
    exit(1);
}

/* Two streams of one GPU overlap for 500 ns: the device's rate is over the
 * union (2000 ns), each stream's over its own busy time, and the stage's
 * over the union of its execs. */
static void test_rates_are_over_the_union_of_busy_intervals(void) {
    pp_model *m = b_model();
    uint32_t s0 = b_device(m, "GPU", 0, 0), s1 = b_device(m, "GPU", 1, 0);
    uint32_t npu = b_device(m, "NPU", 0, 0);
    bytes_exec(m, s0, "Embed", 0, 0, 1000, 200, 4000, 1000);
    bytes_exec(m, s1, "Embed", 1, 500, 2000, 300, 2000, 0);
    bytes_exec(m, npu, "Head", 0, 3000, 4000, 0, 1000, 3000);
    pp_report *r = b_report(m, NULL);

    const pp_bandwidth *gpu = &b_find_device(r, "GPU")->bandwidth;
    EXPECT_EQ_U64(gpu->execs, 2);
    EXPECT_EQ_U64(gpu->read_bytes, 4000 + 2000);
    EXPECT_EQ_U64(gpu->write_bytes, 1000);
    EXPECT_EQ_I64(gpu->busy_ns, 2000);
    EXPECT_EQ_I64(gpu->xfer_ns, 200 + 300);
    EXPECT_NEAR(gpu->read_gbps, 6000.0 / 2000, 1e-12);
    EXPECT_NEAR(gpu->write_gbps, 1000.0 / 2000, 1e-12);
    EXPECT_NEAR(gpu->total_gbps, 7000.0 / 2000, 1e-12);
    EXPECT_NEAR(gpu->xfer_gbps, 7000.0 / 500, 1e-12);

    const pp_bandwidth *t0 = &find_track(r, s0)->bandwidth, *t1 = &find_track(r, s1)->bandwidth;
    EXPECT_EQ_I64(t0->busy_ns, 1000);
    EXPECT_NEAR(t0->total_gbps, 5000.0 / 1000, 1e-12);
    EXPECT_EQ_I64(t1->busy_ns, 1500);
    EXPECT_NEAR(t1->read_gbps, 2000.0 / 1500, 1e-12);
    EXPECT_NEAR(t1->write_gbps, 0, 0);

    const pp_bandwidth *embed = &b_find_stage(r, "Embed", NULL)->bandwidth;
    EXPECT_EQ_U64(embed->execs, 2);
    EXPECT_EQ_I64(embed->busy_ns, 2000);
    EXPECT_NEAR(embed->total_gbps, 7000.0 / 2000, 1e-12);
    const pp_bandwidth *head = &b_find_stage(r, "Head", NULL)->bandwidth;
    EXPECT_EQ_I64(head->busy_ns, 1000);
    EXPECT_NEAR(head->read_gbps, 1.0, 1e-12);
    EXPECT_NEAR(head->write_gbps, 3.0, 1e-12);
    EXPECT_NEAR(head->xfer_gbps, 0, 0); /* no transfer time recorded: no transfer rate */
    pp_report_free(r);
    pp_model_free(m);
}

/* A device whose execs carry no bytes has no bandwidth: its bytes are
 * unknown, and no renderer shows a row for it. */
static void test_execs_without_bytes_give_no_bandwidth(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0), npu = b_device(m, "NPU", 0, 0);
    bytes_exec(m, gpu, "A", 0, 0, 1000, 0, 100, 0);
    b_exec(m, npu, "B", 0, 1000, 2000, 1000, 0);
    pp_report *r = b_report(m, NULL);
    const pp_bandwidth *b = &b_find_device(r, "NPU")->bandwidth;
    EXPECT_EQ_U64(b->execs, 0);
    EXPECT_EQ_U64(b->read_bytes + b->write_bytes, 0);
    EXPECT_NEAR(b->total_gbps, 0, 0);
    EXPECT_EQ_U64(b_find_stage(r, "B", NULL)->bandwidth.execs, 0);
    pp_report_free(r);
    pp_model_free(m);
}

/* Kineto copies carry `bytes`: host-to-device is read by the device,
 * device-to-host and memset written, device-to-device both. */
static void test_copy_bytes_count_by_direction(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    const char *names[] = {"Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pageable)",
                           "Memset (Device)", "Memcpy DtoD (Device -> Device)"};
    for (int k = 0; k < 4; k++) {
        size_t i = b_span(m, gpu, PP_ROLE_EXEC, names[k], NULL, -1, k * 100, k * 100 + 100, 100,
                          100);
        annotate(m, i, "bytes", 1000 * (k + 1));
    }
    pp_report *r = b_report(m, NULL);
    const pp_bandwidth *b = &b_find_device(r, "GPU")->bandwidth;
    EXPECT_EQ_U64(b->execs, 4);
    EXPECT_EQ_U64(b->read_bytes, 1000 + 4000);
    EXPECT_EQ_U64(b->write_bytes, 2000 + 3000 + 4000);
    EXPECT_EQ_I64(b->busy_ns, 400);
    EXPECT_NEAR(b->xfer_gbps, 14000.0 / 400, 1e-12);
    pp_report_free(r);
    pp_model_free(m);
}

/* Bytes follow the per-exec rule of W: an exec not entirely inside W does
 * not count, while busy time clips to W. */
static void test_only_execs_inside_the_window_count(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    bytes_exec(m, gpu, "S", 0, 0, 1000, 0, 5000, 0);
    bytes_exec(m, gpu, "S", 1, 2000, 3000, 0, 800, 0);
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.has_from = 1;
    o.from_ns = 500;
    pp_report *r = b_report(m, &o);
    const pp_bandwidth *b = &b_find_device(r, "GPU")->bandwidth;
    EXPECT_EQ_U64(b->execs, 1);
    EXPECT_EQ_U64(b->read_bytes, 800);
    EXPECT_EQ_I64(b->busy_ns, 500 + 1000);
    EXPECT_NEAR(b->read_gbps, 800.0 / 1500, 1e-12);
    pp_report_free(r);
    pp_model_free(m);
}

/* Host work carries bytes too (a stage span with no exec of its own): its
 * bytes count for "CPU (host)" even though host execs come after the
 * device execs that follow it in the trace. */
static void test_host_work_bytes_count(void) {
    pp_model *m = b_model();
    uint32_t host = b_thread(m, "main"), gpu = b_device(m, "GPU", 0, 0);
    size_t prep = b_span(m, host, PP_ROLE_STAGE, "prep", "prep", 0, 0, 500, 0, 0);
    annotate(m, prep, "bytes_in", 1500);
    bytes_exec(m, gpu, "infer", 0, 500, 1500, 0, 2000, 0);
    pp_report *r = b_report(m, NULL);
    const pp_bandwidth *h = &b_find_device(r, "CPU (host)")->bandwidth;
    EXPECT_EQ_U64(h->execs, 1);
    EXPECT_EQ_U64(h->read_bytes, 1500);
    EXPECT_NEAR(h->read_gbps, 1500.0 / 500, 1e-12);
    EXPECT_EQ_U64(b_find_device(r, "GPU")->bandwidth.read_bytes, 2000);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_rates_are_over_the_union_of_busy_intervals);
    RUN(test_execs_without_bytes_give_no_bandwidth);
    RUN(test_copy_bytes_count_by_direction);
    RUN(test_only_execs_inside_the_window_count);
    RUN(test_host_work_bytes_count);
    return pp_test_finish();
}
