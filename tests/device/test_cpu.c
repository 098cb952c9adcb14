/* The cpu backend computes the dummy models correctly (against the naive
 * reference loops of reference.h, written from the models' definitions) and reports a
 * profile whose parts add up. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "device/workload.h"
#include "pipeprof/device.h"
#include "reference.h"
#include "testutil.h"

static pp_device *open_cpu(void) {
    pp_device *d = NULL;
    pp_error err = {0};
    int rc = pp_device_open("cpu", NULL, &d, &err);
    EXPECT_EQ_I64(rc, PP_OK);
    return d;
}

static void run_and_wait(pp_compiled *c, int i) {
    pp_request *r = pp_compiled_request(c, i);
    EXPECT_EQ_I64(pp_request_start(r, NULL, NULL), PP_OK);
    EXPECT_EQ_I64(pp_request_wait(r), PP_OK);
}

/* 37 rows, odd sizes (no multiple of any block size), three layers. */
static void test_matmul_chain_matches_naive_product(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 37, w.in_dim = 19, w.out_dim = 23, w.layers = 3, w.seed = 7;
    pp_device *d = open_cpu();
    pp_compiled *c = NULL;
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 1, &c, NULL), PP_OK);
    pp_request *r = pp_compiled_request(c, 0);
    pp_wl_fill_input(&w, 99, pp_request_input(r));
    run_and_wait(c, 0);

    static float x[37 * 19], want[37 * 23];
    pp_wl_fill_input(&w, 99, x);
    reference_matmul_chain(&w, x, want);
    EXPECT(rel_error(pp_request_output(r), want, 37 * 23) < 1e-5);
    pp_compiled_free(c);
    pp_device_close(d);
}

/* h_i = ReLU(W^T mean(x_i, x_src for every edge src -> i) + b). */
static void test_sage_layer_matches_naive_definition(void) {
    enum { N = 50, E = 300, IN = 16, OUT = 12 };
    pp_workload w;
    pp_workload_init(&w);
    w.kind = PP_WORKLOAD_SAGE;
    w.nodes = N, w.edges = E, w.in_dim = IN, w.out_dim = OUT, w.seed = 3;
    pp_device *d = open_cpu();
    pp_compiled *c = NULL;
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 1, &c, NULL), PP_OK);
    pp_request *r = pp_compiled_request(c, 0);
    pp_wl_fill_input(&w, 5, pp_request_input(r));
    run_and_wait(c, 0);

    static float x[N * IN], want[N * OUT];
    pp_wl_fill_input(&w, 5, x);
    reference_sage(&w, x, want);
    EXPECT(rel_error(pp_request_output(r), want, N * OUT) < 1e-5);
    pp_compiled_free(c);
    pp_device_close(d);
}

/* hw_ns is the sum of the ops' CPU times, xfer_ns the input reorder's, and
 * every op ran inside the request's wall interval. */
static void test_profile_parts_add_up(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.kind = PP_WORKLOAD_SAGE;
    w.nodes = 512, w.edges = 4096, w.in_dim = 32, w.out_dim = 32;
    pp_device *d = open_cpu();
    pp_compiled *c = NULL;
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 1, &c, NULL), PP_OK);
    pp_request *r = pp_compiled_request(c, 0);
    pp_request_profile prof;
    EXPECT_EQ_I64(pp_request_profile_get(r, &prof), PP_ESTATE); /* never ran */

    int64_t t0 = pp_now();
    run_and_wait(c, 0);
    int64_t t1 = pp_now();
    EXPECT_EQ_I64(pp_request_profile_get(r, &prof), PP_OK);
    EXPECT_EQ_U64(prof.nops, 5); /* reorder_input, aggregate, matmul, bias, relu */
    EXPECT_STR(pp_str_text(prof.ops[0].name), "reorder_input");
    EXPECT_STR(pp_str_text(prof.ops[0].type), "Reorder");
    EXPECT_STR(pp_str_text(prof.ops[2].type), "MatMul");
    EXPECT_STR(pp_str_text(prof.ops[4].name), "relu");
    EXPECT_STR(pp_str_text(prof.ops[0].exec_type), "ref_c_FP32");
    EXPECT_STR(pp_str_text(prof.ops[2].exec_type), "openblas_FP32");
    uint64_t sum = 0;
    int64_t prev_end = t0;
    for (size_t i = 0; i < prof.nops; i++) {
        const pp_op_profile *op = &prof.ops[i];
        EXPECT_EQ_I64(op->status, PP_OP_EXECUTED);
        EXPECT_EQ_I64(op->transfer, i == 0);
        EXPECT_EQ_U64(op->hw_ns, op->cpu_ns);
        EXPECT(op->start_ns >= prev_end);
        prev_end = op->start_ns + (int64_t)op->real_ns;
        sum += op->hw_ns;
    }
    EXPECT(prev_end <= t1);
    EXPECT_EQ_U64(prof.hw_ns, sum);
    EXPECT_EQ_U64(prof.xfer_ns, prof.ops[0].hw_ns);
    EXPECT(prof.hw_ns > 0);
    pp_compiled_free(c);
    pp_device_close(d);
}

/* A request's MatMul runs on its worker thread alone: OpenBLAS must not hand
 * work to threads of its own, whose CPU time the worker's hw_ns would miss
 * and which would compete with the other workers for the cores. */
static void test_openblas_is_held_to_one_thread(void) {
    pp_workload w;
    pp_workload_init(&w);
    pp_device *d = open_cpu();
    pp_compiled *c = NULL;
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 1, &c, NULL), PP_OK);
    EXPECT_EQ_I64(openblas_get_num_threads(), 1);
    pp_compiled_free(c);
    pp_device_close(d);
}

typedef struct done_log {
    int calls[4];
    int status[4];
} done_log;

static void on_done(void *ctx, pp_request *r, int status) {
    done_log *log = ctx;
    log->calls[pp_request_index(r)]++;
    log->status[pp_request_index(r)] = status;
}

/* Four requests in flight at once: each calls back exactly once, and each
 * computes its own input (same model, different inputs, different outputs). */
static void test_concurrent_requests_each_complete_once(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 64, w.in_dim = 8, w.out_dim = 8;
    pp_device *d = open_cpu();
    pp_compiled *c = NULL;
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 4, &c, NULL), PP_OK);
    done_log log = {{0}, {0}};
    for (int i = 0; i < 4; i++) {
        pp_wl_fill_input(&w, 100 + (uint64_t)i, pp_request_input(pp_compiled_request(c, i)));
        EXPECT_EQ_I64(pp_request_start(pp_compiled_request(c, i), on_done, &log), PP_OK);
    }
    for (int i = 0; i < 4; i++)
        EXPECT_EQ_I64(pp_request_wait(pp_compiled_request(c, i)), PP_OK);
    static float x[64 * 8], wt[8 * 8], want[64 * 8];
    pp_wl_weights(&w, 0, wt);
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ_I64(log.calls[i], 1);
        EXPECT_EQ_I64(log.status[i], PP_OK);
        EXPECT(pp_request_poll(pp_compiled_request(c, i)) == 1);
        pp_wl_fill_input(&w, 100 + (uint64_t)i, x);
        naive_matmul(x, wt, want, 64, 8, 8);
        EXPECT(rel_error(pp_request_output(pp_compiled_request(c, i)), want, 64 * 8) < 1e-5);
    }
    pp_compiled_free(c);
    pp_device_close(d);
}

int main(void) {
    RUN(test_matmul_chain_matches_naive_product);
    RUN(test_sage_layer_matches_naive_definition);
    RUN(test_profile_parts_add_up);
    RUN(test_openblas_is_held_to_one_thread);
    RUN(test_concurrent_requests_each_complete_once);
    return pp_test_finish();
}
