/* The openvino backend reads ONNX model files as well as IR: a MatMul chain
 * written as ONNX (by tests/device/make_onnx.py, with the onnx package)
 * from the dummy model's own weights computes what reference.h computes,
 * at rows the file leaves dynamic. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#ifndef PP_HAVE_OPENVINO
int main(void) {
    pp_test_skip("built without OpenVINO (configure with -DPIPEPROF_PYTHON=<venv with the "
                 "openvino wheel> or -DOpenVINO_DIR=...)");
}
#else
#include "device/workload.h"
#include "ov_check.h"

/* Writes the weights of w's layers and has make_onnx.py turn them into
 * NAME.onnx; returns its path. Skips the test when Python or the onnx
 * package is missing. */
static const char *write_onnx(const pp_workload *w, const char *name) {
    const char *py = getenv("PP_PYTHON"), *src = getenv("PP_SOURCE_DIR");
    if (!py || !*py || !src)
        pp_test_skip("PP_PYTHON or PP_SOURCE_DIR is not set (run through ctest)");
    static char onnx[4096];
    snprintf(onnx, sizeof onnx, "%s", pp_test_path(name));
    char cmd[16384];
    int at = snprintf(cmd, sizeof cmd, "'%s' '%s/tests/device/make_onnx.py' '%s.onnx' %lld %lld",
                      py, src, onnx, (long long)w->in_dim, (long long)w->out_dim);
    float *wt = malloc((size_t)(w->in_dim > w->out_dim ? w->in_dim : w->out_dim) *
                       (size_t)w->out_dim * sizeof *wt);
    for (int l = 0; l < w->layers; l++) {
        int64_t k = l == 0 ? w->in_dim : w->out_dim;
        char file[64];
        snprintf(file, sizeof file, "%s_w%d.f32", name, l);
        const char *path = pp_test_path(file); /* a fresh path: it removes the file */
        pp_wl_weights(w, l, wt);
        EXPECT_EQ_I64(pp_test_write_file(path, wt, (size_t)(k * w->out_dim) * sizeof *wt), 0);
        at += snprintf(cmd + at, sizeof cmd - (size_t)at, " '%s'", path);
    }
    free(wt);
    char *out = NULL;
    int rc = pp_test_run(cmd, &out);
    if (rc == 77)
        pp_test_skip(out ? out : "make_onnx.py: the onnx package is missing");
    if (rc != 0)
        pp_test_fail(__FILE__, __LINE__, "make_onnx.py: exit %d:\n%s", rc, out ? out : "");
    free(out);
    strcat(onnx, ".onnx");
    return onnx;
}

static void test_onnx_file_matches_reference(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 8, w.in_dim = 12, w.out_dim = 10, w.layers = 3, w.seed = 5;
    w.model_path = write_onnx(&w, "chain");
    w.nodes = 31; /* the file's rows are dynamic */
    expect_matches_reference(w);
}

int main(void) {
    const char *san = getenv("PP_SANITIZE");
    if (san && *san) /* address or thread */
        pp_test_skip("OpenVINO's TBB dlopens a library with RTLD_DEEPBIND, which the sanitizers' "
                     "runtimes cannot run (google/sanitizers#611); the plain build runs these tests");
    RUN(test_onnx_file_matches_reference);
    return pp_test_finish();
}
#endif
