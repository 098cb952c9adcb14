/* Stage times, cycles and the data-parallel breakdown (docs/architecture.md §4). */
#include <string.h>

#include "builder.h"

/* embed, batch 0: partition 100, CPU wall 500, NPU wall 1000, merge 50.
 * Formula = 100 + 1000 + 50; measured = partition start .. merge end; the
 * instance lies from the partition's start to the merge's end, its first
 * exec (device order: CPU, the first device) on the CPU's track. */
static void test_data_parallel_stage(void) {
    pp_model *m = b_model();
    uint32_t host = b_thread(m, "embed"), cpu = b_device(m, "CPU", 0, 0);
    uint32_t npu = b_device(m, "NPU", 0, 1);
    b_span(m, host, PP_ROLE_PARTITION, "partition", "embed", 0, 0, 100, 0, 0);
    b_exec(m, cpu, "embed", 0, 100, 600, 0, 0);
    b_exec(m, npu, "embed", 0, 100, 1100, 0, 0);
    b_span(m, host, PP_ROLE_MERGE, "merge", "embed", 0, 1150, 1200, 0, 0);
    b_span(m, host, PP_ROLE_STAGE, "embed", "embed", 0, 0, 1200, 0, 0);
    pp_report *r = b_report(m, NULL);
    const pp_stage_stats *s = b_find_stage(r, "embed", NULL);
    EXPECT(s->data_parallel);
    EXPECT_EQ_I64(s->time.max, 1150);
    size_t n;
    const pp_stage_time *t = pp_report_stage_times(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_EQ_I64(t[0].time_ns, 1150);
    EXPECT_EQ_I64(t[0].measured_ns, 1200);
    EXPECT_EQ_I64(t[0].start_ns, 0);
    EXPECT_EQ_I64(t[0].end_ns, 1200);
    EXPECT_EQ_U64(t[0].track, cpu);
    const pp_dp_stats *dp = pp_report_dp(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_EQ_I64(dp->partition.mean, 100);
    EXPECT_EQ_I64(dp->max_device.mean, 1000);
    EXPECT_EQ_I64(dp->merge.mean, 50);
    EXPECT_EQ_I64(dp->measured.mean, 1200);
    EXPECT_NEAR(dp->imbalance, 1000.0 / 750.0, 1e-12);
    EXPECT_EQ_U64(dp->ndevices, 2);
    /* even split: CPU does 0.5 in 500 ns, NPU 0.5 in 1000 ns, so CPU is twice
     * as fast and should get 2/3 */
    for (size_t i = 0; i < dp->ndevices; i++) {
        EXPECT_NEAR(dp->devices[i].share, 0.5, 1e-12);
        double want = dp->devices[i].wall_ns == 500 ? 2.0 / 3 : 1.0 / 3;
        EXPECT_NEAR(dp->devices[i].suggested_share, want, 1e-12);
    }
    /* one batch: no evidence that a part is slower, so no advice */
    size_t nf;
    const pp_finding *f = pp_report_finding_list(r, &nf);
    int said = 0;
    for (size_t i = 0; i < nf; i++)
        if (f[i].kind == PP_FINDING_IMBALANCE) {
            said = 1;
            EXPECT_EQ_I64(f[i].significant, 0);
            EXPECT_EQ_I64(f[i].action.kind, PP_ACTION_NONE);
        }
    EXPECT(said);
    pp_report_free(r);
    pp_model_free(m);
}

/* Batch 1 lacks stage B: incomplete, keeps its cycle latency; complete-only
 * figures and measured throughput count batch 0 only. */
static void test_incomplete_batch(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, gpu, "B", 0, 100, 400, 0, 0); /* appended first, but later in time */
    b_exec(m, cpu, "A", 0, 0, 100, 0, 0);
    b_exec(m, cpu, "A", 1, 400, 600, 0, 0);
    pp_report *r = b_report(m, NULL);
    size_t n, ia, ib;
    b_find_stage(r, "A", &ia);
    b_find_stage(r, "B", &ib);
    EXPECT_EQ_U64(ia, 0); /* A appears first in time: upstream */
    EXPECT_EQ_U64(ib, 1);
    const pp_batch_stats *b = pp_report_batches(r, &n);
    EXPECT_EQ_U64(n, 2);
    EXPECT(b[0].complete);
    EXPECT_EQ_I64(b[0].cycle_ns, 300);
    EXPECT_EQ_U64(b[0].bottleneck, ib);
    EXPECT(!b[1].complete);
    EXPECT_EQ_I64(b[1].cycle_ns, 200);
    EXPECT_EQ_U64(b[1].bottleneck, ia);
    EXPECT_EQ_I64(b[0].e2e_ns, 400);
    const pp_cycle_stats *c = pp_report_cycles(r);
    EXPECT_EQ_U64(c->batches, 2);
    EXPECT_EQ_U64(c->complete, 1);
    EXPECT_EQ_I64(c->cycle.mean, 250);
    EXPECT_EQ_I64(c->cycle_complete.mean, 300);
    EXPECT_NEAR(c->throughput_bound, 1e9 / 250, 1e-6);
    EXPECT_NEAR(c->throughput_bound_complete, 1e9 / 300, 1e-6);
    EXPECT_NEAR(c->throughput_measured, 1e9 / 600, 1e-6); /* 1 complete in W = 600 ns */
    pp_report_free(r);
    pp_model_free(m);
}

/* Equal stage times: the bottleneck is the upstream stage. */
static void test_tie_goes_upstream(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, cpu, "A", 0, 0, 100, 0, 0);
    b_exec(m, gpu, "B", 0, 100, 200, 0, 0);
    pp_report *r = b_report(m, NULL);
    size_t n, ia;
    b_find_stage(r, "A", &ia);
    EXPECT_EQ_U64(pp_report_batches(r, &n)[0].bottleneck, ia);
    pp_report_free(r);
    pp_model_free(m);
}

/* Several execs of one (stage, batch) on one device: first start to last end;
 * a stage without execs is timed by its stage span. */
static void test_single_device_and_exec_less_stages(void) {
    pp_model *m = b_model();
    uint32_t host = b_thread(m, "prep"), gpu0 = b_device(m, "GPU", 0, 0);
    uint32_t gpu1 = b_device(m, "GPU", 1, 0);
    b_span(m, host, PP_ROLE_STAGE, "prep", "prep", 0, 0, 50, 0, 0);
    b_exec(m, gpu0, "cls", 0, 60, 100, 0, 0);
    b_exec(m, gpu1, "cls", 0, 80, 170, 0, 0);
    pp_report *r = b_report(m, NULL);
    const pp_stage_stats *prep = b_find_stage(r, "prep", NULL);
    const pp_stage_stats *cls = b_find_stage(r, "cls", NULL);
    EXPECT(prep->exec_less);
    EXPECT_EQ_I64(prep->time.max, 50);
    EXPECT(!cls->data_parallel);
    EXPECT_EQ_I64(cls->time.max, 110);
    size_t n;
    EXPECT_EQ_I64(pp_report_batches(r, &n)[0].cycle_ns, 110);
    pp_report_free(r);
    pp_model_free(m);
}

/* A host thread of process `pid`. */
static uint32_t thread_of_process(pp_model *m, const char *name, int64_t pid) {
    pp_track_info t;
    pp_track_info_init(&t);
    t.kind = PP_TRACK_KIND_THREAD;
    t.name = b_str(m, name);
    t.process = b_str(m, "host");
    t.pid = pid;
    uint32_t idx = 0;
    if (pp_model_add_track(m, &t, &idx) != PP_OK)
        abort();
    return idx;
}

/* Host work (stage spans without execs) of two processes is two devices,
 * named by pid; a stage span around device work stays a label. */
static void test_host_work_of_two_processes_is_two_devices(void) {
    pp_model *m = b_model();
    uint32_t a = thread_of_process(m, "prep", 11), b = thread_of_process(m, "post", 22);
    uint32_t c = thread_of_process(m, "cls", 11), gpu = b_device(m, "GPU", 0, 0);
    b_span(m, a, PP_ROLE_STAGE, "prep", "prep", 0, 0, 50, 0, 0);
    b_span(m, c, PP_ROLE_STAGE, "cls", "cls", 0, 55, 110, 0, 0);
    b_exec(m, gpu, "cls", 0, 60, 100, 0, 0);
    b_span(m, b, PP_ROLE_STAGE, "post", "post", 0, 120, 150, 0, 0);
    pp_report *r = b_report(m, NULL);
    EXPECT_EQ_U64(b_find_device(r, "CPU (host) pid 11")->execs, 1);
    EXPECT_EQ_U64(b_find_device(r, "CPU (host) pid 22")->execs, 1);
    size_t n;
    pp_report_devices(r, &n);
    EXPECT_EQ_U64(n, 3); /* the GPU and the two processes' host work */
    pp_report_free(r);
    pp_model_free(m);
}

/* Recorded data loss is the first finding, every kind of it named. */
static void test_data_loss_first(void) {
    pp_model *m = b_model();
    b_exec(m, b_device(m, "CPU", 0, 0), "A", 0, 0, 100, 0, 0);
    pp_model_meta_mut(m)->dropped_records = 12;
    pp_model_meta_mut(m)->truncated_bytes = 34;
    pp_model_meta_mut(m)->unmatched_ends = 5;
    pp_report *r = b_report(m, NULL);
    size_t n;
    const char *const *f = pp_report_findings(r, &n);
    EXPECT(n >= 2);
    EXPECT_STR(f[0], "Data loss: 12 records were dropped while recording, 34 bytes of the "
                     "input were truncated, 5 begin/end pairs of the input did not match; "
                     "every figure below may undercount.");
    EXPECT_EQ_U64(pp_report_meta(r)->unmatched_ends, 5);
    pp_report_free(r);
    pp_model_free(m);
}

/* A window that starts in the middle of batch 0 meets B's exec (160) before
 * A's next one (200); the stage order still follows the whole trace, where
 * A comes first. */
static void test_stage_order_from_the_whole_trace(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, cpu, "A", 0, 0, 100, 0, 0);
    b_exec(m, gpu, "B", 0, 160, 300, 0, 0);
    b_exec(m, cpu, "A", 1, 200, 300, 0, 0);
    b_exec(m, gpu, "B", 1, 300, 500, 0, 0);
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.has_from = 1, o.from_ns = 150;
    pp_report *r = b_report(m, &o);
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 2);
    EXPECT_STR(s[0].name, "A");
    EXPECT_STR(s[1].name, "B");
    pp_report_free(r);
    pp_model_free(m);
}

/* B (GPU, wall 500, hw 50 per batch) limits both cycles; B sat idle
 * 600..2600 waiting for A's second batch. Of B's exec wall 1000: compute
 * 100 (10%), penalty 900 (90%); the starvation, 2000, is not part of the
 * stage's time and is stated beside it against its total stage time 1000. */
static void test_bottleneck_starved_by_upstream(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, cpu, "A", 0, 0, 100, 100, 0);
    b_exec(m, gpu, "B", 0, 100, 600, 50, 0);
    b_exec(m, cpu, "A", 1, 2500, 2600, 100, 0);
    b_exec(m, gpu, "B", 1, 2600, 3100, 50, 0);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const char *const *f = pp_report_findings(r, &n);
    EXPECT(n >= 1);
    EXPECT_CONTAINS(f[0], "Bottleneck: stage \"B\" limits 2 of 2 cycles");
    EXPECT_CONTAINS(f[0], "10% is hardware compute, 0% data transfer and 90% concurrency penalty");
    /* B waits [600, 2600) for A's batch 1, which ends at 2600: starved 2 us,
     * 2x its total stage time; never blocked (it is the last stage) */
    const pp_stage_stats *st = pp_report_stages(r, &n);
    EXPECT_EQ_I64(st[1].starved_ns, 2000);
    EXPECT_EQ_I64(st[1].blocked_ns, 0);
    EXPECT_EQ_I64(st[0].starved_ns, 0); /* the first stage has no upstream */
    pp_report_free(r);
    pp_model_free(m);
}

/* Recorded shares: CPU got 0.25 of the work in 500 ns, NPU 0.75 in 1000 ns.
 * Rates 0.5 and 0.75 per us: the balanced split is 0.4 / 0.6. */
static void test_recorded_shares_give_the_split(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), npu = b_device(m, "NPU", 0, 0);
    size_t e_cpu = b_exec(m, cpu, "embed", 0, 0, 500, 0, 0);
    size_t e_npu = b_exec(m, npu, "embed", 0, 0, 1000, 0, 0);
    size_t ids[2] = {e_cpu, e_npu};
    double shares[2] = {0.25, 0.75};
    for (int i = 0; i < 2; i++) {
        pp_annotation a = {.event = ids[i], .key = b_str(m, "share"), .type = PP_VALUE_DOUBLE};
        a.v.d = shares[i];
        EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    }
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_dp_stats *dp = pp_report_dp(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_EQ_I64(dp->measured.n, 0); /* no partition/merge spans: not measured */
    for (size_t i = 0; i < dp->ndevices; i++) {
        int is_cpu = dp->devices[i].wall_ns == 500;
        EXPECT_NEAR(dp->devices[i].share, is_cpu ? 0.25 : 0.75, 1e-12);
        EXPECT_NEAR(dp->devices[i].suggested_share, is_cpu ? 0.4 : 0.6, 1e-12);
    }
    pp_report_free(r);
    pp_model_free(m);
}

/* Stage B (GPU, wall 500, hw 400 of which transfer 300) limits the cycle;
 * its exec wall 500 is compute 100 (20%), transfer 300 (60%) and penalty
 * 100 (20%). */
static void test_bottleneck_names_what_dominates(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, cpu, "A", 0, 0, 100, 90, 10);
    b_exec(m, gpu, "B", 0, 100, 600, 400, 300);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const char *const *f = pp_report_findings(r, &n);
    EXPECT(n >= 1);
    EXPECT_CONTAINS(f[0], "Bottleneck: stage \"B\" limits 1 of 1 cycles");
    EXPECT_CONTAINS(f[0], "20% is hardware compute, 60% data transfer and 20% concurrency penalty");
    pp_report_free(r);
    pp_model_free(m);
}

/* A stage seen only outside W is not in the report. */
static void test_stage_outside_window_dropped(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0);
    b_exec(m, cpu, "early", 0, 0, 100, 0, 0);
    b_exec(m, cpu, "late", 0, 200, 300, 0, 0);
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.has_from = 1, o.from_ns = 150;
    pp_report *r = b_report(m, &o);
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_STR(s[0].name, "late");
    pp_report_free(r);
    pp_model_free(m);
}

/* The report's throughput finding, or NULL. */
static const char *throughput_finding(const pp_report *r) {
    size_t n, k = 0;
    const char *const *f = pp_report_findings(r, &n);
    while (k < n && strncmp(f[k], "Throughput:", 11) != 0)
        k++;
    return k < n ? f[k] : NULL;
}

/* Two batches 1000 ns apart whose stages take 200 ns: A on the CPU [0, 100),
 * then B's partition on a host thread [100, 120) and its exec on the GPU
 * [120, 200). Cycle latency (100 ns) bounds 10M batches/s; 2 batches in a
 * 1200 ns window measure 1666666.67/s. The time outside every stage is the
 * 800 ns before batch 1's A (the partition closes the 20 ns between A and
 * B's exec): 400 ns a batch, 67% of the window, right before "A". Recorded
 * in either order of the batches (each track's intervals out of time order
 * in the second), the figures are the same. */
static void test_throughput_gap_is_time_outside_every_stage(void) {
    for (int reversed = 0; reversed < 2; reversed++) {
        pp_model *m = b_model();
        uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
        uint32_t main_thread = b_thread(m, "main");
        for (int64_t k = 0; k < 2; k++) {
            int64_t b = reversed ? 1 - k : k, t = 1000 * b;
            b_exec(m, cpu, "A", b, t, t + 100, 100, 0);
            b_span(m, main_thread, PP_ROLE_PARTITION, "partition", "B", b, t + 100, t + 120, 0,
                   0);
            b_exec(m, gpu, "B", b, t + 120, t + 200, 80, 0);
        }
        pp_report *r = b_report(m, NULL);
        const char *f = throughput_finding(r);
        EXPECT(f != NULL);
        if (f)
            EXPECT_STR(f, "Throughput: 1666666.67 batches/s were measured, 6.0x below the "
                          "10000000.00/s that cycle latency bounds: per batch, the stages take "
                          "180 ns in sum against a period of 600 ns, so 0.30 batches (95% "
                          "interval 0.30 .. 0.30) are in flight at once on average; 400 ns per "
                          "batch (67% of "
                          "the period) lies outside every stage, most of it right before stage "
                          "\"A\".");
        pp_report_free(r);
        pp_model_free(m);
    }
}

/* A gap ends where two stages start at once: the exec (B, on the GPU) is
 * read before the partition (A's, on a host thread) whatever their record
 * order, so the time before them counts as before "B". */
static void test_throughput_gap_tie_goes_to_the_exec(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 0);
    uint32_t main_thread = b_thread(m, "main");
    for (int64_t b = 0; b < 2; b++) {
        int64_t t = 1000 * b;
        b_span(m, main_thread, PP_ROLE_PARTITION, "partition", "A", b, t, t + 20, 0, 0);
        b_exec(m, cpu, "A", b, t + 20, t + 100, 80, 0);
        b_exec(m, gpu, "B", b, t, t + 50, 50, 0);
    }
    pp_report *r = b_report(m, NULL);
    const char *f = throughput_finding(r);
    EXPECT(f != NULL && strstr(f, "most of it right before stage \"B\".") != NULL);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_recorded_shares_give_the_split);
    RUN(test_bottleneck_names_what_dominates);
    RUN(test_stage_outside_window_dropped);
    RUN(test_data_parallel_stage);
    RUN(test_incomplete_batch);
    RUN(test_tie_goes_upstream);
    RUN(test_single_device_and_exec_less_stages);
    RUN(test_host_work_of_two_processes_is_two_devices);
    RUN(test_data_loss_first);
    RUN(test_stage_order_from_the_whole_trace);
    RUN(test_bottleneck_starved_by_upstream);
    RUN(test_throughput_gap_is_time_outside_every_stage);
    RUN(test_throughput_gap_tie_goes_to_the_exec);
    return pp_test_finish();
}
