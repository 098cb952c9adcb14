/* pipeline_custom — a two-stage pipeline built with the C API.
 *
 * Stage "Normalize" is a host function of this program (scales each row to
 * unit length); stage "Encode" is a two-layer MatMul data parallel over the
 * CPU and a simulated NPU, its rows split 1:3. Batches stream through both
 * stages; the run is recorded and written for Perfetto / pipeprof analyze:
 *
 *   ./pipeline_custom [OUTPUT]     writes OUTPUT (default pipeline_custom.json)
 *   pipeprof analyze pipeline_custom.json --exclude-region "warm up"
 */
#include <math.h>
#include <stdio.h>

#include <pipeprof/pipeline.h>

static int normalize(void *ctx, int64_t batch, const float *in, float *out, int64_t nodes,
                     int64_t in_dim, int64_t out_dim) {
    (void)ctx, (void)batch;
    for (int64_t i = 0; i < nodes; i++) {
        double norm = 0;
        for (int64_t j = 0; j < in_dim; j++)
            norm += (double)in[i * in_dim + j] * in[i * in_dim + j];
        float scale = norm > 0 ? (float)(1.0 / sqrt(norm)) : 0.0f;
        for (int64_t j = 0; j < out_dim; j++)
            out[i * out_dim + j] = j < in_dim ? in[i * in_dim + j] * scale : 0.0f;
    }
    return PP_OK;
}

static int fail(const char *what, const pp_error *err) {
    fprintf(stderr, "pipeline_custom: %s: %s\n", what, err->msg);
    return 1;
}

int main(int argc, char **argv) {
    const char *output = argc > 1 ? argv[1] : "pipeline_custom.json";
    pp_error err = {{0}};

    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.name = "custom";
    cfg.nodes = 2048;
    cfg.features = 32;
    cfg.batches = 30;
    pp_pipeline *p = NULL;
    if (pp_pipeline_create(&cfg, &p, &err) != PP_OK)
        return fail("config", &err);

    pp_stage_spec normalize_stage = {.name = "Normalize", .host = normalize,
                                     .out_dim = 32};
    pp_stage_spec encode = {.name = "Encode", .ndevices = 2, .devices = {"cpu", "sim:NPU"},
                            .split = {1, 3}, .kind = PP_WORKLOAD_MATMUL, .out_dim = 64,
                            .layers = 2};
    if (pp_pipeline_add_stage(p, &normalize_stage, &err) != PP_OK ||
        pp_pipeline_add_stage(p, &encode, &err) != PP_OK) {
        pp_pipeline_free(p);
        return fail("stage", &err);
    }

    pp_session_config scfg;
    pp_session_config_init(&scfg);
    scfg.output = output;
    pp_session *s = NULL;
    if (pp_session_open(&scfg, &s) != PP_OK || pp_session_start(s) != PP_OK) {
        fprintf(stderr, "pipeline_custom: cannot start recording\n");
        pp_session_close(s);
        pp_pipeline_free(p);
        return 1;
    }
    pp_pipeline_result res;
    int rc = pp_pipeline_run(p, s, NULL, &res, &err);
    if (rc == PP_OK)
        rc = pp_session_stop(s, &err);
    pp_session_close(s);
    if (rc != PP_OK) {
        pp_pipeline_free(p);
        return fail("run", &err);
    }
    printf("%lld batches in %.3f s (%.1f batches/s); trace: %s\n", (long long)res.batches,
           (double)res.wall_ns / 1e9, res.batches_per_s, output);
    for (int i = 0; i < pp_pipeline_stage_count(p); i++) {
        pp_stage_summary sum;
        pp_pipeline_stage_summary(p, i, &sum);
        printf("  %-10s mean %8.3f ms  max %8.3f ms  on", sum.name, (double)sum.mean_ns / 1e6,
               (double)sum.max_ns / 1e6);
        if (sum.ndevices == 0)
            printf(" the host");
        for (int d = 0; d < sum.ndevices; d++)
            printf("%s %s", d ? "," : "", sum.device_labels[d]);
        printf("\n");
    }
    pp_pipeline_free(p);
    return 0;
}
