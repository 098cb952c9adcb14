/* Findings as data: each test builds a trace whose truth is known from its
 * construction and checks the findings' fields (kind, subject, figure and
 * its interval, significance, action, prediction), never their sentences. */
#include <math.h>

#include "builder.h"
#include "stats/stats.h"

/* The first finding of `kind`, or NULL. */
static const pp_finding *finding_of(const pp_report *r, pp_finding_kind kind, size_t *at) {
    size_t n;
    const pp_finding *f = pp_report_finding_list(r, &n);
    for (size_t i = 0; i < n; i++)
        if (f[i].kind == kind) {
            if (at)
                *at = i;
            return &f[i];
        }
    return NULL;
}

/* A data-parallel stage "E" over CPU and NPU, `n` batches 10 us apart, with
 * the parts' walls given per batch. */
static pp_model *dp_model(size_t n, const int64_t *cpu_wall, const int64_t *npu_wall) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), npu = b_device(m, "NPU", 0, 0);
    for (size_t b = 0; b < n; b++) {
        int64_t t = 10000 * (int64_t)b;
        b_exec(m, cpu, "E", (int64_t)b, t, t + cpu_wall[b], 0, 0);
        b_exec(m, npu, "E", (int64_t)b, t, t + npu_wall[b], 0, 0);
    }
    return m;
}

/* Two identical halves with per-batch noise (the 21 / 19 of 40):
 * the slowest counts are what the construction says, the imbalance is not
 * significant, and no re-split is advised. */
static void test_identical_halves_are_within_noise(void) {
    enum { N = 40 };
    int64_t a[N], b[N];
    uint64_t a_slower = 0;
    pp_rng g;
    pp_rng_seed(&g, 7);
    for (size_t i = 0; i < N; i++) {
        a[i] = 1000 + (int64_t)pp_rng_below(&g, 400);
        b[i] = 1000 + (int64_t)pp_rng_below(&g, 400);
        if (a[i] == b[i])
            b[i]++;
        a_slower += a[i] > b[i];
    }
    pp_model *m = dp_model(N, a, b);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_dp_stats *dp = pp_report_dp(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_EQ_U64(dp->devices[0].slowest + dp->devices[1].slowest, N);
    const pp_device_stats *devs = pp_report_devices(r, &n);
    size_t c = strcmp(devs[dp->devices[0].device].name, "CPU") == 0 ? 0 : 1;
    EXPECT_EQ_U64(dp->devices[c].slowest, a_slower);
    uint64_t k = a_slower > N - a_slower ? a_slower : N - a_slower;
    EXPECT_NEAR(dp->parts_p, pp_sign_test(k, N), 1e-12);
    EXPECT(dp->parts_p >= PP_FINDING_ALPHA);
    EXPECT(dp->imbalance_lo <= dp->imbalance && dp->imbalance <= dp->imbalance_hi);
    const pp_finding *f = finding_of(r, PP_FINDING_IMBALANCE, NULL);
    if (dp->imbalance > PP_FINDING_IMBALANCE_MIN) {
        EXPECT(f != NULL);
        if (f) {
            EXPECT_EQ_I64(f->significant, 0);
            EXPECT_EQ_I64(f->action.kind, PP_ACTION_NONE);
            EXPECT_STR(f->figure.name, "imbalance");
            EXPECT_NEAR(f->figure.est, dp->imbalance, 1e-12);
        }
    }
    pp_report_free(r);
    pp_model_free(m);
}

/* The NPU takes twice the CPU's time in every batch: significant, and the
 * advice re-splits 2/3 to the CPU, 1/3 to the NPU (an even split now: the
 * CPU does 1/2 in 1000 ns, the NPU 1/2 in 2000 ns). Its prediction is "not
 * computed" until the what-if layer sets one; a prediction whose interval
 * reaches 0 withdraws the advice. */
static void test_consistent_imbalance_advises_a_resplit(void) {
    enum { N = 20 };
    int64_t a[N], b[N];
    for (size_t i = 0; i < N; i++)
        a[i] = 1000 + 10 * (int64_t)(i % 3), b[i] = 2 * a[i];
    pp_model *m = dp_model(N, a, b);
    pp_report *r = b_report(m, NULL);
    size_t n, at = 0;
    const pp_dp_stats *dp = pp_report_dp(r, &n);
    const pp_finding *f = finding_of(r, PP_FINDING_IMBALANCE, &at);
    EXPECT(f != NULL);
    if (!f)
        goto out;
    EXPECT_EQ_I64(f->significant, 1);
    EXPECT_EQ_U64(f->stage, dp->stage);
    EXPECT_NEAR(f->figure.est, 2000.0 / 1500.0, 1e-9); /* Σ max / Σ mean: 2a / 1.5a */
    EXPECT_NEAR(dp->parts_p, pp_sign_test(N, N), 1e-12);
    EXPECT_EQ_I64(f->action.kind, PP_ACTION_RESPLIT);
    EXPECT_EQ_U64(f->action.nshares, 2);
    for (size_t i = 0; i < dp->ndevices && f->action.nshares == 2; i++) {
        double want = dp->devices[i].slowest == N ? 1.0 / 3 : 2.0 / 3;
        EXPECT_NEAR(f->action.shares[i], want, 1e-9);
    }
    EXPECT_EQ_I64(f->prediction.state, PP_PREDICTION_NONE);
    /* a prediction is set through the report, and the line carries it */
    size_t nt;
    const char *before = pp_report_findings(r, &nt)[at];
    size_t len_before = strlen(before);
    pp_finding_prediction p = {.state = PP_PREDICTION_PREDICTED, .change_pct = 8.1,
                               .lo_pct = 5.2, .hi_pct = 10.9, .reason = "replay within 3%"};
    EXPECT_EQ_I64(pp_report_set_finding_prediction(r, at, &p), PP_OK);
    f = &pp_report_finding_list(r, &n)[at];
    EXPECT_EQ_I64(f->prediction.state, PP_PREDICTION_PREDICTED);
    EXPECT_NEAR(f->prediction.lo_pct, 5.2, 1e-12);
    EXPECT_STR(f->prediction.reason, "replay within 3%");
    EXPECT_STR(f->text, pp_report_findings(r, &nt)[at]);
    EXPECT(strlen(f->text) != len_before);
    /* a finding without an action takes no prediction */
    size_t idle = 0;
    EXPECT(finding_of(r, PP_FINDING_IDLE, &idle) != NULL);
    EXPECT_EQ_I64(pp_report_set_finding_prediction(r, idle, &p), PP_EINVAL);
    EXPECT_EQ_I64(pp_report_set_finding_prediction(r, n, &p), PP_EINVAL);
out:
    pp_report_free(r);
    pp_model_free(m);
}

/* Three stages of 300 ns each on their own device; a new batch every 400
 * ns, so each batch spans 900 ns and 2.25 batches are in flight: the
 * pipeline streams, and the throughput finding's figure says so (the
 * issue's demo said "does not stream" of such a run). Bound 1/300 ns,
 * measured n / W: a gap above PP_FINDING_THROUGHPUT_GAP. */
static void test_streaming_pipeline_has_batches_in_flight(void) {
    enum { N = 30 };
    pp_model *m = b_model();
    uint32_t d[3] = {b_device(m, "A", 0, 0), b_device(m, "B", 0, 0), b_device(m, "C", 0, 0)};
    const char *stage[3] = {"S0", "S1", "S2"};
    for (int64_t b = 0; b < N; b++)
        for (int s = 0; s < 3; s++)
            b_exec(m, d[s], stage[s], b, 400 * b + 300 * s, 400 * b + 300 * s + 300, 0, 0);
    pp_report *r = b_report(m, NULL);
    const pp_finding *f = finding_of(r, PP_FINDING_THROUGHPUT, NULL);
    EXPECT(f != NULL);
    if (f) {
        double w = 400.0 * (N - 1) + 900, period = (double)(int64_t)(w / N);
        EXPECT_STR(f->figure.name, "batches_in_flight");
        EXPECT_NEAR(f->figure.est, 900.0 / period, 1e-9);
        EXPECT(f->figure.lo > PP_FINDING_SERIAL_MAX);
    }
    pp_report_free(r);
    pp_model_free(m);
}

/* A/A: two runs of one configuration (two identical halves drawn from one
 * distribution), resampled 40 times with seeds: no re-split advice, and
 * no significant imbalance, in at least 95% of them. */
static void test_aa_no_resplit_advice(void) {
    enum { N = 40, RUNS = 40 };
    int advised = 0;
    for (uint64_t seed = 1; seed <= RUNS; seed++) {
        int64_t a[N], b[N];
        pp_rng g;
        pp_rng_seed(&g, seed);
        for (size_t i = 0; i < N; i++) { /* skewed, like real batch times */
            a[i] = 1000 + (int64_t)(-300.0 * log(1.0 - pp_rng_unit(&g)));
            b[i] = 1000 + (int64_t)(-300.0 * log(1.0 - pp_rng_unit(&g)));
        }
        pp_model *m = dp_model(N, a, b);
        pp_report *r = b_report(m, NULL);
        const pp_finding *f = finding_of(r, PP_FINDING_IMBALANCE, NULL);
        advised += f && (f->action.kind != PP_ACTION_NONE || f->significant == 1);
        pp_report_free(r);
        pp_model_free(m);
    }
    EXPECT(advised * 20 <= RUNS); /* at most 5% */
}

/* Host work (stage spans with no exec) has no hardware time by nature: its
 * stage counts no execs "without hardware time", as its device does not
 * (the issue saw no-hw 40 in the stage table, 0 for the device). */
static void test_host_work_is_not_hw_unknown(void) {
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "prep");
    for (int64_t b = 0; b < 4; b++)
        b_span(m, t, PP_ROLE_STAGE, "P", "P", b, 1000 * b, 1000 * b + 600, 0, 0);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_EQ_U64(s[0].execs, 4);
    EXPECT_EQ_U64(s[0].hw_unknown, 0);
    EXPECT_EQ_I64(s[0].exec_less, 1);
    const pp_device_stats *d = pp_report_devices(r, &n);
    EXPECT_EQ_U64(d[0].hw_unknown, 0);
    EXPECT(finding_of(r, PP_FINDING_HW_UNKNOWN, NULL) == NULL);
    pp_report_free(r);
    pp_model_free(m);
}

/* Stage A takes 100 ns a batch, a new batch every 500 ns; stage B takes
 * each batch 300 ns after A finished it, busy with the one before until
 * then: A idles 400 ns between batches with its input ready (the first
 * stage's always is), 300 of them while B has not yet taken its last
 * output and is busy: back-pressure, never "waiting for upstream". Before
 * batch 0, B was idle: that first gap is not back-pressure. */
static void test_blocked_by_downstream_is_back_pressure(void) {
    enum { N = 10 };
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    for (int64_t b = 0; b < N; b++) {
        b_exec(m, cpu, "A", b, 500 * b, 500 * b + 100, 0, 0);
        b_exec(m, gpu, "B", b, 500 * b + 400, 500 * b + 900, 0, 0);
    }
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_I64(s[0].blocked_ns, 300 * (N - 2));
    EXPECT_EQ_I64(s[0].starved_ns, 0);
    EXPECT_EQ_I64(s[1].blocked_ns, 0); /* the last stage has no downstream */
    EXPECT_EQ_I64(s[1].starved_ns, 0); /* B runs back to back */
    const pp_finding *f = finding_of(r, PP_FINDING_BACK_PRESSURE, NULL);
    EXPECT(f != NULL);
    if (f) {
        EXPECT_EQ_U64(f->stage, 0);
        EXPECT_NEAR(f->figure.est, 300.0 * (N - 2), 1e-9);
    }
    pp_report_free(r);
    pp_model_free(m);
}

/* A data-parallel stage whose host thread partitions [0, 50), whose parts
 * run [200, 300) on CPU and NPU, and which merges [500, 550): it holds each
 * batch 550 ns, its stage time is 50 + 100 + 50 = 200 ns, and the 350 ns
 * between are hand-off, named with its figure. */
static void test_handoff_is_hold_time_beyond_stage_time(void) {
    enum { N = 8 };
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "main");
    uint32_t cpu = b_device(m, "CPU", 0, 0), npu = b_device(m, "NPU", 0, 0);
    for (int64_t b = 0; b < N; b++) {
        int64_t o = 1000 * b;
        b_span(m, t, PP_ROLE_PARTITION, "partition", "E", b, o, o + 50, 0, 0);
        b_exec(m, cpu, "E", b, o + 200, o + 300, 0, 0);
        b_exec(m, npu, "E", b, o + 200, o + 300, 0, 0);
        b_span(m, t, PP_ROLE_MERGE, "merge", "E", b, o + 500, o + 550, 0, 0);
    }
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_I64(s[0].time.mean, 200);
    EXPECT_EQ_I64(s[0].hold.mean, 550);
    EXPECT_EQ_U64(s[0].hold.n, N);
    const pp_finding *f = finding_of(r, PP_FINDING_HANDOFF, NULL);
    EXPECT(f != NULL);
    if (f) {
        EXPECT_EQ_U64(f->stage, 0);
        EXPECT_STR(f->figure.name, "handoff_ns_mean");
        EXPECT_NEAR(f->figure.est, 350, 1e-9);
        EXPECT_NEAR(f->figure.lo, 350, 1e-9);
        EXPECT_NEAR(f->figure.hi, 350, 1e-9);
    }
    pp_report_free(r);
    pp_model_free(m);
}

/* A CPU device (the cpu backend, OpenVINO's CPU) busy [0, 500) and host
 * work busy [0, 1000) share the host's cores: the report groups them, with
 * their combined demand (1.5 cores busy on average over W = 1000 ns), and
 * the idle finding names the CPU device, the less busy, with its group. */
static void test_cpu_device_and_host_threads_share_cores(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), t = b_thread(m, "main");
    b_exec(m, cpu, "A", 0, 0, 500, 0, 0);
    b_span(m, t, PP_ROLE_STAGE, "P", "P", 0, 0, 1000, 0, 0);
    pp_report *r = b_report(m, NULL);
    char *json = NULL;
    EXPECT_EQ_I64(pp_report_json(r, &json, NULL), PP_OK);
    if (json)
        EXPECT_CONTAINS(json, "\"host_cpu\": {\"devices\": [\"CPU\", \"CPU (host)\"], "
                              "\"cores_busy\": 1.5}");
    pp_report_json_free(json);
    const pp_finding *f = finding_of(r, PP_FINDING_IDLE, NULL);
    EXPECT(f != NULL);
    size_t n;
    if (f)
        EXPECT_STR(pp_report_devices(r, &n)[f->device].name, "CPU");
    pp_report_free(r);
    pp_model_free(m);
}

/* Beyond AN_BOOT_UNITS (1024) batches the interval resamples runs of
 * consecutive batches: 6000 batches whose NPU part takes 2x or 2.2x the
 * CPU's by turns have the imbalance Σ max / Σ mean of the construction,
 * inside its interval, which is narrow: the runs barely differ. */
static void test_long_trace_interval_from_runs_of_batches(void) {
    enum { N = 6000 };
    int64_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    double max = 0, mean = 0;
    for (size_t i = 0; i < N; i++) {
        a[i] = 1000, b[i] = i % 2 ? 2000 : 2200;
        max += (double)b[i], mean += (double)(a[i] + b[i]) / 2;
    }
    pp_model *m = dp_model(N, a, b);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_dp_stats *dp = pp_report_dp(r, &n);
    EXPECT_NEAR(dp->imbalance, max / mean, 1e-9);
    EXPECT(dp->imbalance_lo <= dp->imbalance && dp->imbalance <= dp->imbalance_hi);
    EXPECT(dp->imbalance_hi - dp->imbalance_lo < 0.01);
    const pp_finding *f = finding_of(r, PP_FINDING_IMBALANCE, NULL);
    EXPECT(f != NULL && f->significant == 1);
    pp_report_free(r);
    pp_model_free(m);
    free(a), free(b);
}

/* Every kind has a name, and JSON carries the fields. */
static void test_kind_names(void) {
    for (int k = 0; k < PP_FINDING_KIND_COUNT; k++)
        EXPECT(strcmp(pp_finding_kind_name((pp_finding_kind)k), "?") != 0);
    EXPECT_STR(pp_finding_action_name(PP_ACTION_RESPLIT), "resplit");
}

int main(void) {
    RUN(test_identical_halves_are_within_noise);
    RUN(test_consistent_imbalance_advises_a_resplit);
    RUN(test_streaming_pipeline_has_batches_in_flight);
    RUN(test_aa_no_resplit_advice);
    RUN(test_host_work_is_not_hw_unknown);
    RUN(test_blocked_by_downstream_is_back_pressure);
    RUN(test_handoff_is_hold_time_beyond_stage_time);
    RUN(test_cpu_device_and_host_threads_share_cores);
    RUN(test_long_trace_interval_from_runs_of_batches);
    RUN(test_kind_names);
    return pp_test_finish();
}
