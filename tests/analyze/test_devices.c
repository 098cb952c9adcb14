/* Device and track figures: busy is a union, bubbles are the gaps between
 * merged busy intervals, hardware figures leave unknown hw_ns out. */
#include <stdio.h>
#include <stdlib.h>

#include "builder.h"

/* Two streams of one device overlap for 3 us: busy is the union, not the sum. */
static void test_busy_is_union_of_streams(void) {
    pp_model *m = b_model();
    uint32_t s0 = b_device(m, "GPU.0", 0, 0), s1 = b_device(m, "GPU.0", 1, 0);
    b_exec(m, s0, NULL, -1, 0, 5000, 0, 0);
    b_exec(m, s1, NULL, -1, 2000, 8000, 0, 0);
    b_exec(m, s0, NULL, -1, 10000, 12000, 0, 0);
    pp_report *r = b_report(m, NULL);
    const pp_device_stats *d = b_find_device(r, "GPU.0");
    EXPECT_EQ_I64(pp_report_window(r)->start_ns, 0);
    EXPECT_EQ_I64(pp_report_window(r)->end_ns, 12000);
    EXPECT_EQ_I64(d->busy_ns, 8000 + 2000);
    EXPECT_EQ_I64(d->idle_ns, 2000);
    EXPECT_NEAR(d->wall_util, 10000.0 / 12000.0, 1e-12);
    EXPECT_EQ_U64(d->bubbles.count, 1);
    EXPECT_EQ_I64(d->bubbles.total, 2000);
    EXPECT_EQ_U64(d->tracks, 2);
    size_t nt;
    const pp_track_stats *t = pp_report_tracks(r, &nt);
    EXPECT_EQ_U64(nt, 2);
    EXPECT_STR(t[0].name, "GPU.0/stream 0");
    EXPECT_EQ_I64(t[0].busy_ns, 5000 + 2000);
    /* stream 0's own gap 5000..10000 is a track bubble, hidden on the device */
    EXPECT_EQ_U64(t[0].bubbles.count, 1);
    EXPECT_EQ_I64(t[0].bubbles.max, 5000);
    EXPECT_EQ_I64(t[1].bubbles.leading_ns, 2000);
    EXPECT_EQ_I64(t[1].bubbles.trailing_ns, 4000);
    pp_report_free(r);
    pp_model_free(m);
}

/* Gaps of 1000 and 3000 between three execs inside W = [0, 10000): two
 * bubbles; the 1000 before and 2000 after are leading/trailing idle. */
static void test_bubbles_and_leading_trailing_idle(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), host = b_thread(m, "main");
    b_span(m, host, PP_ROLE_USER, "run", NULL, -1, 0, 10000, 0, 0);
    b_exec(m, cpu, NULL, -1, 1000, 2000, 0, 0);
    b_exec(m, cpu, NULL, -1, 3000, 4000, 0, 0);
    b_exec(m, cpu, NULL, -1, 7000, 8000, 0, 0);
    b_exec(m, cpu, NULL, -1, 8000, 8500, 0, 0); /* touches: no gap */
    pp_report *r = b_report(m, NULL);
    const pp_device_stats *d = b_find_device(r, "CPU");
    EXPECT_EQ_I64(d->busy_ns, 3500);
    EXPECT_EQ_I64(d->idle_ns, 6500);
    EXPECT_EQ_U64(d->bubbles.count, 2);
    EXPECT_EQ_I64(d->bubbles.total, 4000);
    EXPECT_EQ_I64(d->bubbles.mean, 2000);
    EXPECT_EQ_I64(d->bubbles.p50, 1000); /* rank ceil(0.5 * 2) = 1 */
    EXPECT_EQ_I64(d->bubbles.p95, 3000);
    EXPECT_EQ_I64(d->bubbles.max, 3000);
    EXPECT_EQ_I64(d->bubbles.leading_ns, 1000);
    EXPECT_EQ_I64(d->bubbles.trailing_ns, 1500);
    pp_report_free(r);
    pp_model_free(m);
}

/* An exec with hw_ns 0 is counted but left out of every hardware figure;
 * device HW utilization is the mean over its tracks. */
static void test_unknown_hw_left_out(void) {
    pp_model *m = b_model();
    uint32_t a = b_device(m, "NPU", 0, 1), b = b_device(m, "NPU", 1, 1);
    b_exec(m, a, NULL, -1, 0, 1000, 600, 100);    /* penalty 400 */
    b_exec(m, a, NULL, -1, 1000, 2000, 0, 0);     /* hw unknown */
    b_exec(m, a, NULL, -1, 2000, 4000, 1500, 300); /* penalty 500 */
    b_exec(m, b, NULL, -1, 0, 4000, 2000, 0);      /* penalty 2000 */
    pp_report *r = b_report(m, NULL);
    const pp_device_stats *d = b_find_device(r, "NPU");
    EXPECT(d->simulated);
    EXPECT_EQ_U64(d->execs, 4);
    EXPECT_EQ_U64(d->hw_unknown, 1);
    EXPECT_NEAR(d->hw_eff, (600.0 + 1500 + 2000) / (1000.0 + 2000 + 4000), 1e-12);
    EXPECT_NEAR(d->transfer_share, 400.0 / 4100.0, 1e-12);
    EXPECT_NEAR(d->hw_util, (2100.0 / 4000 + 2000.0 / 4000) / 2, 1e-12);
    EXPECT_EQ_U64(d->penalty.n, 3);
    EXPECT_EQ_I64(d->penalty.total, 2900);
    EXPECT_EQ_I64(d->penalty.mean, 966); /* floor(2900 / 3) */
    EXPECT_EQ_I64(d->penalty.p50, 500);
    EXPECT_EQ_I64(d->penalty.p95, 2000);
    EXPECT_NEAR(d->penalty_pct_wall, 100.0 * 2900 / 7000, 1e-9);
    size_t n;
    const char *const *f = pp_report_findings(r, &n);
    int named = 0, counted = 0;
    for (size_t i = 0; i < n; i++) {
        named |= strstr(f[i], "NPU (simulated)") != NULL;
        counted |= strstr(f[i], "1 of 4 device execs report no hardware time") != NULL;
    }
    EXPECT(named);
    EXPECT(counted);
    pp_report_free(r);
    pp_model_free(m);
}

/* Epoch-scale nanosecond timestamps keep every nanosecond. */
static void test_epoch_nanoseconds_exact(void) {
    pp_model *m = b_model();
    uint32_t g = b_device(m, "GPU", 0, 0);
    const int64_t t0 = 1700000000000000123LL;
    b_exec(m, g, NULL, -1, t0, t0 + 7, 0, 0);
    b_exec(m, g, NULL, -1, t0 + 10, t0 + 13, 0, 0);
    pp_report *r = b_report(m, NULL);
    const pp_device_stats *d = b_find_device(r, "GPU");
    EXPECT_EQ_I64(pp_report_window(r)->start_ns, t0);
    EXPECT_EQ_I64(d->busy_ns, 10);
    EXPECT_EQ_I64(d->bubbles.total, 3);
    pp_report_free(r);
    pp_model_free(m);
}

/* An op span with its "type" and "exec_type" (strings) and "cpu_ns"
 * (integer) annotations, as the pipeline executor records them. */
static void b_op(pp_model *m, uint32_t track, const char *name, const char *type,
                 const char *exec_type, int64_t start, int64_t end, int64_t cpu_ns) {
    size_t e = b_span(m, track, PP_ROLE_OP, name, NULL, -1, start, end, 0, 0);
    pp_annotation a = {.event = e, .key = b_str(m, "type"), .type = PP_VALUE_STR};
    a.v.s = b_str(m, type);
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    a.key = b_str(m, "exec_type"), a.v.s = b_str(m, exec_type);
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    if (cpu_ns >= 0) {
        a = (pp_annotation){.event = e, .key = b_str(m, "cpu_ns"), .type = PP_VALUE_INT};
        a.v.i = cpu_ns;
        EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    }
}

/* Op spans per device and name (with type and exec type), and per device,
 * type and exec type; each sorted by total; CPU time where reported. */
static void test_op_statistics(void) {
    pp_model *m = b_model();
    uint32_t c = b_device(m, "CPU", 0, 0);
    b_exec(m, c, NULL, -1, 0, 1000, 0, 0);
    b_op(m, c, "fc1", "MatMul", "jit_avx512_FP32", 0, 300, 250);
    b_op(m, c, "relu", "Relu", "jit_avx512_FP32", 300, 400, -1);
    b_op(m, c, "fc1", "MatMul", "jit_avx512_FP32", 400, 900, 450);
    b_op(m, c, "fc2", "MatMul", "ref_any_FP32", 900, 960, -1);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_op_stats *o = pp_report_ops(r, &n);
    EXPECT_EQ_U64(n, 3);
    EXPECT_STR(o[0].name, "fc1");
    EXPECT_STR(o[0].type, "MatMul");
    EXPECT_STR(o[0].exec_type, "jit_avx512_FP32");
    EXPECT_EQ_U64(o[0].count, 2);
    EXPECT_EQ_I64(o[0].total, 800);
    EXPECT_EQ_I64(o[0].mean, 400);
    EXPECT_EQ_I64(o[0].p50, 300);
    EXPECT_EQ_I64(o[0].max, 500);
    EXPECT_EQ_U64(o[0].cpu_count, 2);
    EXPECT_EQ_I64(o[0].cpu_total, 700);
    EXPECT_STR(o[1].name, "relu");
    EXPECT_EQ_U64(o[1].cpu_count, 0);
    EXPECT_STR(o[2].name, "fc2");
    /* by type: MatMul on jit (800) and on ref (60) stay apart */
    o = pp_report_op_types(r, &n);
    EXPECT_EQ_U64(n, 3);
    EXPECT_STR(o[0].name, "");
    EXPECT_STR(o[0].type, "MatMul");
    EXPECT_STR(o[0].exec_type, "jit_avx512_FP32");
    EXPECT_EQ_I64(o[0].total, 800);
    EXPECT_STR(o[1].type, "Relu");
    EXPECT_STR(o[2].exec_type, "ref_any_FP32");
    EXPECT_EQ_I64(o[2].total, 60);
    pp_report_free(r);
    pp_model_free(m);
}

/* The most idle device's finding says when it idles: in bubbles (the
 * longest and where it lies in W), before its first exec, after its last. */
static void test_most_idle_device_says_when(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, gpu, NULL, -1, 0, 10000, 0, 0);
    b_exec(m, cpu, NULL, -1, 1000, 2000, 0, 0);
    b_exec(m, cpu, NULL, -1, 3000, 4000, 0, 0);
    b_exec(m, cpu, NULL, -1, 7000, 8500, 0, 0);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const char *const *f = pp_report_findings(r, &n);
    int said = 0;
    for (size_t i = 0; i < n; i++)
        said |= strcmp(f[i], "Most idle device: CPU is busy 35.0% of the window and idle "
                             "6.500 us: 4.000 us in 2 bubbles between its execs (mean 2.000 "
                             "us, the longest 3.000 us at +4.000 us into the window), 1.000 us "
                             "before its first exec and 1.500 us after its last.") == 0;
    EXPECT(said);
    pp_report_free(r);
    pp_model_free(m);
}

/* gaps.csv lists every bubble exactly, device by device in time order,
 * whatever its size: 1 ns, and 10 s between epoch-scale timestamps (the
 * report keeps bubbles compactly, as distances from one to the next). */
static void test_gaps_csv_keeps_every_bubble_exactly(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    const int64_t t0 = 1700000000000000123LL, s10 = 10000000000LL;
    b_exec(m, gpu, NULL, -1, t0, t0 + 5, 0, 0);
    b_exec(m, gpu, NULL, -1, t0 + 6, t0 + 8, 0, 0);
    b_exec(m, gpu, NULL, -1, t0 + 8 + s10, t0 + 9 + s10, 0, 0);
    b_exec(m, cpu, NULL, -1, t0 + 100, t0 + 200, 0, 0);
    b_exec(m, cpu, NULL, -1, t0 + 300, t0 + 400, 0, 0);
    pp_report *r = b_report(m, NULL);
    char *csv = b_csv(r, "devices_gaps_csv", "gaps.csv");
    /* devices in the order their first execs come */
    EXPECT_STR(csv, "device,start_ns,end_ns,gap_ns\n"
                    "\"GPU\",1700000000000000128,1700000000000000129,1\n"
                    "\"GPU\",1700000000000000131,1700000010000000131,10000000000\n"
                    "\"CPU\",1700000000000000323,1700000000000000423,100\n");
    free(csv);
    pp_report_free(r);
    pp_model_free(m);
}

/* A host thread does stage "P" as host work [0, 600) of each 1000 ns
 * batch, then splits and joins the data-parallel stage "E": partition
 * [600, 650), merge [900, 950), E's execs on CPU and NPU in between. The
 * host's busy time holds the partitions and merges (700 ns a batch, not
 * 600), and its bubbles are the 50 ns gaps and the 50 ns to the next batch. */
static void test_host_busy_holds_partitions_and_merges(void) {
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "main");
    uint32_t cpu = b_device(m, "CPU", 0, 0), npu = b_device(m, "NPU", 0, 0);
    for (int64_t b = 0; b < 3; b++) {
        int64_t o = 1000 * b;
        b_span(m, t, PP_ROLE_STAGE, "P", "P", b, o, o + 600, 0, 0);
        b_span(m, t, PP_ROLE_PARTITION, "partition", "E", b, o + 600, o + 650, 0, 0);
        b_exec(m, cpu, "E", b, o + 650, o + 850, 0, 0);
        b_exec(m, npu, "E", b, o + 650, o + 900, 0, 0);
        b_span(m, t, PP_ROLE_MERGE, "merge", "E", b, o + 900, o + 950, 0, 0);
    }
    pp_report *r = b_report(m, NULL);
    size_t n, h = SIZE_MAX;
    const pp_device_stats *d = pp_report_devices(r, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, "CPU (host)") == 0)
            h = i;
    EXPECT(h != SIZE_MAX);
    if (h != SIZE_MAX) {
        EXPECT_EQ_I64(d[h].busy_ns, 3 * 700);
        EXPECT_EQ_U64(d[h].execs, 3); /* the host execs: brackets are time, not execs */
        /* per batch: 600..650 touches, 650..900 gap (250), then 950..1000 (50) */
        EXPECT_EQ_U64(d[h].bubbles.count, 2 * 2 + 1);
        EXPECT_EQ_I64(d[h].bubbles.total, 3 * 250 + 2 * 50);
    }
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_busy_is_union_of_streams);
    RUN(test_bubbles_and_leading_trailing_idle);
    RUN(test_unknown_hw_left_out);
    RUN(test_epoch_nanoseconds_exact);
    RUN(test_op_statistics);
    RUN(test_most_idle_device_says_when);
    RUN(test_gaps_csv_keeps_every_bubble_exactly);
    RUN(test_host_busy_holds_partitions_and_merges);
    return pp_test_finish();
}
