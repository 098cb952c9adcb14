/* --batch-pattern on a Kineto-shaped trace (tests/analyze/data/
 * kineto_batches.json): kernels get stage and batch from the annotation
 * around their host-side launch (linked by args.correlation), else from a
 * GPU-side annotation on the same stream. Times in the fixture are
 * microseconds after 1700000000000000 us. */
#include "builder.h"
#include "pipeprof/io.h"

#define PATTERN "^([a-z]+)/batch([0-9]+)$"

static pp_report *fixture_report(const char *pattern, pp_model **m) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/analyze/data/kineto_batches.json",
             getenv("PP_SOURCE_DIR") ? getenv("PP_SOURCE_DIR") : ".");
    pp_error err = {{0}};
    if (pp_trace_read(path, m, &err) != PP_OK) {
        pp_test_fail(__FILE__, __LINE__, "cannot read %s: %s", path, err.msg);
        exit(1);
    }
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = pattern;
    return b_report(*m, &o);
}

static int64_t time_of(const pp_report *r, const char *stage, int64_t batch) {
    size_t n, ns;
    const pp_stage_time *t = pp_report_stage_times(r, &n);
    const pp_stage_stats *s = pp_report_stages(r, &ns);
    for (size_t i = 0; i < n; i++)
        if (t[i].batch == batch && strcmp(s[t[i].stage].name, stage) == 0)
            return t[i].time_ns;
    return -1;
}

/* embed/batch0 encloses the launches of a 50 us kernel (1030..1080) and a
 * 10 us memcpy (1080..1090): stage time 60 us. The enclosing run/batch99 and
 * ProfilerStep#3 are not the innermost match, so they label nothing. */
static void test_launch_annotation_labels_kernels(void) {
    pp_model *m = NULL;
    pp_report *r = fixture_report(PATTERN, &m);
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 2);
    EXPECT_STR(s[0].name, "embed");
    EXPECT_STR(s[1].name, "cls");
    EXPECT_EQ_I64(time_of(r, "embed", 0), 60000);
    EXPECT_EQ_I64(time_of(r, "cls", 0), 100000);
    EXPECT_EQ_I64(time_of(r, "embed", 1), 40000);
    EXPECT_EQ_I64(time_of(r, "cls", 1), 30000);
    EXPECT_EQ_I64(s[0].xfer_ns, 10000);
    EXPECT_EQ_I64(s[0].hw_ns, 50000 + 10000 + 40000 + 60000);
    pp_report_free(r);
    pp_model_free(m);
}

/* The kernel with correlation 6 has no host launch: the GPU-side
 * embed/batch2 annotation on its stream (1800..1900) labels it; batch 2 has
 * no cls stage, so it is incomplete. The kernel at 1950 stays unlabeled. */
static void test_gpu_side_fallback_and_incomplete(void) {
    pp_model *m = NULL;
    pp_report *r = fixture_report(PATTERN, &m);
    EXPECT_EQ_I64(time_of(r, "embed", 2), 60000);
    size_t n;
    const pp_batch_stats *b = pp_report_batches(r, &n);
    EXPECT_EQ_U64(n, 3);
    EXPECT(b[0].complete);
    EXPECT_EQ_I64(b[0].cycle_ns, 100000);
    EXPECT(!b[2].complete);
    EXPECT_EQ_U64(pp_report_cycles(r)->complete, 2);
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_U64(s[0].execs + s[1].execs, 6); /* of 7 execs; one unlabeled */
    pp_report_free(r);
    pp_model_free(m);
}

/* Without a pattern the kernels have no stages: device figures only. */
static void test_without_pattern_no_stages(void) {
    pp_model *m = NULL;
    pp_report *r = fixture_report(NULL, &m);
    size_t n;
    pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 0);
    EXPECT_EQ_U64(b_find_device(r, "GPU 0")->execs, 7);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_launch_annotation_labels_kernels);
    RUN(test_gpu_side_fallback_and_incomplete);
    RUN(test_without_pattern_no_stages);
    return pp_test_finish();
}
