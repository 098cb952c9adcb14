/* The openvino backend on OpenVINO's CPU device: the dummy models built as
 * IR compute what reference.h computes, profiles come from PERF_COUNT and
 * add up (hw_ns <= wall, every op listed with its status), level 0 compiles
 * without PERF_COUNT, and every mistake a user can make says what is wrong. */
#include <stdlib.h>

#include "pipeprof/device.h"
#include "testutil.h"

#ifndef PP_HAVE_OPENVINO
int main(void) {
    pp_test_skip("built without OpenVINO (configure with -DPIPEPROF_PYTHON=<venv with the "
                 "openvino wheel> or -DOpenVINO_DIR=...)");
}
#else
#include "device/openvino/ov_internal.h"
#include "ov_check.h"

/* Odd sizes, three layers. */
static void test_matmul_chain_matches_reference(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 37, w.in_dim = 19, w.out_dim = 23, w.layers = 3, w.seed = 7;
    expect_matches_reference(w);
}

static void test_sage_layer_matches_reference(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.kind = PP_WORKLOAD_SAGE;
    w.nodes = 50, w.edges = 300, w.in_dim = 16, w.out_dim = 12, w.seed = 3;
    expect_matches_reference(w);
    w.edges = 0; /* no graph: each node's mean is itself */
    expect_matches_reference(w);
}

/* Writes the dummy model of w as an IR file pair and returns the .xml path. */
static const char *write_ir(const pp_workload *w, int dynamic_rows, const char *name) {
    pp_ov_ir ir;
    EXPECT_EQ_I64(pp_ov_ir_build(w, dynamic_rows, &ir, NULL), PP_OK);
    char bin_name[64];
    snprintf(bin_name, sizeof bin_name, "%s.bin", name);
    char xml_name[64];
    snprintf(xml_name, sizeof xml_name, "%s.xml", name);
    static char xml[4096];
    snprintf(xml, sizeof xml, "%s", pp_test_path(xml_name));
    EXPECT_EQ_I64(pp_test_write_file(pp_test_path(bin_name), ir.bin, ir.bin_len), 0);
    EXPECT_EQ_I64(pp_test_write_file(xml, ir.xml, ir.xml_len), 0);
    pp_ov_ir_free(&ir);
    return xml;
}

/* A model file whose rows are dynamic runs at the workload's rows. */
static void test_model_file_with_dynamic_rows_matches_reference(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 8, w.in_dim = 12, w.out_dim = 10, w.layers = 2, w.seed = 11;
    w.model_path = write_ir(&w, 1, "dynamic");
    w.nodes = 29; /* any rows: the weights do not depend on them */
    expect_matches_reference(w);
}

/* hw_ns = Σ real_time of EXECUTED ops; xfer_ns = the transfer ops' part;
 * every op has a status and a type. The CPU plugin reports each node's mean
 * time over every run of its graph (docs/backends.md), so with one request
 * (one graph, runs one after another) hw_ns of run n is at most the mean of
 * the walls of runs 1..n: each run's node times fit in its wall. */
static void test_profile_is_consistent(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.kind = PP_WORKLOAD_SAGE;
    w.nodes = 512, w.edges = 4096, w.in_dim = 64, w.out_dim = 64;
    pp_device *d = open_ov("openvino:CPU");
    pp_compiled *c = NULL;
    EXPECT_EQ_I64(pp_compiled_create_level(d, &w, 1, 1, &c, NULL), PP_OK);
    pp_request *r = pp_compiled_request(c, 0);
    pp_wl_fill_input(&w, 1, pp_request_input(r));
    int64_t walls = 0;
    for (int run = 1; run <= 4; run++) { /* names come from a cache after the first run */
        int64_t t0 = pp_now();
        run_and_wait(r);
        int64_t t1 = pp_now();
        walls += t1 - t0;
        pp_request_profile prof;
        EXPECT_EQ_I64(pp_request_profile_get(r, &prof), PP_OK);
        EXPECT(prof.nops > 0);
        EXPECT(prof.hw_ns > 0);
        EXPECT(prof.hw_ns <= (uint64_t)(walls / run));
        EXPECT(prof.xfer_ns <= prof.hw_ns);
        uint64_t hw = 0, xfer = 0;
        int executed = 0, others = 0;
        for (size_t i = 0; i < prof.nops; i++) {
            const pp_op_profile *op = &prof.ops[i];
            const char *type = pp_str_text(op->type);
            EXPECT(op->name != 0 && *type);
            EXPECT_EQ_I64(op->transfer, pp_ov_is_transfer(type));
            if (op->status == PP_OP_EXECUTED) {
                executed++; /* laid out from the start, clipped to the end */
                EXPECT(op->start_ns >= t0 && op->start_ns + (int64_t)op->real_ns <= t1);
            } else {
                others++;
                EXPECT_EQ_U64(op->hw_ns, 0);
            }
            hw += op->hw_ns;
            xfer += op->transfer ? op->hw_ns : 0;
        }
        EXPECT(executed > 0);
        EXPECT(others > 0); /* the Parameter and Result are not run on CPU */
        EXPECT_EQ_U64(prof.hw_ns, hw);
        EXPECT_EQ_U64(prof.xfer_ns, xfer);
    }
    pp_compiled_free(c);
    pp_device_close(d);
}

/* The rule, on a profiling list built here: EXECUTED ops count (real_time
 * in us), Reorder/Convert/Parameter/Result are transfers, other statuses
 * count nothing, ops are laid end to end and clipped to the run's end. */
static void test_transfer_rule(void) {
    ov_profiling_info_t infos[] = {
        {.status = EXECUTED, .real_time = 5, .cpu_time = 4, .node_name = "in", .exec_type = "jit",
         .node_type = "Reorder"},
        {.status = EXECUTED, .real_time = 20, .cpu_time = 20, .node_name = "fc",
         .exec_type = "brgemm", .node_type = "FullyConnected"},
        {.status = NOT_RUN, .real_time = 0, .node_name = "relu", .exec_type = "undef",
         .node_type = "Relu"},
        {.status = OPTIMIZED_OUT, .real_time = 7, .node_name = "cvt", .exec_type = "undef",
         .node_type = "Convert"},
        {.status = EXECUTED, .real_time = 3, .cpu_time = 3, .node_name = "out", .exec_type = "jit",
         .node_type = "Convert"},
    };
    ov_profiling_info_list_t list = {infos, 5};
    pp_request r = {0};
    r.ops = r.inline_ops;
    pp_ov_names names = {0};
    pp_op_profile *ops = NULL;
    size_t cap = 0;
    EXPECT_EQ_I64(pp_ov_profile_fill(&r, &list, 1000, 1000 + 26000, &names, &ops, &cap), 0);
    EXPECT_EQ_U64(r.hw_ns, 28000);
    EXPECT_EQ_U64(r.xfer_ns, 8000);
    EXPECT_EQ_U64(r.nops, 5);
    EXPECT_EQ_I64(r.ops[1].start_ns, 6000);
    EXPECT_EQ_U64(r.ops[1].real_ns, 20000);
    EXPECT_EQ_U64(r.ops[1].cpu_ns, 20000);
    EXPECT_EQ_I64(r.ops[2].status, PP_OP_NOT_RUN);
    EXPECT_EQ_I64(r.ops[3].status, PP_OP_OPTIMIZED_OUT);
    EXPECT_EQ_U64(r.ops[3].hw_ns, 0);
    EXPECT_EQ_I64(r.ops[4].start_ns, 26000);
    EXPECT_EQ_U64(r.ops[4].real_ns, 1000); /* clipped: 3 us reported, 1 us left */
    EXPECT_EQ_U64(r.ops[4].hw_ns, 3000);  /* the reported time still counts */
    EXPECT_STR(pp_str_text(r.ops[1].exec_type), "brgemm");
    EXPECT_STR(pp_str_text(r.ops[4].name), "out");
    pp_ov_names_free(&names);
    free(ops);
}

/* Level 0 is wall times only: the model is compiled without PERF_COUNT
 * (the runtime's own property says so) and profiles are empty. */
static void test_level_decides_perf_count(void) {
    pp_workload w;
    pp_workload_init(&w);
    pp_device *d = open_ov("openvino:CPU");
    for (int level = 0; level <= 2; level++) {
        pp_compiled *c = NULL;
        EXPECT_EQ_I64(pp_compiled_create_level(d, &w, 1, level, &c, NULL), PP_OK);
        char value[16] = "";
        EXPECT_EQ_I64(pp_ov_compiled_property(c, "PERF_COUNT", value, sizeof value, NULL), PP_OK);
        EXPECT_STR(value, level == 0 ? "NO" : "YES");
        pp_request *r = pp_compiled_request(c, 0);
        run_and_wait(r);
        pp_request_profile prof;
        EXPECT_EQ_I64(pp_request_profile_get(r, &prof), PP_OK);
        EXPECT_EQ_I64(prof.nops == 0, level == 0);
        EXPECT_EQ_I64(prof.hw_ns == 0, level == 0);
        pp_compiled_free(c);
    }
    pp_device_close(d);
}

static void expect_open_error(const char *spec, int code, const char *start, const char *also) {
    pp_device *d = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_device_open(spec, NULL, &d, &err), code);
    EXPECT(strncmp(err.msg, start, strlen(start)) == 0);
    EXPECT_CONTAINS(err.msg, also);
    if (strncmp(err.msg, start, strlen(start)) != 0)
        fprintf(stderr, "got: %s\n", err.msg);
    EXPECT(d == NULL);
}

static void test_unknown_devices_list_the_available_ones(void) {
    expect_open_error("openvino:NPU7", PP_ENOTFOUND,
                      "openvino: device \"NPU7\" not found (available: ", "CPU");
    expect_open_error("openvino:HETERO:NPU7,CPU", PP_ENOTFOUND,
                      "openvino: device \"NPU7\" not found (available: ", "CPU");
    expect_open_error("openvino:AUTO:CPU,", PP_ENOTFOUND, "openvino: device \"\" not found", "CPU");
    expect_open_error("openvino:A_NAME_OF_23_CHARACTERS", PP_EINVAL,
                      "openvino: device name \"A_NAME_OF_23_CHARACTERS\" is longer than 22", "");
    pp_device *d = open_ov("openvino:AUTO:CPU");
    EXPECT_STR(pp_device_name(d), "openvino:AUTO:CPU"); /* the track name: never cpu's "CPU" */
    pp_device_close(d);
}

/* Compiles w on openvino:CPU, expecting `code` and a message that starts
 * with `start` and holds `also`. */
static void expect_compile_error(const pp_workload *w, int code, const char *start,
                                 const char *also) {
    pp_device *d = open_ov("openvino:CPU");
    pp_compiled *c = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_compiled_create(d, w, 1, &c, &err), code);
    EXPECT(strncmp(err.msg, start, strlen(start)) == 0);
    EXPECT_CONTAINS(err.msg, also);
    if (strncmp(err.msg, start, strlen(start)) != 0)
        fprintf(stderr, "got: %s\n", err.msg);
    EXPECT(c == NULL);
    pp_device_close(d);
}

static void test_model_file_errors_name_the_file_and_shapes(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 8, w.in_dim = 4, w.out_dim = 6;
    char msg[600];

    w.model_path = pp_test_path("none.xml");
    snprintf(msg, sizeof msg, "openvino: model %s: No such file or directory", w.model_path);
    expect_compile_error(&w, PP_ENOTFOUND, msg, "");

    const char *corrupt = pp_test_path("corrupt.xml");
    EXPECT_EQ_I64(pp_test_write_file(corrupt, "<net><layers><layer", 19), 0);
    w.model_path = corrupt;
    snprintf(msg, sizeof msg, "openvino: cannot read model %s: ", corrupt);
    expect_compile_error(&w, PP_EINVAL, msg, "");

    w.model_path = write_ir(&w, 0, "static8x4"); /* [8,4] -> [8,6] */
    w.nodes = 16;
    snprintf(msg, sizeof msg,
             "openvino: %s: input shape [8,4] does not fit the stage's [16,4] (nodes x in_dim)",
             w.model_path);
    expect_compile_error(&w, PP_EINVAL, msg, "");
    w.nodes = 8, w.out_dim = 5;
    snprintf(msg, sizeof msg,
             "openvino: %s: output shape [8,6] does not fit the stage's [8,5] (nodes x out_dim)",
             w.model_path);
    expect_compile_error(&w, PP_EINVAL, msg, "");

    pp_device *cpu = NULL;
    pp_compiled *c = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    w.out_dim = 6;
    EXPECT_EQ_I64(pp_compiled_create(cpu, &w, 1, &c, &err), PP_EINVAL);
    snprintf(msg, sizeof msg,
             "cpu:CPU: runs the dummy models only (model file \"%s\" needs an openvino device)",
             w.model_path);
    EXPECT_STR(err.msg, msg);
    pp_device_close(cpu);
}

typedef struct listed {
    int cpu, sim, openvino_cpu;
} listed;

static void on_device(void *ctx, const pp_device_info *info) {
    listed *l = ctx;
    l->cpu += strcmp(info->spec, "cpu") == 0;
    l->sim += strcmp(info->backend, "sim") == 0 && info->flags == PP_TRACK_SIMULATED;
    l->openvino_cpu += strcmp(info->spec, "openvino:CPU") == 0 && *info->description;
}

static void test_device_list_has_every_backend(void) {
    listed l = {0};
    EXPECT_EQ_I64(pp_device_list(NULL, NULL, on_device, &l, NULL), PP_OK);
    EXPECT_EQ_I64(l.cpu, 1);
    EXPECT_EQ_I64(l.sim, 2); /* NPU, GPU */
    EXPECT_EQ_I64(l.openvino_cpu, 1);
    listed only = {0};
    EXPECT_EQ_I64(pp_device_list("openvino", NULL, on_device, &only, NULL), PP_OK);
    EXPECT_EQ_I64(only.cpu + only.sim, 0);
    EXPECT_EQ_I64(only.openvino_cpu, 1);
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_device_list("opnvino", NULL, on_device, &only, &err), PP_ENOTFOUND);
    EXPECT_STR(err.msg, "unknown backend \"opnvino\" (have: " PP_TEST_BACKENDS ")");
}

int main(void) {
    const char *san = getenv("PP_SANITIZE");
    if (san && *san) /* address or thread */
        pp_test_skip("OpenVINO's TBB dlopens a library with RTLD_DEEPBIND, which the sanitizers' "
                     "runtimes cannot run (google/sanitizers#611); the plain build runs these tests");
    RUN(test_matmul_chain_matches_reference);
    RUN(test_sage_layer_matches_reference);
    RUN(test_model_file_with_dynamic_rows_matches_reference);
    RUN(test_profile_is_consistent);
    RUN(test_transfer_rule);
    RUN(test_level_decides_perf_count);
    RUN(test_unknown_devices_list_the_available_ones);
    RUN(test_model_file_errors_name_the_file_and_shapes);
    RUN(test_device_list_has_every_backend);
    return pp_test_finish();
}
#endif
