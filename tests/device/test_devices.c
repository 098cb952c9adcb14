/* Opening devices: specs name a backend and a device, mistakes say what
 * exists, and a spec opened twice is one shared device. */
#include "pipeprof/device.h"
#include "testutil.h"

static void expect_open_error(const char *spec, const pp_device_options *opt, int code,
                              const char *message) {
    pp_device *d = NULL;
    pp_error err = {0};
    EXPECT_EQ_I64(pp_device_open(spec, opt, &d, &err), code);
    EXPECT_STR(err.msg, message);
    EXPECT(d == NULL);
}

static void test_bad_specs_name_what_exists(void) {
    expect_open_error("opnvino:GPU", NULL, PP_ENOTFOUND, "unknown backend \"opnvino\" (have: " PP_TEST_BACKENDS ")");
    expect_open_error("sim", NULL, PP_EINVAL, "device \"sim\": name a device (e.g. sim:NPU)");
    expect_open_error("sim:", NULL, PP_EINVAL,
                      "device \"sim:\": expected a device name of 1..31 characters after ':'");
    expect_open_error("sim:TPU", NULL, PP_ENOTFOUND, "sim: no simulated device \"TPU\" (have: NPU, GPU)");
    expect_open_error("cpu:GPU", NULL, PP_ENOTFOUND, "cpu: no device \"GPU\" (have: CPU)");
}

static void test_custom_sim_device_is_listed_and_opens(void) {
    pp_sim_device_params vpu = {.name = "VPU", .launch_ns = 1000, .gflops = 5, .units = 1};
    pp_device_options opt = {.nsim = 1, .sim = &vpu};
    expect_open_error("sim:TPU", &opt, PP_ENOTFOUND,
                      "sim: no simulated device \"TPU\" (have: NPU, GPU, VPU)");
    pp_device *d = NULL;
    EXPECT_EQ_I64(pp_device_open("sim:VPU", &opt, &d, NULL), PP_OK);
    EXPECT_STR(pp_device_name(d), "VPU");
    EXPECT_STR(pp_device_label(d), "VPU (simulated)");
    EXPECT_EQ_U64(pp_device_flags(d), PP_TRACK_SIMULATED);
    pp_device_close(d);
}

/* Two stages on "sim:NPU" must contend for one NPU, so they get one device,
 * and stream numbers reserved on it never repeat. */
static void test_same_spec_is_one_device(void) {
    pp_device *a = NULL, *b = NULL, *cpu = NULL;
    EXPECT_EQ_I64(pp_device_open("sim:NPU", NULL, &a, NULL), PP_OK);
    EXPECT_EQ_I64(pp_device_open("sim:NPU", NULL, &b, NULL), PP_OK);
    EXPECT(a == b);
    EXPECT_EQ_I64(pp_device_reserve_streams(a, 2), 0);
    EXPECT_EQ_I64(pp_device_reserve_streams(b, 1), 2);
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &cpu, NULL), PP_OK);
    EXPECT_STR(pp_device_name(cpu), "CPU");
    EXPECT_EQ_U64(pp_device_flags(cpu), 0);
    pp_device_close(cpu);
    pp_device_close(b);
    EXPECT_STR(pp_device_name(a), "NPU"); /* still open: one reference left */
    pp_device_close(a);
}

static void test_conflicting_sim_parameters_are_refused(void) {
    pp_device *npu = NULL;
    EXPECT_EQ_I64(pp_device_open("sim:NPU", NULL, &npu, NULL), PP_OK);
    pp_sim_device_params fast;
    EXPECT_EQ_I64(pp_sim_device_defaults("NPU", &fast), PP_OK);
    fast.gflops *= 2;
    pp_device_options opt = {.nsim = 1, .sim = &fast};
    expect_open_error("sim:NPU", &opt, PP_EINVAL,
                      "sim: device \"NPU\" is already open with other parameters");
    pp_device_options bus = {.sim_bus_gbps = 3};
    expect_open_error("sim:GPU", &bus, PP_EINVAL,
                      "sim: the shared bus is already open at 12 GB/s; cannot open GPU at 3 GB/s");
    pp_device_close(npu);
    /* with nothing open, the bus can be opened at another bandwidth */
    pp_device *gpu = NULL;
    EXPECT_EQ_I64(pp_device_open("sim:GPU", &bus, &gpu, NULL), PP_OK);
    pp_device_close(gpu);
}

static void test_bad_workloads_name_the_field(void) {
    pp_workload w;
    pp_error err = {0};
    pp_workload_init(&w);
    EXPECT_EQ_I64(pp_workload_check(&w, &err), PP_OK);
    w.nodes = 0;
    EXPECT_EQ_I64(pp_workload_check(&w, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "workload nodes: 0 is outside 1..4194304");
    pp_workload_init(&w);
    w.layers = 65;
    EXPECT_EQ_I64(pp_workload_check(&w, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "workload layers: 65 is outside 1..64");
    pp_workload_init(&w);
    w.kind = PP_WORKLOAD_SAGE, w.layers = 2;
    EXPECT_EQ_I64(pp_workload_check(&w, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "workload layers: a sage model has 1 layer (got 2)");
    pp_workload_init(&w);
    w.nodes = 1 << 20, w.in_dim = 1 << 7;
    EXPECT_EQ_I64(pp_workload_check(&w, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "workload: 1048576 nodes x 128 features is over 2^26 values per tensor");

    pp_device *d = NULL;
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &d, NULL), PP_OK);
    pp_workload_init(&w);
    pp_compiled *c = NULL;
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 0, &c, &err), PP_EINVAL);
    EXPECT_STR(err.msg, "requests: 0 is outside 1..64");
    pp_device_close(d);
}

/* FLOPs follow the definitions: 2*n*k*m per MatMul; sage adds one per edge
 * and feature plus 2 per node and feature (self term, scaling), and n*m for
 * each of bias and ReLU. */
static void test_flops_follow_the_model_sizes(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 10, w.in_dim = 3, w.out_dim = 5, w.layers = 2;
    EXPECT_EQ_U64(pp_workload_flops(&w), 2 * 10 * 3 * 5 + 2 * 10 * 5 * 5);
    w.kind = PP_WORKLOAD_SAGE, w.layers = 1, w.edges = 7;
    EXPECT_EQ_U64(pp_workload_flops(&w), (7 + 2 * 10) * 3 + 2 * 10 * 3 * 5 + 2 * 10 * 5);
}

int main(void) {
    RUN(test_bad_specs_name_what_exists);
    RUN(test_custom_sim_device_is_listed_and_opens);
    RUN(test_same_spec_is_one_device);
    RUN(test_conflicting_sim_parameters_are_refused);
    RUN(test_bad_workloads_name_the_field);
    RUN(test_flops_follow_the_model_sizes);
    return pp_test_finish();
}
