/* PyTorch-profiler (Kineto) conventions on hand-built traces, for what a CPU
 * trace cannot show (tests/analyze/data):
 *
 * kineto_dp_streams.json, two batches 400 us apart (times below are us
 * after 1700000000000000 for batch 0): host thread 4242 runs
 * ProfilerStep#0 1000..1400 around Stage1_GraphPrep 1000..1100 (host work,
 * no kernels), Partition 1100..1110, Stage2_Embedding 1110..1130 (launches
 * a memcpy and a kernel on stream 7 and on stream 8), Merge 1300..1320,
 * Stage3_Classifier 1320..1330 (a kernel on stream 7). GPU 0 (pid 0,
 * process_name "python3", process_labels "GPU 0"): stream 7 memcpy
 * 1120..1130, kernel 1130..1230, kernel 1330..1380; stream 8 memcpy
 * 1125..1135, kernel 1135..1285. Also the profiler's bookkeeping: its
 * "Trace" span (pid "Spans"), an iteration mark (pid "Traces") and a CUPTI
 * overhead event (pid -1). Thread names end in a space.
 *
 * kineto_two_gpus.json: two batches 300 us apart; Stage1_Embedding/batchN
 * launches a 120 us kernel on GPU 0 (pid 0), Stage2_Classifier/batchN a
 * 60 us kernel on GPU 1 (pid 1); both GPU processes are named "python3". */
#include "builder.h"
#include "pipeprof/io.h"

#define US 1000
#define STEP "^ProfilerStep#(?<batch>[0-9]+)$"
#define STAGE "^(?<stage>Stage[0-9]_[A-Za-z]+)$"

static pp_report *report_of(const char *file, pp_analyze_options *o, pp_model **m) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/analyze/data/%s",
             getenv("PP_SOURCE_DIR") ? getenv("PP_SOURCE_DIR") : ".", file);
    pp_error err = {{0}};
    if (pp_trace_read(path, m, &err) != PP_OK) {
        pp_test_fail(__FILE__, __LINE__, "cannot read %s: %s", path, err.msg);
        exit(1);
    }
    return b_report(*m, o);
}

static const pp_stage_time *time_of(const pp_report *r, const char *stage, int64_t batch) {
    size_t n, ns;
    const pp_stage_time *t = pp_report_stage_times(r, &n);
    const pp_stage_stats *s = pp_report_stages(r, &ns);
    for (size_t i = 0; i < n; i++)
        if (t[i].batch == batch && strcmp(s[t[i].stage].name, stage) == 0)
            return &t[i];
    pp_test_fail(__FILE__, __LINE__, "no time of %s batch %lld", stage, (long long)batch);
    exit(1);
}

/* The batch comes from the enclosing ProfilerStep, the stages from the
 * annotations; Partition and Merge bracket Embedding, whose kernels run on
 * two streams of one GPU: data parallel over the streams, 10 + max(110,
 * 160) + 20 = 190 us, measured 1100..1320 = 220. GraphPrep launches
 * nothing: host work, 100 us. Classifier: its kernel, 50 us. */
static void test_data_parallel_over_two_streams(void) {
    pp_model *m = NULL;
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = STEP;
    o.stage_pattern = STAGE;
    pp_report *r = report_of("kineto_dp_streams.json", &o, &m);
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 3);
    EXPECT_STR(s[0].name, "Stage1_GraphPrep");
    EXPECT(s[0].exec_less && !s[0].data_parallel);
    EXPECT(s[1].data_parallel);
    EXPECT(!s[2].exec_less && !s[2].data_parallel);
    for (int64_t b = 0; b < 2; b++) {
        EXPECT_EQ_I64(time_of(r, "Stage1_GraphPrep", b)->time_ns, 100 * US);
        EXPECT_EQ_I64(time_of(r, "Stage2_Embedding", b)->time_ns, (10 + 160 + 20) * US);
        EXPECT_EQ_I64(time_of(r, "Stage2_Embedding", b)->measured_ns, 220 * US);
        EXPECT_EQ_I64(time_of(r, "Stage3_Classifier", b)->time_ns, 50 * US);
    }
    EXPECT_EQ_U64(s[1].bottleneck_count, 2);
    const pp_dp_stats *dp = pp_report_dp(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_EQ_U64(dp->ndevices, 2);
    size_t nt;
    const pp_track_stats *t = pp_report_tracks(r, &nt);
    EXPECT_STR(t[dp->devices[0].track].name, "GPU 0/stream 7");
    EXPECT_STR(t[dp->devices[1].track].name, "GPU 0/stream 8");
    EXPECT_EQ_I64(dp->devices[0].wall_ns, 2 * 110 * US);
    EXPECT_EQ_I64(dp->devices[1].wall_ns, 2 * 160 * US);
    EXPECT_EQ_I64(dp->partition.mean, 10 * US);
    EXPECT_EQ_I64(dp->merge.mean, 20 * US);
    /* end to end: the step around everything of the batch */
    const pp_batch_stats *b = pp_report_batches(r, &n);
    EXPECT_EQ_U64(n, 2);
    EXPECT_EQ_I64(b[0].e2e_ns, 400 * US);
    EXPECT_EQ_I64(b[1].e2e_ns, 400 * US);
    pp_report_free(r);
    pp_model_free(m);
}

/* Without partition and merge around them, two streams of one device are
 * that device's work (a copy stream beside a compute stream): Embedding is
 * first start to last end, 1120..1285 = 165 us. */
static void test_streams_without_brackets_are_one_device(void) {
    pp_model *m = NULL;
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = STEP;
    o.stage_pattern = STAGE;
    o.partition_pattern = "^NoSuchSpan";
    o.merge_pattern = "^NoSuchSpan";
    pp_report *r = report_of("kineto_dp_streams.json", &o, &m);
    EXPECT_EQ_I64(time_of(r, "Stage2_Embedding", 0)->time_ns, 165 * US);
    size_t n;
    pp_report_dp(r, &n);
    EXPECT_EQ_U64(n, 0);
    pp_report_free(r);
    pp_model_free(m);
}

/* The device is the pid, named by process_labels when the process is
 * called "python3"; the profiler's bookkeeping makes no row; names lose
 * PyTorch's trailing spaces; hw = wall is flagged as such. */
static void test_devices_names_and_bookkeeping(void) {
    pp_model *m = NULL;
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = STEP;
    o.stage_pattern = STAGE;
    pp_report *r = report_of("kineto_dp_streams.json", &o, &m);
    /* the bookkeeping is kept (a conversion writes it back) but marks no
     * bound of W: W ends at the program's last end, not at "Record Window
     * End" 28 ms on nor at the end of the profiler's own span */
    EXPECT_EQ_U64(pp_model_meta_get(m)->ignored_events, 0);
    static const char *const bookkeeping[] = {"PyTorch Profiler (0)", "Iteration Start: PyTorch Profiler",
                                              "Instrumentation", "Record Window End"};
    int64_t first = INT64_MAX, last = INT64_MIN;
    int nbook = 0;
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        const char *name = pp_model_string(m, e.name);
        int book = 0;
        for (size_t k = 0; k < 4; k++)
            book |= strcmp(name, bookkeeping[k]) == 0;
        nbook += book;
        EXPECT_EQ_I64(!!(pp_model_track(m, e.track)->flags & PP_TRACK_BOOKKEEPING), book);
        if (!book) {
            first = e.ts_ns < first ? e.ts_ns : first;
            last = e.ts_ns + e.dur_ns > last ? e.ts_ns + e.dur_ns : last;
        }
    }
    EXPECT_EQ_I64(nbook, 4);
    EXPECT_EQ_I64(pp_report_window(r)->start_ns, first);
    EXPECT_EQ_I64(pp_report_window(r)->end_ns, last);
    size_t n;
    const pp_device_stats *d = pp_report_devices(r, &n);
    EXPECT_EQ_U64(n, 2);
    const pp_device_stats *gpu = b_find_device(r, "GPU 0");
    EXPECT_EQ_I64(gpu->busy_ns, 2 * (165 + 50) * US);
    EXPECT(gpu->hw_quality & PP_HW_IS_WALL);
    EXPECT(b_find_device(r, "CPU (host)")->hw_quality & PP_HW_HOST);
    for (size_t i = 0; i < n; i++)
        EXPECT(strcmp(d[i].name, "python3") != 0);
    const pp_track_stats *t = pp_report_tracks(r, &n);
    int host_track = 0;
    for (size_t i = 0; i < n; i++) {
        host_track |= strcmp(t[i].name, "CPU (host)/thread 4242 (python3)") == 0;
        EXPECT(strstr(t[i].name, "pid -1") == NULL && strstr(t[i].name, "Spans") == NULL);
        EXPECT(t[i].name[strlen(t[i].name) - 1] != ' ');
    }
    EXPECT(host_track);
    size_t nf;
    const char *const *f = pp_report_findings(r, &nf);
    int flagged = 0;
    for (size_t i = 0; i < nf; i++)
        flagged |= strstr(f[i], "Hardware time on GPU 0 is each exec's own duration") != NULL;
    EXPECT(flagged);
    pp_report_free(r);
    pp_model_free(m);
}

/* Two GPUs in pids 0 and 1, both processes named "python3": two devices,
 * each busy with its own kernels only (240 and 120 us), not their union. */
static void test_two_gpus_are_two_devices(void) {
    pp_model *m = NULL;
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = "^(?<stage>Stage[0-9]_[A-Za-z]+)/batch(?<batch>[0-9]+)$";
    pp_report *r = report_of("kineto_two_gpus.json", &o, &m);
    size_t n;
    pp_report_devices(r, &n);
    EXPECT_EQ_U64(n, 2);
    EXPECT_EQ_I64(b_find_device(r, "GPU 0")->busy_ns, 2 * 120 * US);
    EXPECT_EQ_I64(b_find_device(r, "GPU 1")->busy_ns, 2 * 60 * US);
    EXPECT_EQ_I64(time_of(r, "Stage1_Embedding", 1)->time_ns, 120 * US);
    EXPECT_EQ_I64(time_of(r, "Stage2_Classifier", 1)->time_ns, 60 * US);
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT(!s[0].data_parallel && !s[1].data_parallel);
    pp_report_free(r);
    pp_model_free(m);
}

/* With no pattern, a finding says that nothing is labeled and shows the
 * pattern that would label the annotations. */
static void test_hint_without_a_pattern(void) {
    pp_model *m = NULL;
    pp_report *r = report_of("kineto_two_gpus.json", NULL, &m);
    size_t n;
    const char *const *f = pp_report_findings(r, &n);
    int hinted = 0;
    for (size_t i = 0; i < n; i++)
        hinted |= strstr(f[i], "Unlabeled: 4 of 4 execs have no stage or batch") &&
                  strstr(f[i], "--batch-pattern '^(?<stage>.+)/batch(?<batch>[0-9]+)$'");
    EXPECT(hinted);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_data_parallel_over_two_streams);
    RUN(test_streams_without_brackets_are_one_device);
    RUN(test_devices_names_and_bookkeeping);
    RUN(test_two_gpus_are_two_devices);
    RUN(test_hint_without_a_pattern);
    return pp_test_finish();
}
