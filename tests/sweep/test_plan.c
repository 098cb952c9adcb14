/* The planner over lookup tables written here with known times, so the best
 * plan and its cycle latency follow from the table by hand. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "pipeprof/sweep.h"
#include "testutil.h"

typedef struct entry {
    const char *device, *stage;
    int64_t nodes, edges, wall_ns;
    int ok;
} entry;

/* The device name of a spec, as the sweep records it: "sim:NPU" -> "NPU". */
static const char *track_name(const char *spec) {
    const char *colon = strchr(spec, ':');
    return colon ? colon + 1 : spec;
}

/* A table of matmul 16 -> 16 stages; hardware time = wall; `extra` (may
 * be NULL) adds top-level keys ("shared", "co_run"); iqr (may be NULL)
 * gives entry i quartiles of wall iqr[i] apart around its mean. */
static pp_lookup *table_with(const entry *e, size_t n, json_t *extra, const int64_t *iqr) {
    json_t *entries = json_object();
    for (size_t i = 0; i < n; i++) {
        char key[128];
        snprintf(key, sizeof key, "%lld,%lld,%s,%s", (long long)e[i].nodes,
                 (long long)e[i].edges, e[i].device, e[i].stage);
        json_t *o = json_pack("{sssssssssssIsIsisisIsisb}", "status", e[i].ok ? "ok" : "failed",
                              "device", e[i].device, "device_name", track_name(e[i].device), "stage",
                              e[i].stage, "model", "matmul", "nodes", (json_int_t)e[i].nodes,
                              "edges", (json_int_t)e[i].edges, "in_dim", 16, "out_dim", 16,
                              "bytes", (json_int_t)(e[i].nodes * 128), "layers", 1,
                              "simulated", 1);
        if (e[i].ok) {
            json_t *wall = json_pack("{sI}", "mean", (json_int_t)e[i].wall_ns);
            if (iqr) {
                json_object_set_new(wall, "p25", json_integer(e[i].wall_ns - iqr[i] / 2));
                json_object_set_new(wall, "p75", json_integer(e[i].wall_ns + iqr[i] / 2));
            }
            json_object_set_new(o, "wall_ns", wall);
            json_object_set_new(o, "hw_ns", json_pack("{sI}", "mean", (json_int_t)e[i].wall_ns));
        }
        json_object_set_new(entries, key, o);
    }
    json_t *root = json_pack("{ssso}", "format", "pipeprof-lookup", "entries", entries);
    if (extra)
        json_object_update(root, extra);
    json_decref(extra);
    const char *path = pp_test_path("plan_lookup.json");
    json_dump_file(root, path, 0);
    json_decref(root);
    pp_lookup *l = NULL;
    pp_error err = {{0}};
    if (pp_lookup_load(path, &l, &err) != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "lookup: %s", err.msg);
    return l;
}

static pp_lookup *table(const entry *e, size_t n) {
    return table_with(e, n, NULL, NULL);
}

/* A table of `n` matmul stages (entries e) on cpu and openvino:CPU, which
 * share the host's cores, with co-runs at 100 nodes: pair i, {device A,
 * stage A, device B, stage B}, slowed slowdown[i] on both sides. */
static pp_lookup *cores_table(const entry *e, size_t n, const char *const (*pairs)[4],
                              const double *slowdown, size_t npairs) {
    json_t *co = json_object();
    for (size_t i = 0; i < npairs; i++) {
        char key[128];
        snprintf(key, sizeof key, "100,200,%s,%s+%s,%s", pairs[i][0], pairs[i][1], pairs[i][2],
                 pairs[i][3]);
        json_object_set_new(co, key,
                            json_pack("{sisis{sssssf}s{sssssf}}", "nodes", 100, "edges", 200, "a",
                                      "device", pairs[i][0], "stage", pairs[i][1], "slowdown",
                                      slowdown[i], "b", "device", pairs[i][2], "stage",
                                      pairs[i][3], "slowdown", slowdown[i]));
    }
    return table_with(e, n, json_pack("{s[{sss[ss]}]so}", "shared", "hardware", "cores",
                                      "devices", "cpu", "openvino:CPU", "co_run", co),
                      NULL);
}

/* A pipeline of `n` matmul 16 -> 16 stages named s1, s2, ... on cpu. */
static pp_pipeline *pipeline(int64_t nodes, int64_t edges, int n) {
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.nodes = nodes, cfg.edges = edges, cfg.features = 16;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    int rc = pp_pipeline_create(&cfg, &p, &err);
    static const char *const names[] = {"s1", "s2", "s3"};
    for (int i = 0; rc == PP_OK && i < n; i++) {
        pp_stage_spec spec = {.name = names[i], .ndevices = 1, .devices = {"cpu"},
                              .kind = PP_WORKLOAD_MATMUL, .out_dim = 16};
        rc = pp_pipeline_add_stage(p, &spec, &err);
    }
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "pipeline: %s", err.msg);
    return p;
}

static pp_plan_options options(int top, int splits) {
    pp_plan_options o;
    pp_plan_options_init(&o);
    o.top = top, o.splits = splits;
    o.copy_bytes_per_s = 1e18; /* partition and merge round to 0 ns */
    return o;
}

/* pp_plan_search of p in l, expected to succeed: how many plans it found
 * (in plans, room for o->top). */
static size_t search_ok(const pp_lookup *l, const pp_pipeline *p, const pp_plan_options *o,
                        pp_plan *plans) {
    size_t n = 0;
    pp_error err = {{0}};
    int rc = pp_plan_search(l, p, o, plans, &n, NULL, &err);
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "pp_plan_search: %s (%s)", pp_strerror(rc), err.msg);
    return n;
}

/* s1 takes 100 us on the NPU and 300 on the GPU, s2 100 and 150. Both on
 * the NPU would give each stage 100 us but the NPU 200 us of work per
 * batch; s1 on the NPU and s2 on the GPU is best at 150 us. */
static void test_best_plan_balances_devices(void) {
    static const entry e[] = {
        {"sim:NPU", "s1", 100, 200, 100000, 1}, {"sim:GPU", "s1", 100, 200, 300000, 1},
        {"sim:NPU", "s2", 100, 200, 100000, 1}, {"sim:GPU", "s2", 100, 200, 150000, 1},
    };
    pp_lookup *l = table(e, 4);
    pp_pipeline *p = pipeline(100, 200, 2);
    pp_plan_options o = options(5, 9);
    pp_plan plans[5];
    size_t n = search_ok(l, p, &o, plans);
    EXPECT_EQ_U64(n, 4); /* one size measured: no fit, so no data-parallel splits */
    EXPECT_EQ_I64(plans[0].cycle_ns, 150000);
    EXPECT_STR(plans[0].stages[0].devices[0], "sim:NPU");
    EXPECT_STR(plans[0].stages[1].devices[0], "sim:GPU");
    EXPECT_EQ_I64(plans[0].bottleneck_stage, 1);
    EXPECT_STR(plans[0].stages[1].stage, "s2");
    EXPECT_NEAR(plans[0].throughput, 1e9 / 150000.0, 1e-9);
    EXPECT(!plans[0].stages[0].interpolated && !plans[0].extrapolated);
    EXPECT_EQ_I64(plans[1].cycle_ns, 200000);
    EXPECT_EQ_I64(plans[1].bottleneck_stage, -1);
    EXPECT_STR(plans[1].bottleneck_device, "sim:NPU");
    EXPECT_EQ_I64(plans[2].cycle_ns, 300000);
    EXPECT_EQ_I64(plans[3].cycle_ns, 450000); /* both on the GPU: 300 + 150 */
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* s1 takes 500 us on either device, s2 100 on the NPU and 200 on the GPU.
 * s1 on the NPU with s2 on the GPU and the reverse both cycle in 500 us;
 * the reverse does 600 us of work in all against 700, so it ranks first. */
static void test_equal_cycles_rank_by_total_work(void) {
    static const entry e[] = {
        {"sim:NPU", "s1", 100, 200, 500000, 1}, {"sim:GPU", "s1", 100, 200, 500000, 1},
        {"sim:NPU", "s2", 100, 200, 100000, 1}, {"sim:GPU", "s2", 100, 200, 200000, 1},
    };
    pp_lookup *l = table(e, 4);
    pp_pipeline *p = pipeline(100, 200, 2);
    pp_plan_options o = options(2, 9);
    pp_plan plans[2];
    size_t n = search_ok(l, p, &o, plans);
    EXPECT_EQ_U64(n, 2);
    EXPECT_EQ_I64(plans[0].cycle_ns, 500000);
    EXPECT_EQ_I64(plans[0].work_ns, 600000);
    EXPECT_STR(plans[0].stages[0].devices[0], "sim:GPU");
    EXPECT_STR(plans[0].stages[1].devices[0], "sim:NPU");
    EXPECT_EQ_I64(plans[1].cycle_ns, 500000);
    EXPECT_EQ_I64(plans[1].work_ns, 700000);
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* Wall = 1 ns/byte on the NPU and 3 ns/byte on the GPU (128 bytes a node),
 * measured at 100 and 1000 nodes. For 400 nodes the NPU alone needs 51.2 us;
 * giving it 3/4 of the rows and the GPU 1/4 takes max(300*128, 3*100*128) =
 * 38.4 us, the best of the splits 1/4, 1/2, 3/4. */
static void test_data_parallel_split_from_fits(void) {
    static const entry e[] = {
        {"sim:NPU", "s1", 100, 200, 12800, 1},  {"sim:NPU", "s1", 1000, 2000, 128000, 1},
        {"sim:GPU", "s1", 100, 200, 38400, 1},  {"sim:GPU", "s1", 1000, 2000, 384000, 1},
    };
    pp_lookup *l = table(e, 4);
    pp_pipeline *p = pipeline(400, 800, 1);
    pp_plan_options o = options(3, 3);
    pp_plan plans[3];
    size_t n = search_ok(l, p, &o, plans);
    EXPECT_EQ_U64(n, 3);
    const pp_plan_stage *st = &plans[0].stages[0];
    EXPECT_EQ_I64(st->ndevices, 2);
    EXPECT_STR(st->devices[0], "sim:NPU");
    EXPECT_NEAR(st->split[0], 0.75, 1e-12);
    EXPECT_EQ_I64(st->device_ns[0], 38400);
    EXPECT_EQ_I64(st->device_ns[1], 38400);
    EXPECT_EQ_I64(plans[0].cycle_ns, 38400);
    EXPECT(st->interpolated && !st->extrapolated);
    EXPECT_EQ_I64(plans[1].cycle_ns, 51200); /* the NPU alone */
    EXPECT_EQ_I64(plans[1].stages[0].ndevices, 1);
    EXPECT_EQ_I64(plans[2].cycle_ns, 76800); /* half and half: the GPU's 200 rows */
    pp_pipeline_free(p);

    /* 2000 nodes lie beyond the measured 1000: every plan says so */
    p = pipeline(2000, 4000, 1);
    n = search_ok(l, p, &o, plans);
    EXPECT(plans[0].extrapolated);
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* Measured at 100, 1000 and 2000 nodes: 200, 300 and 1500 us, whose
 * least-squares line has a negative intercept (it would predict 0 below
 * about 330 nodes). Between two measured sizes the estimate is the straight
 * line between them; below the smallest it is the smallest's time, never
 * less than a measurement. */
static void test_no_estimate_below_the_nearest_measurement(void) {
    static const entry e[] = {
        {"sim:NPU", "s1", 100, 200, 200000, 1},
        {"sim:NPU", "s1", 1000, 2000, 300000, 1},
        {"sim:NPU", "s1", 2000, 4000, 1500000, 1},
    };
    pp_lookup *l = table(e, 3);
    pp_plan_options o = options(1, 9);
    pp_plan plans[1];
    pp_pipeline *p = pipeline(50, 100, 1);
    EXPECT_EQ_U64(search_ok(l, p, &o, plans), 1);
    EXPECT_EQ_I64(plans[0].stages[0].time_ns, 200000);
    EXPECT(plans[0].stages[0].extrapolated && plans[0].extrapolated);
    pp_pipeline_free(p);
    p = pipeline(550, 1100, 1); /* halfway from 100 to 1000 nodes */
    EXPECT_EQ_U64(search_ok(l, p, &o, plans), 1);
    EXPECT_EQ_I64(plans[0].stages[0].time_ns, 250000);
    EXPECT(plans[0].stages[0].interpolated && !plans[0].extrapolated);
    pp_pipeline_free(p);
    p = pipeline(1500, 3000, 1); /* halfway from 1000 to 2000 */
    EXPECT_EQ_U64(search_ok(l, p, &o, plans), 1);
    EXPECT_EQ_I64(plans[0].stages[0].time_ns, 900000);
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* s1 takes 1000 us on the NPU, 2000 on the VPU, 5000 on the GPU; s2 and s3
 * take 10 and 20 us anywhere. With s1 on the NPU the cycle is 1000 us
 * wherever s2 and s3 go, as long as it is not the NPU: the four such plans
 * are one, with s2 and s3 free (one other device each). Putting s2 or s3 on
 * the NPU too makes the NPU's summed time the cycle: 1010, 1020, 1030 us. */
static void test_plans_differing_in_free_stages_collapse(void) {
    static const entry e[] = {
        {"sim:NPU", "s1", 100, 200, 1000000, 1}, {"sim:GPU", "s1", 100, 200, 5000000, 1},
        {"sim:VPU", "s1", 100, 200, 2000000, 1}, {"sim:NPU", "s2", 100, 200, 10000, 1},
        {"sim:GPU", "s2", 100, 200, 10000, 1},   {"sim:VPU", "s2", 100, 200, 10000, 1},
        {"sim:NPU", "s3", 100, 200, 20000, 1},   {"sim:GPU", "s3", 100, 200, 20000, 1},
        {"sim:VPU", "s3", 100, 200, 20000, 1},
    };
    pp_lookup *l = table(e, 9);
    pp_pipeline *p = pipeline(100, 200, 3);
    pp_plan_options o = options(5, 9);
    pp_plan plans[5];
    size_t n = search_ok(l, p, &o, plans);
    EXPECT_EQ_U64(n, 5);
    EXPECT_EQ_I64(plans[0].cycle_ns, 1000000);
    EXPECT_EQ_I64(plans[0].bottleneck_stage, 0);
    EXPECT_EQ_I64(plans[0].stages[0].free_options, 0);
    EXPECT_EQ_I64(plans[0].stages[1].free_options, 1);
    EXPECT_EQ_I64(plans[0].stages[2].free_options, 1);
    EXPECT_EQ_I64(plans[1].cycle_ns, 1010000);
    EXPECT_STR(plans[1].bottleneck_device, "sim:NPU");
    EXPECT_EQ_I64(plans[1].stages[1].free_options, 0); /* off the NPU the cycle drops */
    EXPECT_EQ_I64(plans[1].stages[2].free_options, 1);
    EXPECT_EQ_I64(plans[2].cycle_ns, 1020000);
    EXPECT_EQ_I64(plans[3].cycle_ns, 1030000);
    EXPECT_EQ_I64(plans[4].cycle_ns, 2000000);
    EXPECT_STR(plans[4].stages[0].devices[0], "sim:VPU");
    EXPECT_EQ_I64(plans[4].stages[1].free_options, 1); /* NPU or GPU, minus its own */
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* A batch's cycle is the slowest of its stages, so stages that vary from
 * run to run cycle slower on average than their largest mean. Quartiles
 * 13490 ns apart are a normal spread of sd 10 us (13490 / 1.349). s1 takes
 * 100 us (sd 10) on the NPU or a fixed 102 on the VPU; s2 100 us (sd 10)
 * on the GPU or 500 on the VPU. NPU + GPU: the expected largest of two such
 * normals, 100 + 10 / sqrt(pi) = 105.642 us, though both means are 100.
 * VPU + GPU: 102 + 10 * (phi(0.2) - 0.2 * (1 - Phi(0.2))) = 105.069 us
 * (phi, Phi: the standard normal density and distribution), first. */
static void test_spread_adds_to_the_cycle(void) {
    static const entry e[] = {
        {"sim:NPU", "s1", 100, 200, 100000, 1}, {"sim:VPU", "s1", 100, 200, 102000, 1},
        {"sim:GPU", "s2", 100, 200, 100000, 1}, {"sim:VPU", "s2", 100, 200, 500000, 1},
    };
    static const int64_t iqr[] = {13490, 0, 13490, 0};
    pp_lookup *l = table_with(e, 4, NULL, iqr);
    pp_pipeline *p = pipeline(100, 200, 2);
    pp_plan_options o = options(2, 9);
    pp_plan plans[2];
    size_t n = search_ok(l, p, &o, plans);
    EXPECT_EQ_U64(n, 2);
    EXPECT_STR(plans[0].stages[0].devices[0], "sim:VPU");
    EXPECT_NEAR((double)plans[0].cycle_ns, 105069.0, 2.0);
    EXPECT_EQ_I64(plans[0].mean_cycle_ns, 102000);
    EXPECT_EQ_I64(plans[0].stages[0].time_ns, 102000); /* a fixed time stays itself */
    EXPECT_STR(plans[1].stages[0].devices[0], "sim:NPU");
    EXPECT_NEAR((double)plans[1].cycle_ns, 105642.0, 2.0);
    EXPECT_EQ_I64(plans[1].mean_cycle_ns, 100000);
    EXPECT_EQ_I64(plans[1].stages[0].time_ns, 100000); /* one part: its mean */
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* cpu and openvino:CPU share the host's cores. Alone, s1 takes 100 us on
 * cpu and 120 on openvino:CPU, s2 100 and 110: as independent devices, s1
 * on cpu beside s2 on openvino:CPU would cycle in 110 us. Measured together
 * (co-run) each runs 2x slower: 200 and 220 us. Two stages on cpu run at
 * once too (each on its own threads), 1.5x slower together: 150 us each,
 * the cores' 100 + 100 us the cycle (200 us), the best; then the pair
 * (220), both on openvino:CPU (230 us of cores; no co-run of the two there,
 * which the plan says) and s1 on openvino:CPU with s2 on cpu (240). */
static void test_devices_sharing_hardware_slow_each_other(void) {
    static const entry e[] = {
        {"cpu", "s1", 100, 200, 100000, 1}, {"openvino:CPU", "s1", 100, 200, 120000, 1},
        {"cpu", "s2", 100, 200, 100000, 1}, {"openvino:CPU", "s2", 100, 200, 110000, 1},
    };
    static const char *const pairs[][4] = {{"cpu", "s1", "openvino:CPU", "s2"},
                                           {"openvino:CPU", "s1", "cpu", "s2"},
                                           {"cpu", "s1", "openvino:CPU", "s1"},
                                           {"cpu", "s2", "openvino:CPU", "s2"},
                                           {"cpu", "s1", "cpu", "s2"}};
    static const double slowdown[] = {2.0, 2.0, 2.0, 2.0, 1.5};
    pp_lookup *l = cores_table(e, 4, pairs, slowdown, 5);
    pp_pipeline *p = pipeline(100, 200, 2);
    pp_plan_options o = options(4, 9);
    pp_plan plans[4];
    size_t n = search_ok(l, p, &o, plans);
    EXPECT_EQ_U64(n, 4);
    EXPECT_EQ_I64(plans[0].cycle_ns, 200000);
    EXPECT_STR(plans[0].stages[0].devices[0], "cpu");
    EXPECT_STR(plans[0].stages[1].devices[0], "cpu");
    EXPECT_NEAR(plans[0].stages[0].slowdown[0], 1.5, 0.0);
    EXPECT_EQ_I64(plans[0].stages[0].time_ns, 150000);
    EXPECT_STR(plans[0].bottleneck_device, PP_PLAN_HOST_CORES);
    EXPECT(!plans[0].uncalibrated_sharing);
    EXPECT_EQ_I64(plans[1].cycle_ns, 220000);
    EXPECT_STR(plans[1].stages[1].devices[0], "openvino:CPU");
    EXPECT_NEAR(plans[1].stages[1].slowdown[0], 2.0, 0.0);
    EXPECT_EQ_I64(plans[1].stages[0].time_ns, 200000);
    EXPECT_EQ_I64(plans[1].stages[1].time_ns, 220000);
    EXPECT(!plans[1].uncalibrated_sharing);
    EXPECT_EQ_I64(plans[2].cycle_ns, 230000);
    EXPECT_STR(plans[2].stages[0].devices[0], "openvino:CPU");
    EXPECT(plans[2].uncalibrated_sharing);
    EXPECT_EQ_I64(plans[3].cycle_ns, 240000);
    pp_lookup_free(l);

    /* sharing without a co-run: each stage as fast as alone, the cores
     * taking turns (100 + 110 us), and the plan says it is not calibrated */
    l = table_with(e, 4, json_pack("{s[{sss[ss]}]}", "shared", "hardware", "cores", "devices",
                                   "cpu", "openvino:CPU"),
                   NULL);
    n = search_ok(l, p, &o, plans);
    EXPECT_EQ_I64(plans[0].cycle_ns, 200000); /* both on cpu: the cores' 100 + 100 us */
    EXPECT(plans[0].uncalibrated_sharing);
    EXPECT_EQ_I64(plans[1].cycle_ns, 210000);
    EXPECT_STR(plans[1].bottleneck_device, PP_PLAN_HOST_CORES);
    EXPECT(plans[1].uncalibrated_sharing);
    EXPECT_EQ_I64(plans[2].cycle_ns, 220000); /* s1 on openvino:CPU, s2 on cpu */
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* A part beside several others that share its hardware takes the excess
 * of each co-run slowdown: s1 on cpu runs 1.5x slower beside s2 on
 * openvino:CPU and 1.25x beside s3 on cpu (another instance of the device,
 * whose threads run at once), so beside both 1 + 0.5 + 0.25 = 1.75x: 175
 * us; s2 150 us (s3 beside it, measured at 1.0, adds nothing), s3 125 us.
 * The cores' 100 + 100 + 100 us of work bound the cycle: 300 us. */
static void test_slowdowns_beside_several_add_up(void) {
    static const entry e[] = {
        {"cpu", "s1", 100, 200, 100000, 1},
        {"openvino:CPU", "s2", 100, 200, 100000, 1},
        {"cpu", "s3", 100, 200, 100000, 1},
    };
    static const char *const pairs[][4] = {{"cpu", "s1", "openvino:CPU", "s2"},
                                           {"cpu", "s1", "cpu", "s3"},
                                           {"openvino:CPU", "s2", "cpu", "s3"}};
    static const double slowdown[] = {1.5, 1.25, 1.0};
    pp_lookup *l = cores_table(e, 3, pairs, slowdown, 3);
    pp_pipeline *p = pipeline(100, 200, 3);
    pp_plan_options o = options(1, 9);
    pp_plan plans[1];
    size_t n = search_ok(l, p, &o, plans);
    EXPECT_EQ_U64(n, 1);
    EXPECT_NEAR(plans[0].stages[0].slowdown[0], 1.75, 1e-12);
    EXPECT_EQ_I64(plans[0].stages[0].time_ns, 175000);
    EXPECT_EQ_I64(plans[0].stages[1].time_ns, 150000);
    EXPECT_EQ_I64(plans[0].stages[2].time_ns, 125000);
    EXPECT_EQ_I64(plans[0].cycle_ns, 300000);
    EXPECT_STR(plans[0].bottleneck_device, PP_PLAN_HOST_CORES);
    EXPECT(!plans[0].uncalibrated_sharing);
    pp_pipeline_free(p);
    pp_lookup_free(l);
}

/* Quartiles of wall come both or neither, whole and in order; anything
 * else is refused with the entry named. */
static void test_bad_quartiles_are_refused(void) {
    static const char *const bad[] = {"\"p25\": 10", "\"p25\": 20, \"p75\": 10",
                                      "\"p25\": -1, \"p75\": 10", "\"p25\": 1.5, \"p75\": 10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = pp_test_path("bad_quartiles.json");
        FILE *f = fopen(path, "w");
        fprintf(f,
                "{\"format\": \"pipeprof-lookup\", \"entries\": {\"100,200,sim:NPU,s1\": "
                "{\"status\": \"ok\", \"device\": \"sim:NPU\", \"device_name\": \"NPU\", "
                "\"stage\": \"s1\", \"model\": \"matmul\", \"nodes\": 100, \"edges\": 200, "
                "\"in_dim\": 16, \"out_dim\": 16, \"bytes\": 12800, \"layers\": 1, "
                "\"wall_ns\": {\"mean\": 15, %s}}}}",
                bad[i]);
        fclose(f);
        pp_lookup *l = NULL;
        pp_error err = {{0}};
        EXPECT_EQ_I64(pp_lookup_load(path, &l, &err), PP_EINVAL);
        EXPECT(l == NULL);
        EXPECT_CONTAINS(err.msg, "entries[\"100,200,sim:NPU,s1\"].wall_ns: expected whole "
                                 "numbers 0 <= p25 <= p75, or neither");
    }
}

/* A size the device failed at is not a plan; nor is a stage the table lacks. */
static void test_unrunnable_and_unknown_stages(void) {
    static const entry e[] = {
        {"sim:NPU", "s1", 100, 200, 0, 0}, {"sim:GPU", "s1", 100, 200, 5000, 1},
    };
    pp_lookup *l = table(e, 2);
    pp_pipeline *p = pipeline(100, 200, 1);
    pp_plan_options o = options(5, 9);
    pp_plan plans[5];
    size_t n = search_ok(l, p, &o, plans);
    pp_error err = {{0}};
    EXPECT_EQ_U64(n, 1);
    EXPECT_STR(plans[0].stages[0].devices[0], "sim:GPU");
    pp_pipeline_free(p);
    p = pipeline(100, 200, 2);
    EXPECT_EQ_I64(pp_plan_search(l, p, &o, plans, &n, NULL, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "stage \"s2\" is not in the table");
    pp_pipeline_free(p);
    pp_lookup_free(l);

    const char *path = pp_test_path("not_lookup.json");
    pp_test_write_file(path, "{\"entries\": {}}", 15);
    EXPECT_EQ_I64(pp_lookup_load(path, &l, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "not a lookup table");
}

int main(void) {
    RUN(test_best_plan_balances_devices);
    RUN(test_equal_cycles_rank_by_total_work);
    RUN(test_data_parallel_split_from_fits);
    RUN(test_unrunnable_and_unknown_stages);
    RUN(test_no_estimate_below_the_nearest_measurement);
    RUN(test_plans_differing_in_free_stages_collapse);
    RUN(test_devices_sharing_hardware_slow_each_other);
    RUN(test_spread_adds_to_the_cycle);
    RUN(test_slowdowns_beside_several_add_up);
    RUN(test_bad_quartiles_are_refused);
    return pp_test_finish();
}
