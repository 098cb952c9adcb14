/* Pipeline files: a valid file becomes the pipeline it describes, and every
 * mistake is reported with the file and the key that holds it. */
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/pipeline_impl.h"
#include "testutil.h"

/* Writes `json` to a fresh file named `name` and loads it. */
static int load_text(const char *name, const char *json, pp_pipeline **p, pp_error *err) {
    const char *path = pp_test_path(name);
    EXPECT_EQ_I64(pp_test_write_file(path, json, strlen(json)), 0);
    return pp_pipeline_load(path, p, err);
}

static void test_valid_file_describes_the_pipeline(void) {
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    const char *json =
        "{\"name\": \"g\", \"nodes\": 128, \"edges\": 256, \"features\": 8, \"batches\": 3,"
        " \"warmup\": 0, \"queue_depth\": 4, \"seed\": 9, \"sim_bus_gbps\": 6,"
        " \"sim_devices\": [{\"name\": \"VPU\", \"launch_ns\": 1000, \"gflops\": 5}],"
        " \"stages\": [{\"name\": \"A\", \"device\": \"sim:VPU\", \"model\": \"sage\", \"out_dim\": 4},"
        "  {\"name\": \"B\", \"devices\": [\"cpu\", \"sim:NPU\"], \"split\": [1, 3],"
        "   \"requests\": 2, \"out_dim\": 2, \"layers\": 3}]}";
    EXPECT_EQ_I64(load_text("valid.json", json, &p, &err), PP_OK);
    if (!p)
        return;
    const pp_pipeline_config *cfg = pp_pipeline_config_get(p);
    EXPECT_STR(cfg->name, "g");
    EXPECT_EQ_I64(cfg->nodes, 128);
    EXPECT_EQ_I64(cfg->edges, 256);
    EXPECT_EQ_I64(cfg->features, 8);
    EXPECT_EQ_I64(cfg->batches, 3);
    EXPECT_EQ_I64(cfg->warmup, 0);
    EXPECT_EQ_I64(cfg->queue_depth, 4);
    EXPECT_EQ_U64(cfg->seed, 9);
    EXPECT_NEAR(cfg->devices.sim_bus_gbps, 6, 0);
    EXPECT_EQ_U64(cfg->devices.nsim, 1);
    EXPECT_STR(cfg->devices.sim[0].name, "VPU");
    EXPECT_EQ_I64(cfg->devices.sim[0].units, 1); /* default */
    EXPECT_EQ_I64(pp_pipeline_stage_count(p), 2);
    pp_pipeline_result res;
    EXPECT_EQ_I64(pp_pipeline_run(p, NULL, NULL, &res, &err), PP_OK);
    EXPECT_EQ_I64(res.batches, 3);
    pp_stage_summary sum;
    EXPECT_EQ_I64(pp_pipeline_stage_summary(p, 1, &sum), PP_OK);
    EXPECT_EQ_I64(sum.ndevices, 2);
    EXPECT_STR(sum.device_labels[0], "CPU");
    EXPECT_STR(sum.device_labels[1], "NPU (simulated)");
    EXPECT_EQ_I64(pp_pipeline_stage_summary(p, 2, &sum), PP_EINVAL);
    pp_pipeline_free(p);
}

static void expect_load_error(const char *json, int code, const char *message) {
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(load_text("bad.json", json, &p, &err), code);
    EXPECT(p == NULL);
    /* The message starts with the path, which lies in the test's folder. */
    const char *tail = strstr(err.msg, "bad.json");
    EXPECT_STR(tail, message);
}

#define STAGE "{\"name\": \"A\", \"device\": \"cpu\", \"out_dim\": 8}"

static void test_mistakes_name_the_file_and_key(void) {
    expect_load_error("[1]", PP_EINVAL, "bad.json: expected an object at the top");
    expect_load_error("{\"stages\": []}", PP_EINVAL,
                      "bad.json: stages: expected a list of at least one stage");
    expect_load_error("{\"stage\": [" STAGE "]}", PP_EINVAL,
                      "bad.json: stage: unknown key (have: name, nodes, edges, features, batches, "
                      "warmup, queue_depth, seed, sim_bus_gbps, sim_devices, stages)");
    expect_load_error("{\"nodes\": 1.5, \"stages\": [" STAGE "]}", PP_EINVAL,
                      "bad.json: nodes: expected a whole number");
    expect_load_error("{\"name\": 3, \"stages\": [" STAGE "]}", PP_EINVAL,
                      "bad.json: name: expected a string");
    expect_load_error("{\"sim_bus_gbps\": \"fast\", \"stages\": [" STAGE "]}", PP_EINVAL,
                      "bad.json: sim_bus_gbps: expected a number");
    expect_load_error("{\"warmup\": -1, \"stages\": [" STAGE "]}", PP_EINVAL,
                      "bad.json: warmup: -1 (expected 0 or more)");
    expect_load_error("{\"batches\": 99999999999, \"stages\": [" STAGE "]}", PP_EINVAL,
                      "bad.json: batches: 99999999999 is out of range");
    expect_load_error("{\"nodes\": 0, \"stages\": [" STAGE "]}", PP_EINVAL,
                      "bad.json: graph: workload nodes: 0 is outside 1..4194304");
    expect_load_error("{\"sim_devices\": {}, \"stages\": [" STAGE "]}", PP_EINVAL,
                      "bad.json: sim_devices: expected a list of at most 16");
    expect_load_error("{\"sim_devices\": [{\"launch_ns\": 5}], \"stages\": [" STAGE "]}",
                      PP_EINVAL, "bad.json: sim_devices[0].name: expected 1..31 characters");
    expect_load_error("{\"sim_devices\": [{\"name\": \"X\", \"speed\": 5}], \"stages\": [" STAGE "]}",
                      PP_EINVAL,
                      "bad.json: sim_devices[0].speed: unknown key (have: name, launch_ns, gflops, units)");
    expect_load_error("{\"stages\": [3]}", PP_EINVAL, "bad.json: stages[0]: expected an object");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"out_dim\": 8}]}", PP_EINVAL,
                      "bad.json: stages[0]: no \"device\" (or \"devices\" list)");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"device\": \"cpu\", \"devices\": [\"cpu\"],"
                      " \"out_dim\": 8}]}",
                      PP_EINVAL, "bad.json: stages[0]: give \"device\" or \"devices\", not both");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"devices\": [], \"out_dim\": 8}]}", PP_EINVAL,
                      "bad.json: stages[0].devices: expected a list of 1..8 specs");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"devices\": [1], \"out_dim\": 8}]}", PP_EINVAL,
                      "bad.json: stages[0].devices[0]: expected a string");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"devices\": [\"cpu\"], \"split\": [\"x\"],"
                      " \"out_dim\": 8}]}",
                      PP_EINVAL, "bad.json: stages[0].split[0]: expected a number");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"device\": \"cpu\"}]}", PP_EINVAL,
                      "bad.json: stages[0].out_dim: missing");
    expect_load_error("{\"stages\": [" STAGE ", {\"name\": \"B\", \"device\": \"sim:TPU\","
                      " \"out_dim\": 8}]}",
                      PP_ENOTFOUND,
                      "bad.json: stages[1].devices[0]: sim: no simulated device \"TPU\" (have: NPU, GPU)");
    expect_load_error("{\"stages\": [{\"device\": \"cpu\", \"out_dim\": 8}]}", PP_EINVAL,
                      "bad.json: stages[0].name: expected 1..63 characters");
    expect_load_error("{\"stages\": [{\"name\": \"A\", \"device\": \"cpu\", \"out_dim\": 8,"
                      " \"layers\": 65}]}",
                      PP_EINVAL, "bad.json: stages[0].layers: 65 (expected 1..64)");
}

/* A key given twice is a syntax error, with its line and column. */
static void test_duplicate_key_gives_the_position(void) {
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(load_text("dup.json", "{\"batches\": 2,\n \"batches\": 3}", &p, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "dup.json:2:");
    EXPECT_CONTAINS(err.msg, "duplicate object key");
}

static void test_missing_file_is_not_found(void) {
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pipeline_load(pp_test_path("none.json"), &p, &err), PP_ENOTFOUND);
    EXPECT_CONTAINS(err.msg, "none.json: cannot open: No such file");
}

/* examples/demo_pipeline.json is `pipeprof demo`'s pipeline, field by field. */
static void test_demo_example_file_is_the_builtin_demo(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/demo_pipeline.json", getenv("PP_SOURCE_DIR"));
    pp_pipeline *file = NULL, *demo = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pipeline_load(path, &file, &err), PP_OK);
    EXPECT_EQ_I64(pp_pipeline_demo(&demo, &err), PP_OK);
    if (!file || !demo)
        return;
    const pp_pipeline_config *a = &file->cfg, *b = &demo->cfg;
    EXPECT_STR(a->name, b->name);
    EXPECT_EQ_I64(a->nodes, b->nodes);
    EXPECT_EQ_I64(a->edges, b->edges);
    EXPECT_EQ_I64(a->features, b->features);
    EXPECT_EQ_I64(a->batches, b->batches);
    EXPECT_EQ_I64(a->warmup, b->warmup);
    EXPECT_EQ_I64(a->queue_depth, b->queue_depth);
    EXPECT_EQ_U64(a->seed, b->seed);
    EXPECT_EQ_U64(a->devices.nsim, b->devices.nsim);
    EXPECT_NEAR(a->devices.sim_bus_gbps, b->devices.sim_bus_gbps, 0);
    EXPECT_EQ_I64(file->nstages, demo->nstages);
    for (int i = 0; i < file->nstages && i < demo->nstages; i++) {
        const pp_stage_spec *x = &file->stages[i].spec, *y = &demo->stages[i].spec;
        EXPECT_STR(x->name, y->name);
        EXPECT_EQ_I64(x->ndevices, y->ndevices);
        for (int d = 0; d < x->ndevices && d < y->ndevices; d++) {
            EXPECT_STR(x->devices[d], y->devices[d]);
            EXPECT_NEAR(x->split[d], y->split[d], 0);
        }
        EXPECT_EQ_I64(x->requests, y->requests);
        EXPECT_EQ_I64(x->kind, y->kind);
        EXPECT_EQ_I64(x->out_dim, y->out_dim);
        EXPECT_EQ_I64(x->layers, y->layers);
    }
    pp_pipeline_free(file);
    pp_pipeline_free(demo);
}

int main(void) {
    RUN(test_valid_file_describes_the_pipeline);
    RUN(test_mistakes_name_the_file_and_key);
    RUN(test_duplicate_key_gives_the_position);
    RUN(test_missing_file_is_not_found);
    RUN(test_demo_example_file_is_the_builtin_demo);
    return pp_test_finish();
}
