/* pp_report_build_owned gives the same report as pp_report_build: the steps
 * that read annotations run before the stage step, which then has only the
 * shares, and the model is freed whatever the result (the ASan suite's leak
 * check sees a model left behind). */
#include <stdio.h>
#include <stdlib.h>

#include "builder.h"
#include "pipeprof/io.h"

static char *report_json(const pp_report *r) {
    char *json = NULL;
    EXPECT_EQ_I64(pp_report_json(r, &json, NULL), PP_OK);
    return json;
}

/* Both builds of a model `make` makes, their results and JSON compared; the
 * owned report has no per-exec parts to give, the other has them where
 * execs are decomposed. */
static void expect_same_report(pp_model *(*make)(void), const pp_analyze_options *o) {
    pp_model *kept = make(), *given = make();
    pp_report *r = NULL, *owned = NULL;
    pp_error err = {{0}}, err_owned = {{0}};
    int rc = pp_report_build(kept, o, &r, &err);
    EXPECT_EQ_I64(pp_report_build_owned(given, o, &owned, &err_owned), rc);
    EXPECT_STR(err_owned.msg, err.msg); /* a trace it cannot analyze fails alike */
    if (r && owned) {
        char *a = report_json(r), *b = report_json(owned);
        EXPECT(a && b && strcmp(a, b) == 0);
        pp_report_json_free(a);
        pp_report_json_free(b);
        size_t n = 0, n_owned = 1;
        pp_report_exec_parts(r, &n);
        EXPECT(pp_report_exec_parts(owned, &n_owned) == NULL);
        EXPECT_EQ_U64(n_owned, 0);
        size_t nd;
        pp_report_decomposition(r, &nd);
        EXPECT(nd == 0 || n > 0); /* the model kept still gives the parts */
    }
    pp_report_free(r);
    pp_report_free(owned);
    pp_model_free(kept);
}

static void annotate(pp_model *m, size_t event, const char *key, pp_value_type type, int64_t i,
                     double d) {
    pp_annotation a = {.event = event, .key = b_str(m, key), .type = (uint8_t)type};
    if (type == PP_VALUE_DOUBLE)
        a.v.d = d;
    else if (type == PP_VALUE_STR)
        a.v.s = b_str(m, "MatMul");
    else
        a.v.i = i;
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
}

/* Every kind of annotation the analysis reads: the shares of a
 * data-parallel stage, bytes, an op's type and CPU time, an exec's submit,
 * queue and completion split, and a device's clock alignment, over 40
 * batches. */
static pp_model *annotated_pipeline(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), npu = b_device(m, "NPU", 0, 1);
    uint32_t gpu = b_device(m, "GPU", 0, 0), host = b_thread(m, "main");
    b_clock_mark(m, gpu, 0, "cl profiling offset", 96); /* the report keeps the method's text */
    for (int64_t b = 0; b < 40; b++) {
        int64_t t = 1000 * b;
        b_span(m, host, PP_ROLE_PARTITION, "partition", "embed", b, t, t + 20, 0, 0);
        size_t x = b_exec(m, cpu, "embed", b, t + 20, t + 300, 250, 10);
        annotate(m, x, "share", PP_VALUE_DOUBLE, 0, 0.4);
        annotate(m, x, "bytes_in", PP_VALUE_INT, 4096 + b, 0);
        x = b_exec(m, npu, "embed", b, t + 20, t + 260 + b % 7, 200, 0);
        annotate(m, x, "share", PP_VALUE_DOUBLE, 0, 0.6);
        annotate(m, x, "bytes_out", PP_VALUE_INT, 1024, 0);
        b_span(m, host, PP_ROLE_MERGE, "merge", "embed", b, t + 300, t + 330, 0, 0);
        x = b_exec(m, gpu, "cls", b, t + 400, t + 900 - b % 5, 400, 40);
        annotate(m, x, "submit_ns", PP_VALUE_INT, 30, 0);
        annotate(m, x, "queue_ns", PP_VALUE_INT, 20, 0);
        annotate(m, x, "completion_ns", PP_VALUE_INT, 10, 0);
        x = b_span(m, gpu, PP_ROLE_OP, "matmul", "cls", b, t + 410, t + 600, 0, 0);
        annotate(m, x, "type", PP_VALUE_STR, 0, 0);
        annotate(m, x, "cpu_ns", PP_VALUE_INT, 150 + b, 0);
    }
    return m;
}

static void test_annotated_pipeline_reports_alike(void) {
    expect_same_report(annotated_pipeline, NULL);
}

static const char *data_file;

static pp_model *read_data_file(void) {
    char path[1024];
    const char *root = getenv("PP_SOURCE_DIR") ? getenv("PP_SOURCE_DIR") : ".";
    snprintf(path, sizeof path, "%s/tests/%s", root, data_file);
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_trace_read(path, &m, &err), PP_OK);
    return m;
}

/* The test traces of foreign and recorded pipelines, the Kineto one also
 * labeled by patterns (its correlation ids are annotations). */
static void test_test_traces_report_alike(void) {
    const char *files[] = {"analyze/data/kineto_dp_streams.json",
                           "analyze/data/kineto_pipeline.json", "analyze/data/kineto_two_gpus.json",
                           "analyze/data/pipeline_small.json", "io/data/full_v2.pptrace"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        data_file = files[i];
        expect_same_report(read_data_file, NULL);
    }
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = "^ProfilerStep#(?<batch>[0-9]+)$";
    o.stage_pattern = "^(?<stage>Stage[0-9]+_[A-Za-z]+)$";
    data_file = "analyze/data/kineto_pipeline.json";
    expect_same_report(read_data_file, &o);
}

/* A build that fails still frees the model it was given. */
static void test_failed_build_frees_the_model(void) {
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.region = "no such region";
    pp_report *r = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_report_build_owned(annotated_pipeline(), &o, &r, &err), PP_ENOTFOUND);
    EXPECT(r == NULL);
    EXPECT_CONTAINS(err.msg, "no such region");
}

int main(void) {
    RUN(test_annotated_pipeline_reports_alike);
    RUN(test_test_traces_report_alike);
    RUN(test_failed_build_frees_the_model);
    return pp_test_finish();
}
