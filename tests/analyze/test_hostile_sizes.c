/* Inputs that are small but hostile to the analysis: hardware times near the
 * uint64 limit, timestamps centuries apart, and thousands of stages,
 * batches and devices with one exec each. Each must give finite figures or
 * a clear refusal, in memory linear in the events (under ASan and UBSan in
 * the suite's sanitizer build, which would report any overflow). */
#include <math.h>

#include "builder.h"

/* hw_ns of 2^64 - 1 and 2^63 on two execs: every hardware sum saturates at
 * INT64_MAX instead of wrapping to a negative time. */
static void test_huge_hardware_times_saturate(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, gpu, "A", 0, 0, 1000, UINT64_MAX, UINT64_MAX);
    b_exec(m, gpu, "A", 1, 2000, 3000, (uint64_t)1 << 63, 0);
    pp_report *r = b_report(m, NULL);
    const pp_device_stats *d = b_find_device(r, "GPU");
    EXPECT(d->hw_eff > 0 && isfinite(d->hw_eff));
    EXPECT(d->hw_util > 0 && isfinite(d->hw_util));
    EXPECT(d->hw_quality & PP_HW_ABOVE_WALL);
    EXPECT_EQ_U64(d->hw_above_wall, 2);
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_I64(s[0].hw_ns, INT64_MAX);
    EXPECT(s[0].penalty.total < 0 && s[0].penalty.total >= INT64_MIN);
    EXPECT(s[0].penalty.mean < 0);
    pp_report_free(r);
    pp_model_free(m);
}

/* Two events 200 years apart cannot be one recording: refused, naming the
 * span and what to do. */
static void test_centuries_apart_refused(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, gpu, "A", 0, -INT64_MAX + 10, -INT64_MAX + 20, 5, 0);
    b_exec(m, gpu, "A", 1, INT64_MAX - 20, INT64_MAX - 10, 5, 0);
    pp_report *r = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_report_build(m, NULL, &r, &err), PP_EINVAL);
    EXPECT(r == NULL);
    EXPECT_CONTAINS(err.msg, "more than 73 years");
    EXPECT_CONTAINS(err.msg, "--from/--to");
    pp_model_free(m);
}

/* One cycle in a window of 54 years (a mark at 0 beside epoch times, as a
 * fuzzed trace had): the throughput finding compares the stages' 2 us with
 * a period of 54 years, and says they do not fill it. 0.8 x the period was
 * once computed as period x 8 / 10, which overflowed (found by
 * fuzz/fuzz_report.c; tests/fuzz/report/ keeps the input) and made the
 * finding say the stages barely overlap. */
static void test_throughput_finding_over_decades(void) {
    const int64_t t = 1700000000000000000LL;
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, gpu, "A", 0, t, t + 1000, 500, 0);
    b_exec(m, gpu, "B", 0, t + 1000, t + 2000, 500, 0);
    b_instant(m, gpu, "start", 0);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const char *const *f = pp_report_findings(r, &n);
    const char *throughput = NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(f[i], "Throughput:", 11) == 0)
            throughput = f[i];
    EXPECT(throughput != NULL);
    if (throughput) {
        EXPECT_CONTAINS(throughput, "the stages take 2.000 us in sum");
        EXPECT(strstr(throughput, "barely overlap") == NULL);
    }
    pp_report_free(r);
    pp_model_free(m);
}

/* 6000 execs, each its own stage, batch and device: one stage time per
 * exec, each cycle its own stage, and no table sized stages x batches. */
static void test_every_exec_its_own_stage_batch_and_device(void) {
    enum { N = 6000 };
    pp_model *m = b_model();
    for (int i = 0; i < N; i++) {
        char dev[32], stage[32];
        snprintf(dev, sizeof dev, "D%d", i);
        snprintf(stage, sizeof stage, "S%d", i);
        b_exec(m, b_device(m, dev, 0, 0), stage, (int64_t)i * 7919, i * 100, i * 100 + 50, 40, 0);
    }
    pp_report *r = b_report(m, NULL);
    size_t n;
    pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, N);
    pp_report_devices(r, &n);
    EXPECT_EQ_U64(n, N);
    const pp_stage_time *t = pp_report_stage_times(r, &n);
    EXPECT_EQ_U64(n, N);
    EXPECT_EQ_I64(t[N - 1].time_ns, 50);
    EXPECT_EQ_I64(t[N - 1].batch, (int64_t)(N - 1) * 7919);
    const pp_cycle_stats *c = pp_report_cycles(r);
    EXPECT_EQ_U64(c->batches, N);
    EXPECT_EQ_U64(c->complete, 0); /* each batch lacks the others' stages */
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_huge_hardware_times_saturate);
    RUN(test_centuries_apart_refused);
    RUN(test_throughput_finding_over_decades);
    RUN(test_every_exec_its_own_stage_batch_and_device);
    return pp_test_finish();
}
