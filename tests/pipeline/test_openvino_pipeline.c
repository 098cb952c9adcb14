/* Pipelines on openvino devices: a pipeline file names an IR model file
 * (relative to the file) for an openvino stage and records, at level 2,
 * exec spans with hardware times and one op span per executed layer; the
 * session's level reaches the backend (no PERF_COUNT at level 0); a
 * model_path on a stage that cannot run it is refused naming the key. */
#include <stdlib.h>

#include "pipeprof/pipeline.h"
#include "testutil.h"

#ifndef PP_HAVE_OPENVINO
int main(void) {
    pp_test_skip("built without OpenVINO (configure with -DPIPEPROF_PYTHON=<venv with the "
                 "openvino wheel> or -DOpenVINO_DIR=...)");
}
#else
#include "device/openvino/ov_internal.h"
#include "recorded.h"

/* An IR pair in the test folder: a 2-layer matmul of 64 -> 32 with dynamic
 * rows, the dummy model a stage of the pipeline below would build. Returns
 * the .xml's name in the folder, as the pipeline file names it. */
static const char *write_model(const char *xml_name, const char *bin_name) {
    pp_workload w;
    pp_workload_init(&w);
    w.in_dim = 64, w.out_dim = 32, w.layers = 2;
    pp_ov_ir ir;
    EXPECT_EQ_I64(pp_ov_ir_build(&w, 1, &ir, NULL), PP_OK);
    EXPECT_EQ_I64(pp_test_write_file(pp_test_path(bin_name), ir.bin, ir.bin_len), 0);
    const char *xml = pp_test_path(xml_name);
    EXPECT_EQ_I64(pp_test_write_file(xml, ir.xml, ir.xml_len), 0);
    pp_ov_ir_free(&ir);
    return strrchr(xml, '/') + 1;
}

/* Writes the pipeline file (json: a format with one %s, the model's name)
 * beside the models and loads it. */
static pp_pipeline *load(const char *format, const char *model, pp_error *err) {
    char path[4096], json[2048];
    snprintf(json, sizeof json, format, model);
    snprintf(path, sizeof path, "%s", pp_test_path("ov_pipeline.json"));
    EXPECT_EQ_I64(pp_test_write_file(path, json, strlen(json)), 0);
    pp_pipeline *p = NULL;
    pp_pipeline_load(path, &p, err);
    return p;
}

static void test_model_file_stage_records_execs_and_ops(void) {
    const char *model = write_model("embed.xml", "embed.bin");
    pp_error err = {{0}};
    pp_pipeline *p = load("{\"nodes\": 256, \"features\": 64, \"batches\": 4, \"warmup\": 1,"
                          " \"stages\": ["
                          "{\"name\": \"Prep\", \"device\": \"openvino:CPU\", \"model\": \"sage\","
                          " \"out_dim\": 64},"
                          "{\"name\": \"Embed\", \"devices\": [\"openvino:CPU\", \"openvino:AUTO:CPU\"],"
                          " \"model_path\": \"%s\", \"out_dim\": 32}]}", model, &err);
    EXPECT(p != NULL);
    if (!p) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    scfg.level = 2;
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&scfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_pipeline_result res;
    EXPECT_EQ_I64(pp_pipeline_run(p, s, NULL, &res, &err), PP_OK);
    EXPECT_EQ_I64(res.batches, 4);
    pp_model *m = recorded_model(s);
    /* 5 batches (1 warm-up) on each stage's openvino:CPU request */
    for (const char *const *stage = (const char *const[]){"Prep", "Embed", NULL}; *stage; stage++) {
        int ov_execs = 0, ops = 0;
        for (size_t i = 0; i < pp_model_event_count(m); i++) {
            pp_event e;
            pp_model_event(m, i, &e);
            const pp_track_info *t = pp_model_track(m, e.track);
            if (e.kind != PP_EV_SPAN || strcmp(event_text(m, e.stage), *stage) != 0 ||
                strcmp(event_text(m, t->device), "openvino:CPU") != 0)
                continue;
            if (e.role == PP_ROLE_EXEC) {
                ov_execs++;
                EXPECT(e.hw_ns > 0 && e.xfer_ns <= e.hw_ns);
            }
            ops += e.role == PP_ROLE_OP;
        }
        EXPECT_EQ_I64(ov_execs, 5);
        EXPECT(ops >= 5); /* at least one executed layer per exec */
    }
    pp_model_free(m);
    pp_session_close(s);
    pp_pipeline_free(p);
}

/* Level 0 is wall times only, so the executor's model has no PERF_COUNT. */
static void test_session_level_reaches_the_backend(void) {
    pp_device *d = NULL;
    EXPECT_EQ_I64(pp_device_open("openvino:CPU", NULL, &d, NULL), PP_OK);
    for (int level = 0; level <= 1; level++) {
        pp_session_config scfg;
        pp_session_config_init(&scfg);
        scfg.level = level;
        pp_session *s = NULL;
        EXPECT_EQ_I64(pp_session_open(&scfg, &s), PP_OK);
        pp_executor_config ec = {.device = d, .requests = 1};
        pp_workload_init(&ec.workload);
        pp_executor *ex = NULL;
        EXPECT_EQ_I64(pp_executor_create(s, &ec, &ex, NULL), PP_OK);
        char value[16] = "";
        EXPECT_EQ_I64(pp_ov_compiled_property(pp_executor_compiled(ex), "PERF_COUNT", value,
                                              sizeof value, NULL), PP_OK);
        EXPECT_STR(value, level ? "YES" : "NO");
        pp_executor_free(ex);
        pp_session_close(s);
    }
    pp_device_close(d);
}

static void expect_load_error(const char *format, const char *model, const char *message) {
    pp_error err = {{0}};
    pp_pipeline *p = load(format, model, &err);
    EXPECT(p == NULL);
    EXPECT_CONTAINS(err.msg, message);
    pp_pipeline_free(p);
}

static void test_bad_model_paths_name_the_key(void) {
    const char *model = write_model("m.xml", "m.bin");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"devices\": [\"openvino:CPU\", \"cpu\"],"
                      " \"model_path\": \"%s\", \"out_dim\": 32}]}", model,
                      "ov_pipeline.json: stages[0].model_path: devices[1] \"cpu\" runs the dummy "
                      "models only (model files run on openvino devices)");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"device\": \"openvino\","
                      " \"model_path\": \"gone.xml\", \"out_dim\": 32}]}", NULL,
                      "gone.xml: No such file or directory");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"device\": \"openvino\","
                      " \"model_path\": 3, \"out_dim\": 32}]}", NULL,
                      "ov_pipeline.json: stages[0].model_path: expected a string");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"device\": \"openvino:NPU7\","
                      " \"out_dim\": 32}]}", NULL,
                      "stages[0].devices[0]: openvino: device \"NPU7\" not found (available: ");
}

/* The file loads (its shape is checked at compile time), and a run with
 * the wrong feature count fails naming both shapes. */
static void test_shape_mismatch_names_the_shapes(void) {
    const char *model = write_model("m.xml", "m.bin");
    pp_error err = {{0}};
    pp_pipeline *p = load("{\"features\": 48, \"batches\": 1, \"warmup\": 0, \"stages\": ["
                          "{\"name\": \"A\", \"device\": \"openvino\", \"model_path\": \"%s\","
                          " \"out_dim\": 32}]}", model, &err);
    EXPECT(p != NULL);
    if (!p) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    EXPECT_EQ_I64(pp_pipeline_run(p, NULL, NULL, NULL, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, model);
    EXPECT_CONTAINS(err.msg, ": input shape [?,64] does not fit the stage's [1024,48] "
                             "(nodes x in_dim)");
    pp_pipeline_free(p);
}

int main(void) {
    const char *san = getenv("PP_SANITIZE");
    if (san && *san) /* address or thread */
        pp_test_skip("OpenVINO's TBB dlopens a library with RTLD_DEEPBIND, which the sanitizers' "
                     "runtimes cannot run (google/sanitizers#611); the plain build runs these tests");
    RUN(test_model_file_stage_records_execs_and_ops);
    RUN(test_session_level_reaches_the_backend);
    RUN(test_bad_model_paths_name_the_key);
    RUN(test_shape_mismatch_names_the_shapes);
    return pp_test_finish();
}
#endif
