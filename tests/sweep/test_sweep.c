/* Sweeps on simulated devices whose model is exact in integers (a 1 GB/s
 * bus moves 1 byte per ns, 1 and 2 GFLOP/s compute 1 and 2 FLOP per ns),
 * so hardware and transfer times are known from the workload alone and
 * every table built from them is the same however the sweep was run:
 * whole, killed and resumed, or in shards. Wall times are real time and
 * are left out of the comparisons. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeprof/sweep.h"
#include "testutil.h"

#define CONFIG_FMT                                                                                 \
    "{\"name\": \"t\", \"features\": 8, \"warmup\": 1, \"iterations\": %d,"                       \
    " \"min_time_ms\": 0, \"sim_bus_gbps\": 1, \"sim_devices\": ["                                                    \
    "  {\"name\": \"A\", \"launch_ns\": 2000, \"gflops\": 1},"                                    \
    "  {\"name\": \"B\", \"launch_ns\": 2000, \"gflops\": 2}],"                                   \
    " \"sizes\": [{\"nodes\": 32, \"edges\": 64}, {\"nodes\": 64, \"edges\": 128},"               \
    "   {\"nodes\": 5000000, \"edges\": 0}],"                                                     \
    " \"devices\": [\"sim:A\", \"sim:B\"],"                                                       \
    " \"stages\": [{\"name\": \"mm\", \"model\": \"matmul\", \"out_dim\": 8},"                    \
    "   {\"name\": \"sg\", \"model\": \"sage\", \"out_dim\": 8}]}"
#define NCOMB 12 /* 3 sizes x 2 devices x 2 stages */

static const char *config_path(int iterations) {
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    char name[64], text[2048];
    snprintf(name, sizeof name, "sweep_config_%d.json", iterations);
    snprintf(p, 512, "%s", pp_test_path(name));
    snprintf(text, sizeof text, CONFIG_FMT, iterations);
    pp_test_write_file(p, text, strlen(text));
    return p;
}

static pp_sweep_config *load(int iterations) {
    pp_sweep_config *c = NULL;
    pp_error err = {{0}};
    int rc = pp_sweep_config_load(config_path(iterations), &c, &err);
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "config: %s", err.msg);
    return c;
}

/* A fresh (removed) directory under the test tmp dir; the last 32 names
 * stay valid. */
static const char *fresh_dir(const char *name) {
    static char dirs[32][512];
    static int next;
    char *d = dirs[next++ % 32];
    snprintf(d, 512, "%s", pp_test_path(name));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    if (system(cmd) != 0)
        pp_test_fail(__FILE__, __LINE__, "cannot clear %s", d);
    return d;
}

static int run(const pp_sweep_config *c, const char *dir, pp_sweep_options *o,
               pp_sweep_result *res, pp_error *err) {
    pp_sweep_options none = {0};
    return pp_sweep_run(c, dir, o ? o : &none, res, err);
}

static json_t *load_json(const char *dir, const char *file) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    json_t *v = json_load_file(path, 0, NULL);
    if (!v)
        pp_test_fail(__FILE__, __LINE__, "cannot read %s", path);
    return v;
}

/* The tables without anything measured in real time. */
static json_t *deterministic(const char *dir, const char *file) {
    json_t *t = load_json(dir, file);
    const char *key;
    json_t *e;
    json_object_foreach(json_object_get(t, "entries"), key, e) {
        json_object_del(e, "wall_ns");
        json_object_del(e, "wall");
    }
    return t;
}

static void expect_same_tables(const char *a, const char *b) {
    static const char *const files[] = {"lookup_table.json", "bandwidth_table.json"};
    for (int i = 0; i < 2; i++) {
        json_t *x = deterministic(a, files[i]), *y = deterministic(b, files[i]);
        pp_test_checks++;
        if (!x || !y || !json_equal(x, y))
            pp_test_fail(__FILE__, __LINE__, "%s differs between %s and %s", files[i], a, b);
        json_decref(x);
        json_decref(y);
    }
}

static int count_lines(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    size_t len = 0;
    char *text = pp_test_read_file(path, &len);
    int n = 0;
    for (size_t i = 0; text && i < len; i++)
        n += text[i] == '\n';
    free(text);
    return n;
}

static const char *whole; /* the reference: one uninterrupted sweep */

static void test_whole_sweep_models_times_exactly(void) {
    pp_sweep_config *c = load(3);
    whole = fresh_dir("sweep_whole");
    pp_sweep_result res;
    pp_error err = {{0}};
    EXPECT_EQ_I64(run(c, whole, NULL, &res, &err), PP_OK);
    EXPECT_EQ_U64(res.total, NCOMB);
    EXPECT_EQ_U64(res.done, NCOMB);
    EXPECT_EQ_U64(res.failed, 4); /* the 5M-node size on both devices, both stages */
    EXPECT(res.complete);
    EXPECT_EQ_I64(count_lines(whole), NCOMB);

    json_t *lk = load_json(whole, "lookup_table.json");
    json_t *entries = json_object_get(lk, "entries");
    /* matmul 32 x 8 -> 8 on A: 1024 + 1024 bytes at 1 byte/ns, 4096 FLOP at 1/ns */
    json_t *e = json_object_get(entries, "32,64,sim:A,mm");
    EXPECT_EQ_I64(json_integer_value(json_object_get(json_object_get(e, "hw_ns"), "mean")), 6144);
    EXPECT_EQ_I64(json_integer_value(json_object_get(json_object_get(e, "hw_ns"), "p50")), 6144);
    /* the modeled hardware time is the same every run: its quartiles too */
    EXPECT_EQ_I64(json_integer_value(json_object_get(json_object_get(e, "hw_ns"), "p25")), 6144);
    EXPECT_EQ_I64(json_integer_value(json_object_get(json_object_get(e, "hw_ns"), "p75")), 6144);
    json_t *wall = json_object_get(e, "wall_ns");
    EXPECT(json_integer_value(json_object_get(wall, "min")) <=
               json_integer_value(json_object_get(wall, "p25")) &&
           json_integer_value(json_object_get(wall, "p25")) <=
               json_integer_value(json_object_get(wall, "p50")) &&
           json_integer_value(json_object_get(wall, "p50")) <=
               json_integer_value(json_object_get(wall, "p75")) &&
           json_integer_value(json_object_get(wall, "p75")) <=
               json_integer_value(json_object_get(wall, "max")));
    EXPECT_NEAR(json_real_value(json_object_get(json_object_get(e, "hw_ns"), "std")), 0.0, 0);
    EXPECT_EQ_I64(json_integer_value(json_object_get(e, "transfer_ns")), 2048);
    EXPECT_EQ_I64(json_integer_value(json_object_get(e, "compute_ns")), 4096);
    EXPECT(json_is_true(json_object_get(e, "simulated")));
    /* the same on B at 2 FLOP/ns: compute halves */
    e = json_object_get(entries, "64,128,sim:B,mm");
    pp_workload w = {.kind = PP_WORKLOAD_MATMUL, .nodes = 64, .in_dim = 8, .out_dim = 8,
                     .layers = 1};
    EXPECT_EQ_I64(json_integer_value(json_object_get(json_object_get(e, "hw_ns"), "mean")),
                  2 * 64 * 8 * 4 + (int64_t)pp_workload_flops(&w) / 2);
    e = json_object_get(entries, "5000000,0,sim:A,sg");
    EXPECT_STR(json_string_value(json_object_get(e, "status")), "failed");
    EXPECT_CONTAINS(json_string_value(json_object_get(e, "reason")), "workload nodes: 5000000");
    json_decref(lk);

    /* transfer = bytes / (1 byte/ns): a = 1 ns/byte, b = 0, 1e9 bytes/s */
    json_t *bw = load_json(whole, "bandwidth_table.json");
    json_t *t = json_object_get(json_object_get(json_object_get(bw, "entries"), "sim:B,sg"),
                                "transfer");
    EXPECT_NEAR(json_real_value(json_object_get(t, "a_ns_per_byte")), 1.0, 1e-12);
    EXPECT_NEAR(json_real_value(json_object_get(t, "b_ns")), 0.0, 1e-6);
    EXPECT_NEAR(json_real_value(json_object_get(t, "r2")), 1.0, 1e-12);
    EXPECT_NEAR(json_real_value(json_object_get(t, "bandwidth_bytes_per_s")), 1e9, 1e-3);
    EXPECT_EQ_I64(json_integer_value(json_object_get(t, "points")), 2);
    json_decref(bw);
    pp_sweep_config_free(c);
}

/* Stopped after 5 combinations with half a record written after them (what
 * a kill during the sixth write leaves), then resumed: nothing is measured
 * twice, the cut line is replaced, and the tables equal the whole run's. */
static void test_interrupted_sweep_resumes_to_same_tables(void) {
    pp_sweep_config *c = load(3);
    const char *dir = fresh_dir("sweep_resumed");
    pp_sweep_result res;
    pp_error err = {{0}};
    pp_sweep_options o = {.limit = 5};
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_OK);
    EXPECT_EQ_U64(res.done, 5);
    EXPECT(!res.complete);
    char path[600];
    snprintf(path, sizeof path, "%s/lookup_table.json", dir);
    struct stat sb;
    EXPECT(stat(path, &sb) != 0); /* no tables from an unfinished sweep */
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    FILE *f = fopen(path, "ab");
    fputs("{\"index\":5,\"key\":\"32,64,sim:B,", f);
    fclose(f);

    o = (pp_sweep_options){.resume = 1};
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_OK);
    EXPECT_EQ_U64(res.resumed, 5);
    EXPECT_EQ_U64(res.done, NCOMB);
    EXPECT(res.complete);
    EXPECT_EQ_I64(count_lines(dir), NCOMB);
    if (whole)
        expect_same_tables(whole, dir);
    pp_sweep_config_free(c);
}

static void test_shards_merge_to_the_whole_sweep(void) {
    pp_sweep_config *c = load(3);
    const char *d[3] = {fresh_dir("sweep_s1"), fresh_dir("sweep_s2"), fresh_dir("sweep_s3")};
    pp_sweep_result res;
    pp_error err = {{0}};
    for (int i = 0; i < 3; i++) {
        pp_sweep_options o = {.shard = i + 1, .shards = 3};
        EXPECT_EQ_I64(run(c, d[i], &o, &res, &err), PP_OK);
        EXPECT_EQ_U64(res.total, NCOMB / 3);
        EXPECT(res.complete);
    }
    const char *out = fresh_dir("sweep_merged");
    EXPECT_EQ_I64(pp_sweep_merge(d, 3, out, &err), PP_OK);
    EXPECT_EQ_I64(count_lines(out), NCOMB);
    if (whole)
        expect_same_tables(whole, out);
    /* the merged directory is a whole sweep: resuming it measures nothing */
    pp_sweep_options o = {.resume = 1};
    EXPECT_EQ_I64(run(c, out, &o, &res, &err), PP_OK);
    EXPECT_EQ_U64(res.resumed, NCOMB);

    /* mismatches, each named */
    const char *twice[3] = {d[0], d[0], d[2]};
    EXPECT_EQ_I64(pp_sweep_merge(twice, 3, fresh_dir("sweep_m1"), &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "shard 1/3 given twice");
    EXPECT_EQ_I64(pp_sweep_merge(d, 2, fresh_dir("sweep_m2"), &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "shard 3/3 is missing");
    pp_sweep_config *other = load(4);
    const char *od = fresh_dir("sweep_other");
    pp_sweep_options o3 = {.shard = 3, .shards = 3};
    EXPECT_EQ_I64(run(other, od, &o3, &res, &err), PP_OK);
    const char *mixed[3] = {d[0], d[1], od};
    EXPECT_EQ_I64(pp_sweep_merge(mixed, 3, fresh_dir("sweep_m3"), &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "are sweeps of different configs");
    const char *part = fresh_dir("sweep_part");
    pp_sweep_options lim = {.shard = 3, .shards = 3, .limit = 1};
    EXPECT_EQ_I64(run(c, part, &lim, &res, &err), PP_OK);
    const char *unfinished[3] = {d[0], d[1], part};
    EXPECT_EQ_I64(pp_sweep_merge(unfinished, 3, fresh_dir("sweep_m4"), &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "shard 3/3 is incomplete: 1 of 4 combinations");
    EXPECT_EQ_I64(pp_sweep_merge(d, 3, out, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "already holds a sweep");
    pp_sweep_config_free(other);
    pp_sweep_config_free(c);
}

/* A directory holds one sweep: running into it again needs --resume, and
 * resuming needs the same config and shard. */
static void test_directory_guards_its_sweep(void) {
    pp_sweep_config *c = load(3), *other = load(4);
    const char *dir = fresh_dir("sweep_guard");
    pp_sweep_result res;
    pp_error err = {{0}};
    pp_sweep_options o = {.limit = 1};
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_OK);
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "already holds a sweep");
    EXPECT_CONTAINS(err.msg, "--resume continues it");
    o.resume = 1;
    EXPECT_EQ_I64(run(other, dir, &o, &res, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "holds a sweep of another config");
    EXPECT_CONTAINS(err.msg, pp_sweep_config_fingerprint(c));
    o.shard = 1, o.shards = 2;
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "holds shard 1/1 of this sweep; this run is shard 1/2");
    o.shard = 3;
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "shard 3/2");
    pp_sweep_config_free(other);
    pp_sweep_config_free(c);
}

static void append(const char *dir, const char *name, const char *text) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "ab");
    fputs(text, f);
    fclose(f);
}

/* Only a kill's cut-off last line is dropped: a damaged line before other
 * records, or a record given twice, is refused naming the line, and a
 * raw.jsonl without its fingerprint.json is not taken for any sweep. */
static void test_damaged_records_are_refused(void) {
    pp_sweep_config *c = load(3);
    const char *dir = fresh_dir("sweep_damaged");
    pp_sweep_result res;
    pp_error err = {{0}};
    pp_sweep_options o = {.limit = 2};
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_OK);
    char path[600], *text;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    text = pp_test_read_file(path, &len);
    char *second = text ? strchr(text, '\n') + 1 : NULL;

    /* the first record again, after the second */
    char *first = text ? strndup(text, (size_t)(second - text)) : NULL;
    append(dir, "raw.jsonl", first ? first : "");
    o.resume = 1;
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "raw.jsonl:3: a second record of the same combination");

    /* a line that is not a record, with a record after it */
    pp_test_write_file(path, text, (size_t)(second - text));
    append(dir, "raw.jsonl", "{\"index\": 1, \"key\": \"64,128,sim:A,sg\", \"status\": \"ok\"}\n");
    append(dir, "raw.jsonl", second);
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "raw.jsonl:2: not a record of this sweep's config");

    snprintf(path, sizeof path, "%s/fingerprint.json", dir);
    remove(path);
    EXPECT_EQ_I64(run(c, dir, &o, &res, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "has raw.jsonl but no fingerprint.json");
    free(first);
    free(text);
    pp_sweep_config_free(c);
}

/* Every mistake a config can hold is reported against its key. */
static void test_bad_configs_name_the_key(void) {
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"[]", "expected an object at the top"},
        {"{\"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": [\"cpu\"], \"stages\": "
         "[{\"name\": \"a\", \"out_dim\": 4}], \"featurs\": 4}",
         "featurs: unknown key"},
        {"{\"features\": 4, \"devices\": [\"cpu\"], \"stages\": [{\"name\": \"a\", "
         "\"out_dim\": 4}]}",
         "sizes: expected a list of 1.."},
        {"{\"features\": 4, \"sizes\": [{\"nodes\": 8}], \"devices\": [\"cpu\"], \"stages\": "
         "[{\"name\": \"a\", \"out_dim\": 4}]}",
         "sizes[0]: needs \"nodes\" >= 1 and \"edges\" >= 0"},
        {"{\"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": [\"cpu\"], \"stages\": "
         "[{\"name\": \"a\", \"out_dim\": 4}]}",
         "sizes[0].features: missing"},
        {"{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}, {\"nodes\": 8, \"edges\": "
         "8}], \"devices\": [\"cpu\"], \"stages\": [{\"name\": \"a\", \"out_dim\": 4}]}",
         "sizes[1]: nodes 8, edges 8 repeats sizes[0]"},
        {"{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": "
         "[\"opnvino:CPU\"], \"stages\": [{\"name\": \"a\", \"out_dim\": 4}]}",
         "devices[0]: unknown backend \"opnvino\""},
        {"{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": [\"cpu\"], "
         "\"stages\": [{\"name\": \"a\", \"model\": \"gcn\", \"out_dim\": 4}]}",
         "stages[0].model: unknown model \"gcn\" (have: matmul, sage)"},
        {"{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": [\"cpu\"], "
         "\"stages\": [{\"name\": \"a\"}]}",
         "stages[0].out_dim: missing"},
        {"{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": [\"cpu\"], "
         "\"stages\": [{\"name\": \"a\", \"out_dim\": 4}], \"iterations\": 0}",
         "iterations: 0 (expected 1..1000000)"},
        {"{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": [\"cpu\"], "
         "\"stages\": [{\"name\": \"a\", \"out_dim\": 4}], \"min_time_ms\": 60001}",
         "min_time_ms: 60001 (expected 0..60000)"},
        {"{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": \"many\"}]}",
         "sizes[0].edges: expected a whole number"},
        {"{\"features\": 4,", "sweep_bad.json:1:"},
    };
    const char *path = pp_test_path("sweep_bad.json");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pp_test_write_file(path, cases[i].text, strlen(cases[i].text));
        pp_sweep_config *c = NULL;
        pp_error err = {{0}};
        EXPECT_EQ_I64(pp_sweep_config_load(path, &c, &err), PP_EINVAL);
        EXPECT_CONTAINS(err.msg, cases[i].message);
        EXPECT_CONTAINS(err.msg, "sweep_bad.json");
        pp_sweep_config_free(c);
    }
    pp_sweep_config *c = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_sweep_config_load(pp_test_path("no_such.json"), &c, &err), PP_ENOTFOUND);
}

static const char *fingerprint_of(const char *text) {
    static char fp[4][17];
    static int next;
    const char *path = pp_test_path("sweep_fp.json");
    pp_test_write_file(path, text, strlen(text));
    pp_sweep_config *c = NULL;
    pp_error err = {{0}};
    char *out = fp[next++ % 4];
    out[0] = '\0';
    if (pp_sweep_config_load(path, &c, &err) == PP_OK)
        snprintf(out, 17, "%s", pp_sweep_config_fingerprint(c));
    else
        pp_test_fail(__FILE__, __LINE__, "config: %s", err.msg);
    pp_sweep_config_free(c);
    return out;
}

/* The fingerprint is of what the config says, not how: defaults written
 * out, keys reordered and spacing change nothing; a changed value does. */
static void test_fingerprint_follows_meaning(void) {
    const char *a = fingerprint_of(
        "{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": "
        "[\"cpu\"], \"stages\": [{\"name\": \"a\", \"out_dim\": 4}]}");
    const char *b = fingerprint_of(
        "{\"stages\": [{\"out_dim\": 4, \"name\": \"a\", \"model\": \"matmul\", \"layers\": 1}],"
        "\n \"devices\": [\"cpu\"], \"warmup\": 10, \"iterations\": 50, \"seed\": 1,\n"
        " \"min_time_ms\": 20,"
        " \"sizes\": [{\"edges\": 8, \"nodes\": 8, \"features\": 4}], \"name\": \"sweep\"}");
    EXPECT_STR(a, b);
    EXPECT_EQ_I64(strlen(a), 16);
    const char *c = fingerprint_of(
        "{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": "
        "[\"cpu\"], \"stages\": [{\"name\": \"a\", \"out_dim\": 4}], \"iterations\": 51}");
    EXPECT(strcmp(a, c) != 0);
    const char *d = fingerprint_of(
        "{\"features\": 4, \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": "
        "[\"cpu\"], \"stages\": [{\"name\": \"a\", \"out_dim\": 4}], \"min_time_ms\": 5}");
    EXPECT(strcmp(a, d) != 0);
}

/* min_time_ms: a phase goes on past `iterations` until it has lasted that
 * long, and the record counts the runs it timed. A sim device of 2 us
 * launches runs 1 iteration for at least 50 ms: thousands of runs on an
 * idle machine, and on a loaded one still more than one, timed over at
 * least half of those 50 ms (the rest being the few ns between runs). */
static void test_min_time_lengthens_short_phases(void) {
    static const char text[] =
        "{\"features\": 8, \"warmup\": 0, \"iterations\": 1, \"min_time_ms\": 50,"
        " \"sim_devices\": [{\"name\": \"A\", \"launch_ns\": 2000, \"gflops\": 1}],"
        " \"sizes\": [{\"nodes\": 8, \"edges\": 8}], \"devices\": [\"sim:A\"],"
        " \"stages\": [{\"name\": \"a\", \"out_dim\": 8}]}";
    const char *path = pp_test_path("sweep_min_time.json");
    pp_test_write_file(path, text, strlen(text));
    pp_sweep_config *c = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_sweep_config_load(path, &c, &err), PP_OK);
    const char *dir = fresh_dir("sweep_min_time");
    pp_sweep_result res;
    EXPECT_EQ_I64(run(c, dir, NULL, &res, &err), PP_OK);
    json_t *lk = load_json(dir, "lookup_table.json");
    json_t *e = json_object_get(json_object_get(lk, "entries"), "8,8,sim:A,a");
    json_int_t runs = json_integer_value(json_object_get(e, "iterations"));
    json_int_t mean = json_integer_value(json_object_get(json_object_get(e, "wall_ns"), "mean"));
    EXPECT(runs > 1);
    EXPECT(runs * mean >= 25000000);
    json_decref(lk);
    pp_sweep_config_free(c);
}

int main(void) {
    RUN(test_whole_sweep_models_times_exactly);
    RUN(test_min_time_lengthens_short_phases);
    RUN(test_interrupted_sweep_resumes_to_same_tables);
    RUN(test_shards_merge_to_the_whole_sweep);
    RUN(test_directory_guards_its_sweep);
    RUN(test_damaged_records_are_refused);
    RUN(test_bad_configs_name_the_key);
    RUN(test_fingerprint_follows_meaning);
    return pp_test_finish();
}
