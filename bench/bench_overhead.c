/* bench_overhead — what recording costs a pipeline's throughput.
 *
 * The same all-CPU pipeline (graph prep -> embedding on two requests ->
 * classifier, streaming) runs with recording off (NULL session) and at
 * levels 0, 1 and 2. Configurations alternate round by round so that drift
 * of the machine hits all alike; each figure is the median over the rounds.
 * Prints one BENCH line per level:
 *   BENCH pipeline_level1 value=<batches/s> unit=batches/s
 *         baseline=no_recording:<batches/s> ratio=<on / off>
 * (a rate: above 1 is better, as docs/architecture.md §8 has it); 1 - ratio is the
 * overhead (target: <= 0.02 at level 1).
 *
 * Throughput on a 2-core machine moves by several percent from run to run
 * with the scheduling of the pipeline's threads, more than the overhead
 * itself. So each level also gets the CPU time the whole process spent per
 * batch (user + system, getrusage), which scheduling does not change:
 *   BENCH pipeline_cpu_per_batch_level1 value=<us> unit=us
 *         baseline=no_recording:<us> ratio=<on / off>
 * (a time: below 1 is better; ratio - 1 is the overhead in CPU).
 *
 * When built with OpenVINO, the same pipeline on openvino:CPU follows
 * (openvino_pipeline_level*, openvino_pipeline_cpu_per_batch_level*): there
 * level >= 1 also compiles with PERF_COUNT and reads every request's
 * profiling info, so its ratios are the whole cost of profiling an OpenVINO
 * pipeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "pipeprof/pipeline.h"

#define ROUNDS 15
#define BATCHES 300
#define CONFIGS 4 /* off, level 0, 1, 2 */

static pp_pipeline *pipeline_on(const char *device) {
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.name = "bench";
    cfg.batches = BATCHES;
    cfg.warmup = 2;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    const pp_stage_spec stages[] = {
        {.name = "GraphPrep", .ndevices = 1, .devices = {device}, .kind = PP_WORKLOAD_SAGE,
         .out_dim = 64},
        {.name = "Embedding", .ndevices = 1, .devices = {device}, .requests = 2,
         .kind = PP_WORKLOAD_MATMUL, .out_dim = 64, .layers = 2},
        {.name = "Classifier", .ndevices = 1, .devices = {device}, .kind = PP_WORKLOAD_MATMUL,
         .out_dim = 16},
    };
    int rc = pp_pipeline_create(&cfg, &p, &err);
    for (size_t i = 0; rc == PP_OK && i < sizeof stages / sizeof stages[0]; i++)
        rc = pp_pipeline_add_stage(p, &stages[i], &err);
    if (rc != PP_OK) {
        fprintf(stderr, "bench_overhead: %s\n", err.msg);
        exit(1);
    }
    return p;
}

/* One run's throughput and CPU time per batch (*cpu); config 0 records
 * nothing, config c > 0 at level c-1. */
static double run_once(pp_pipeline *p, int config, double *cpu) {
    pp_session *s = NULL;
    if (config > 0) {
        pp_session_config scfg;
        pp_session_config_init(&scfg);
        scfg.level = config - 1;
        if (pp_session_open(&scfg, &s) != PP_OK || pp_session_start(s) != PP_OK) {
            fprintf(stderr, "bench_overhead: cannot start a session\n");
            exit(1);
        }
    }
    pp_pipeline_result res;
    pp_error err = {{0}};
    double cpu0 = bench_process_cpu_us();
    if (pp_pipeline_run(p, s, NULL, &res, &err) != PP_OK) {
        fprintf(stderr, "bench_overhead: %s\n", err.msg);
        exit(1);
    }
    *cpu = (bench_process_cpu_us() - cpu0) / (BATCHES + 2); /* warm-up batches run too */
    pp_session_close(s);
    return res.batches_per_s;
}

/* The BENCH lines of the pipeline on `device`, named <prefix>level<N> and
 * <prefix>cpu_per_batch_level<N>. */
static void bench_pipeline(const char *device, const char *prefix) {
    pp_pipeline *p = pipeline_on(device);
    double rate[CONFIGS][ROUNDS], cpu[CONFIGS][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int c = 0; c < CONFIGS; c++)
            rate[c][r] = run_once(p, c, &cpu[c][r]);
    double rate_median[CONFIGS], cpu_median[CONFIGS];
    for (int c = 0; c < CONFIGS; c++) {
        rate_median[c] = bench_median(rate[c], ROUNDS);
        cpu_median[c] = bench_median(cpu[c], ROUNDS);
    }
    for (int c = 1; c < CONFIGS; c++)
        printf("BENCH %slevel%d value=%.1f unit=batches/s baseline=no_recording:%.1f "
               "ratio=%.3f\n",
               prefix, c - 1, rate_median[c], rate_median[0], rate_median[c] / rate_median[0]);
    for (int c = 1; c < CONFIGS; c++)
        printf("BENCH %scpu_per_batch_level%d value=%.1f unit=us "
               "baseline=no_recording:%.1f ratio=%.3f\n",
               prefix, c - 1, cpu_median[c], cpu_median[0], cpu_median[c] / cpu_median[0]);
    pp_pipeline_free(p);
}

int main(void) {
    bench_pipeline("cpu", "pipeline_");
    if (strstr(pp_features(), "openvino"))
        bench_pipeline("openvino:CPU", "openvino_pipeline_");
    return 0;
}
