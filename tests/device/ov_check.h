/* ov_check.h — what the openvino tests share: opening openvino:CPU and
 * checking a workload's output against reference.h in the precision the
 * device computed in. */
#ifndef PP_TEST_OV_CHECK_H
#define PP_TEST_OV_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "device/openvino/ov_internal.h"
#include "pipeprof/device.h"
#include "reference.h"
#include "testutil.h"

static inline pp_device *open_ov(const char *spec) {
    pp_device *d = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_device_open(spec, NULL, &d, &err), PP_OK);
    if (!d)
        fprintf(stderr, "%s\n", err.msg);
    return d;
}

static inline void run_and_wait(pp_request *r) {
    EXPECT_EQ_I64(pp_request_start(r, NULL, NULL), PP_OK);
    EXPECT_EQ_I64(pp_request_wait(r), PP_OK);
}

/* The tolerance of the precision the device computed in: the CPU plugin
 * runs f32 models in bf16 on CPUs that have it (8 mantissa bits). */
static inline double tolerance(const pp_compiled *c) {
    char precision[32] = "";
    EXPECT_EQ_I64(pp_ov_compiled_property(c, "INFERENCE_PRECISION_HINT", precision,
                                          sizeof precision, NULL), PP_OK);
    return strcmp(precision, "f32") == 0 ? 1e-5 : 3e-2;
}

/* Runs w on request 0 of a fresh compiled model and compares its output
 * with the reference. */
static inline void expect_matches_reference(pp_workload w) {
    pp_device *d = open_ov("openvino:CPU");
    pp_compiled *c = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 2, &c, &err), PP_OK);
    if (!c) {
        fprintf(stderr, "%s\n", err.msg);
        pp_device_close(d);
        return;
    }
    float *x = malloc((size_t)(w.nodes * w.in_dim) * sizeof *x);
    float *want = malloc((size_t)(w.nodes * w.out_dim) * sizeof *want);
    pp_wl_fill_input(&w, 42, x);
    for (int i = 0; i < 2; i++) { /* two requests, different inputs, one model */
        pp_request *r = pp_compiled_request(c, i);
        pp_wl_fill_input(&w, 42 + (uint64_t)i, pp_request_input(r));
        run_and_wait(r);
        pp_wl_fill_input(&w, 42 + (uint64_t)i, x);
        if (w.model_path || w.kind == PP_WORKLOAD_MATMUL)
            reference_matmul_chain(&w, x, want);
        else
            reference_sage(&w, x, want);
        double e = rel_error(pp_request_output(r), want, w.nodes * w.out_dim);
        EXPECT(e < tolerance(c));
    }
    free(x), free(want);
    pp_compiled_free(c);
    pp_device_close(d);
}

#endif
