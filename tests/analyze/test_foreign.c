/* A PyTorch-profiler (Kineto) trace, tests/analyze/data/kineto_pipeline.json,
 * read with pp_trace_read and analyzed with --batch-pattern: GPU kernels,
 * memcpys and memsets are execs on their stream tracks (hw = dur, memcpy and
 * memset are transfer), labeled by the annotation around their host-side
 * launch (linked by args.correlation), else by a GPU-side annotation on
 * their stream. Times below are microseconds after 1700000000000000 us:
 *
 *   host 4242  Stage0_Outer/batch99 990..1120 around
 *              Stage1_Embedding/batch0 1000..1100: launches of corr 1, 2, 3
 *              Stage1_Embedding/batch1 1150..1250: launch of corr 5
 *   host 4243  Stage2_Classifier/batch0 1100..1250: launch of corr 4
 *              Stage2_Classifier/batch1 1260..1400: launch of corr 6
 *   stream 7   gemm 1020..1070 (1), memcpy 1070..1080 (2), gemm 1160..1200
 *              (5), gemm 1410..1470 (7, no launch; inside the GPU-side
 *              annotation Stage1_Embedding/batch2 1400..1500), kernel
 *              1600..1610 (8, no launch, no annotation)
 *   stream 13  memset 1055..1060 (3), softmax 1110..1200 (4), softmax
 *              1270..1300 (6) */
#include "builder.h"
#include "pipeprof/io.h"

#define PATTERN "^(Stage[0-9]+_[A-Za-z]+)/batch([0-9]+)$"
#define US 1000

static pp_report *fixture_report(const char *pattern, pp_model **m) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/analyze/data/kineto_pipeline.json",
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

/* The innermost matching annotation around each launch labels the kernel:
 * Stage0_Outer encloses Stage1_Embedding/batch0 and labels no kernel. With
 * no exec of its own it is host work (a stage of batch 99, timed by its
 * span). The two streams are one device: a stage's time is its first start
 * to last end. */
static void test_launch_annotation_labels_kernels(void) {
    pp_model *m = NULL;
    pp_report *r = fixture_report(PATTERN, &m);
    size_t n;
    const pp_stage_stats *all = pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 3);
    EXPECT_STR(all[0].name, "Stage0_Outer");
    EXPECT(all[0].exec_less);
    EXPECT_EQ_I64(time_of(r, "Stage0_Outer", 99), 130 * US);
    const pp_stage_stats *s = all + 1;
    EXPECT_STR(s[0].name, "Stage1_Embedding");
    EXPECT_STR(s[1].name, "Stage2_Classifier");
    EXPECT_EQ_I64(time_of(r, "Stage1_Embedding", 0), (1080 - 1020) * US);
    EXPECT_EQ_I64(time_of(r, "Stage1_Embedding", 1), 40 * US);
    EXPECT_EQ_I64(time_of(r, "Stage2_Classifier", 0), 90 * US);
    EXPECT_EQ_I64(time_of(r, "Stage2_Classifier", 1), 30 * US);
    /* memcpy 10 + memset 5 are transfer; hw = dur for every exec */
    EXPECT_EQ_I64(s[0].xfer_ns, 15 * US);
    EXPECT_EQ_I64(s[0].hw_ns, (50 + 10 + 5 + 40 + 60) * US);
    EXPECT_EQ_I64(s[0].penalty.total, 0);
    pp_report_free(r);
    pp_model_free(m);
}

/* Kernel 7 has no launch: the GPU-side annotation on its stream labels it,
 * so batch 2 has Stage1 only. Cycles: batch 0 max(60, 90) by Stage2, batch
 * 1 max(40, 30) by Stage1, batch 2 60, batch 99 130 (Stage0_Outer alone);
 * every batch lacks a stage another has, so none is complete. */
static void test_gpu_side_fallback_and_cycles(void) {
    pp_model *m = NULL;
    pp_report *r = fixture_report(PATTERN, &m);
    EXPECT_EQ_I64(time_of(r, "Stage1_Embedding", 2), 60 * US);
    size_t n;
    const pp_batch_stats *b = pp_report_batches(r, &n);
    EXPECT_EQ_U64(n, 4);
    EXPECT_EQ_I64(b[0].cycle_ns, 90 * US);
    EXPECT_EQ_U64(b[0].bottleneck, 2);
    EXPECT_EQ_I64(b[1].cycle_ns, 40 * US);
    EXPECT_EQ_U64(b[1].bottleneck, 1);
    EXPECT(!b[2].complete);
    EXPECT_EQ_I64(b[3].batch, 99);
    /* end-to-end: first start .. last end of all the batch's events, the
     * host annotations included: batch 0 from Stage1_Embedding/batch0 at
     * 1000 to the end of Stage2_Classifier/batch0 at 1250 */
    EXPECT_EQ_I64(b[0].e2e_ns, (1250 - 1000) * US);
    EXPECT_EQ_I64(b[1].e2e_ns, (1400 - 1150) * US);
    const pp_cycle_stats *c = pp_report_cycles(r);
    EXPECT_EQ_U64(c->complete, 0);
    EXPECT_EQ_I64(c->cycle.total, (90 + 40 + 60 + 130) * US);
    const pp_stage_stats *s = pp_report_stages(r, &n);
    EXPECT_EQ_U64(s[1].execs + s[2].execs, 7); /* of 8: kernel 8 stays unlabeled */
    pp_report_free(r);
    pp_model_free(m);
}

/* Overlapping streams count once: busy = [1020,1080) + [1110,1200) +
 * [1270,1300) + [1410,1470) + [1600,1610) = 250 us of W = 990..1610;
 * bubbles 30, 70, 110, 130; leading 30 (W starts at Stage0_Outer). */
static void test_device_figures_of_a_foreign_trace(void) {
    pp_model *m = NULL;
    pp_report *r = fixture_report(NULL, &m);
    const pp_device_stats *d = b_find_device(r, "GPU 0");
    EXPECT_EQ_U64(d->execs, 8);
    EXPECT_EQ_U64(d->tracks, 2);
    EXPECT_EQ_I64(pp_report_window(r)->end_ns - pp_report_window(r)->start_ns, 620 * US);
    EXPECT_EQ_I64(d->busy_ns, 250 * US);
    EXPECT_EQ_U64(d->bubbles.count, 4);
    EXPECT_EQ_I64(d->bubbles.total, 340 * US);
    EXPECT_EQ_I64(d->bubbles.max, 130 * US);
    EXPECT_EQ_I64(d->bubbles.leading_ns, 30 * US);
    EXPECT_EQ_I64(d->bubbles.trailing_ns, 0);
    EXPECT_NEAR(d->hw_eff, 1.0, 1e-12);
    EXPECT_NEAR(d->transfer_share, 15.0 / 295.0, 1e-12);
    size_t n;
    pp_report_stages(r, &n);
    EXPECT_EQ_U64(n, 0); /* without a pattern, kernels have no stages */
    pp_report_free(r);
    pp_model_free(m);
}

/* Stage1 limits batches 1 and 2 of the 4; a Kineto trace's hardware time
 * is the kernel's duration, which the finding says instead of a split of
 * wall into hardware and penalty; transfer is 15 of its 165 us (9%). */
static void test_bottleneck_of_a_foreign_trace(void) {
    pp_model *m = NULL;
    pp_report *r = fixture_report(PATTERN, &m);
    size_t n;
    const char *const *f = pp_report_findings(r, &n);
    EXPECT(n >= 1);
    EXPECT_CONTAINS(f[0], "stage \"Stage1_Embedding\" limits 2 of 4 cycles");
    EXPECT_CONTAINS(f[0], "wall = hardware time by construction (9% of it data transfer)");
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_launch_annotation_labels_kernels);
    RUN(test_gpu_side_fallback_and_cycles);
    RUN(test_device_figures_of_a_foreign_trace);
    RUN(test_bottleneck_of_a_foreign_trace);
    return pp_test_finish();
}
