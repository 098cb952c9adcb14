/* bench_plan — how well `pipeprof plan` predicts, and how fast it searches.
 *
 * Verify: the demo pipeline (examples/demo_pipeline.json) is swept over
 * cpu, sim:NPU, sim:GPU and openvino:CPU (where built) at five sizes around
 * its own, each timed phase at least 100 ms (min_time_ms: a table of
 * shorter phases is noisy enough to move every plan's error together),
 * with --co-run (devices sharing hardware measured together), the
 * best 5 plans are searched, and each is run as `plan --verify`
 * runs it (pp_plan_verify). Per plan:
 *   BENCH plan_verify_<rank> value=<measured cycle ms> unit=ms
 *         baseline=predicted:<ms> ratio=<predicted / measured>
 * and the worst error over the five, the goal being within 15%:
 *   BENCH plan_verify_worst_error value=<|error| %> unit=% baseline=goal:15 ratio=<value/15>
 *
 * Search: a hand-made table of 7 stages x 4 devices at three sizes (wall
 * quartiles 10% apart), searched
 * with data-parallel splits (9 ratios) for the best 5 plans; the baseline is
 * the same search over the first 3 stages, in the same run (median of rounds):
 *   BENCH plan_search_7x4 value=<ms> unit=ms baseline=search_3x4:<ms> ratio=<7 / 3>
 * The goal for 7 x 4 is under a second.
 *
 * On a machine shared with other work, that work preempts the pipeline
 * being verified far more than the single requests the sweep timed, and
 * the error measures the neighbours. The bench therefore raises its own
 * priority to nice -19 where it may (root, or CAP_SYS_NICE) before any
 * thread starts, so every thread it and its devices start inherits it,
 * and says which it ran at:
 *   # priority: nice -19   or   # priority: nice 0 (raising it: <why>) */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_stats.h"
#include "pipeprof/sweep.h"

#define TOP 5
#define SEARCH_ROUNDS 5

static void die(const char *what, const pp_error *err) {
    fprintf(stderr, "bench_plan: %s: %s\n", what, err->msg);
    exit(1);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "bench_plan: cannot write %s\n", path);
        exit(1);
    }
}

/* Sweeps the demo's stages into dir and returns its lookup table. */
static pp_lookup *sweep_demo(const char *dir) {
    char cfg[4096], path[4300];
    int ov = strstr(pp_features(), "openvino") != NULL;
    snprintf(cfg, sizeof cfg,
             "{\"name\": \"bench\", \"features\": 64, \"warmup\": 5, \"iterations\": 30, \"min_time_ms\": 100,\n"
             " \"sizes\": [{\"nodes\": 128, \"edges\": 1024}, {\"nodes\": 256, \"edges\": 2048},\n"
             "   {\"nodes\": 512, \"edges\": 4096}, {\"nodes\": 1024, \"edges\": 8192},\n"
             "   {\"nodes\": 2048, \"edges\": 16384}],\n"
             " \"devices\": [\"cpu\", \"sim:NPU\", \"sim:GPU\"%s],\n"
             " \"stages\": [{\"name\": \"GraphPrep\", \"model\": \"sage\", \"out_dim\": 64},\n"
             "   {\"name\": \"Embedding\", \"model\": \"matmul\", \"out_dim\": 64, \"layers\": 2},\n"
             "   {\"name\": \"Classifier\", \"model\": \"matmul\", \"out_dim\": 16}]}\n",
             ov ? ", \"openvino:CPU\"" : "");
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    write_text(path, cfg);
    pp_sweep_config *c = NULL;
    pp_error err = {{0}};
    if (pp_sweep_config_load(path, &c, &err) != PP_OK)
        die(path, &err);
    char out[4200];
    snprintf(out, sizeof out, "%s/calib", dir);
    pp_sweep_options o = {.co_run = 1};
    pp_sweep_result res;
    if (pp_sweep_run(c, out, &o, &res, &err) != PP_OK)
        die("sweep", &err);
    pp_sweep_config_free(c);
    snprintf(path, sizeof path, "%s/lookup_table.json", out);
    pp_lookup *l = NULL;
    if (pp_lookup_load(path, &l, &err) != PP_OK)
        die(path, &err);
    return l;
}

static void bench_verify(const char *dir, const char *pipeline) {
    pp_lookup *l = sweep_demo(dir);
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    if (pp_pipeline_load(pipeline, &p, &err) != PP_OK)
        die(pipeline, &err);
    pp_plan_options o;
    pp_plan_options_init(&o);
    o.top = TOP;
    pp_plan plans[TOP];
    size_t n = 0;
    if (pp_plan_search(l, p, &o, plans, &n, NULL, &err) != PP_OK)
        die("plan", &err);
    double worst = 0.0;
    for (size_t k = 0; k < n; k++) {
        pp_plan_measured m;
        if (pp_plan_verify(p, &plans[k], &m, &err) != PP_OK)
            die("verify", &err);
        double pred = (double)plans[k].cycle_ns / 1e6, meas = (double)m.cycle_ns / 1e6;
        double error = 100.0 * (pred - meas) / meas;
        worst = fmax(worst, fabs(error));
        printf("# plan %zu:", k + 1);
        for (int s = 0; s < plans[k].nstages; s++) {
            const pp_plan_stage *st = &plans[k].stages[s];
            printf(" %s=%s", st->stage, st->devices[0]);
            if (st->ndevices == 2)
                printf("+%s@%.1f", st->devices[1], st->split[0]);
        }
        printf("  error %+.1f%%\n", error);
        printf("#   bottleneck %s; stage ms predicted/measured:",
               plans[k].bottleneck_stage >= 0 ? plans[k].stages[plans[k].bottleneck_stage].stage
                                              : plans[k].bottleneck_device);
        for (int s = 0; s < plans[k].nstages; s++)
            printf(" %s %.3f/%.3f", plans[k].stages[s].stage,
                   (double)plans[k].stages[s].time_ns / 1e6, (double)m.stage_ns[s] / 1e6);
        printf("\n");
        printf("BENCH plan_verify_%zu value=%.4f unit=ms baseline=predicted:%.4f ratio=%.3f\n",
               k + 1, meas, pred, pred / meas);
    }
    printf("BENCH plan_verify_worst_error value=%.1f unit=%% baseline=goal:15 ratio=%.2f\n", worst,
           worst / 15.0);
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* A table of `stages` matmul 16 -> 16 stages on 4 devices at three sizes,
 * times made up but varied, so that no two plans tie everywhere. */
static pp_lookup *search_table(const char *dir) {
    static const char *const dev[] = {"sim:NPU", "sim:GPU", "sim:VPU", "cpu"};
    static const int64_t nodes[] = {256, 1024, 4096};
    json_t *entries = json_object();
    for (int s = 0; s < 7; s++)
        for (int d = 0; d < 4; d++)
            for (int z = 0; z < 3; z++) {
                char key[128], stage[8];
                snprintf(stage, sizeof stage, "s%d", s + 1);
                snprintf(key, sizeof key, "%lld,%lld,%s,%s", (long long)nodes[z],
                         (long long)nodes[z] * 4, dev[d], stage);
                int64_t wall = (int64_t)(nodes[z] * (40 + 13 * ((s * 7 + d * 3) % 11)) +
                                         20000 * (d + 1));
                /* quartiles 10% apart, as a sweep measures them: the
                 * search then weighs each plan's spread as it does there */
                json_t *o = json_pack(
                    "{sssssssssssIsIsisisIsisbs{sIsIsI}}", "status", "ok", "device", dev[d],
                    "device_name", dev[d], "stage", stage, "model", "matmul", "nodes",
                    (json_int_t)nodes[z], "edges", (json_int_t)nodes[z] * 4, "in_dim", 16,
                    "out_dim", 16, "bytes", (json_int_t)(nodes[z] * 128), "layers", 1,
                    "simulated", 1, "wall_ns", "mean", (json_int_t)wall, "p25",
                    (json_int_t)(wall - wall / 20), "p75", (json_int_t)(wall + wall / 20));
                json_object_set_new(entries, key, o);
            }
    json_t *root = json_pack("{ssso}", "format", "pipeprof-lookup", "entries", entries);
    char path[4200];
    snprintf(path, sizeof path, "%s/search_lookup.json", dir);
    json_dump_file(root, path, 0);
    json_decref(root);
    pp_lookup *l = NULL;
    pp_error err = {{0}};
    if (pp_lookup_load(path, &l, &err) != PP_OK)
        die(path, &err);
    return l;
}

static double search_ms(const pp_lookup *l, int stages) {
    static const char *const names[] = {"s1", "s2", "s3", "s4", "s5", "s6", "s7"};
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.nodes = 2000, cfg.edges = 8000, cfg.features = 16;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    int rc = pp_pipeline_create(&cfg, &p, &err);
    for (int i = 0; rc == PP_OK && i < stages; i++) {
        pp_stage_spec spec = {.name = names[i], .ndevices = 1, .devices = {"cpu"},
                              .kind = PP_WORKLOAD_MATMUL, .out_dim = 16};
        rc = pp_pipeline_add_stage(p, &spec, &err);
    }
    if (rc != PP_OK)
        die("pipeline", &err);
    pp_plan_options o;
    pp_plan_options_init(&o);
    o.top = TOP;
    o.copy_bytes_per_s = 10e9;
    pp_plan plans[TOP];
    size_t n = 0;
    double t[SEARCH_ROUNDS];
    for (int r = 0; r < SEARCH_ROUNDS; r++) {
        int64_t t0 = pp_now();
        if (pp_plan_search(l, p, &o, plans, &n, NULL, &err) != PP_OK)
            die("search", &err);
        t[r] = (double)(pp_now() - t0) / 1e6;
    }
    pp_pipeline_free(p);
    return bench_median(t, SEARCH_ROUNDS);
}

int main(int argc, char **argv) {
    const char *pipeline = argc > 1 ? argv[1] : PP_SOURCE_DIR "/examples/demo_pipeline.json";
    if (setpriority(PRIO_PROCESS, 0, -19) == 0)
        printf("# priority: nice -19\n");
    else
        printf("# priority: nice %d (raising it: %s)\n", getpriority(PRIO_PROCESS, 0),
               strerror(errno));
    char dir[] = "/tmp/bench_plan.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_plan: mkdtemp");
        return 1;
    }
    pp_lookup *l = search_table(dir);
    double t3 = search_ms(l, 3), t7 = search_ms(l, 7);
    printf("BENCH plan_search_7x4 value=%.3f unit=ms baseline=search_3x4:%.3f ratio=%.1f\n", t7,
           t3, t7 / t3);
    pp_lookup_free(l);
    bench_verify(dir, pipeline);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
