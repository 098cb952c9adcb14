/* bench_overhead — what recording costs a pipeline's throughput.
 *
 * The same all-CPU pipeline (graph prep -> embedding on two requests ->
 * classifier, streaming) runs with recording off (NULL session) and at
 * levels 0, 1 and 2. Configurations alternate round by round so that drift
 * of the machine hits all alike; each figure is the median over the rounds.
 * Prints one BENCH line per level:
 *   BENCH pipeline_level1 value=<batches/s> unit=batches/s
 *         baseline=no_recording:<batches/s> ratio=<on / off>
 * (a rate: above 1 is better, as DESIGN §8 has it); 1 - ratio is the
 * overhead (target: <= 0.02 at level 1). */
#include <stdio.h>
#include <stdlib.h>

#include "pipeprof/pipeline.h"

#define ROUNDS 9
#define BATCHES 80
#define CONFIGS 4 /* off, level 0, 1, 2 */

static pp_pipeline *cpu_pipeline(void) {
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.name = "bench";
    cfg.batches = BATCHES;
    cfg.warmup = 2;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    const pp_stage_spec stages[] = {
        {.name = "GraphPrep", .ndevices = 1, .devices = {"cpu"}, .kind = PP_WORKLOAD_SAGE,
         .out_dim = 64},
        {.name = "Embedding", .ndevices = 1, .devices = {"cpu"}, .requests = 2,
         .kind = PP_WORKLOAD_MATMUL, .out_dim = 64, .layers = 2},
        {.name = "Classifier", .ndevices = 1, .devices = {"cpu"}, .kind = PP_WORKLOAD_MATMUL,
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

/* One run's throughput; config 0 records nothing, config c > 0 at level c-1. */
static double run_once(pp_pipeline *p, int config) {
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
    if (pp_pipeline_run(p, s, NULL, &res, &err) != PP_OK) {
        fprintf(stderr, "bench_overhead: %s\n", err.msg);
        exit(1);
    }
    pp_session_close(s);
    return res.batches_per_s;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    pp_pipeline *p = cpu_pipeline();
    double rate[CONFIGS][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int c = 0; c < CONFIGS; c++)
            rate[c][r] = run_once(p, c);
    double median[CONFIGS];
    for (int c = 0; c < CONFIGS; c++) {
        qsort(rate[c], ROUNDS, sizeof rate[c][0], by_value);
        median[c] = rate[c][ROUNDS / 2];
    }
    for (int c = 1; c < CONFIGS; c++)
        printf("BENCH pipeline_level%d value=%.1f unit=batches/s baseline=no_recording:%.1f "
               "ratio=%.3f\n",
               c - 1, median[c], median[0], median[c] / median[0]);
    pp_pipeline_free(p);
    return 0;
}
