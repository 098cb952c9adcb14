/* Mutation fuzzing of the JSON files users hand to pipeprof besides traces:
 * sweep configs, lookup tables and pipeline files. Whatever bytes a loader
 * is given, it returns PP_OK or an error code with a message, never
 * crashes, never leaks (run under ASan in CI). The seeds are the shipped
 * examples and a small lookup table; PP_FUZZ_ITERATIONS overrides the
 * number of mutants per loader. */
#include <stdlib.h>

#include "pipeprof/pipeline.h"
#include "pipeprof/sweep.h"
#include "testutil.h"

static const char lookup_seed[] =
    "{\"format\": \"pipeprof-lookup\", \"version\": 1, \"sweep\": \"s\", \"fingerprint\": \"ab\","
    " \"warmup\": 1, \"iterations\": 2, \"entries\": {"
    "\"64,256,sim:NPU,embed\": {\"key\": \"64,256,sim:NPU,embed\", \"nodes\": 64, \"edges\": 256,"
    " \"in_dim\": 16, \"device\": \"sim:NPU\", \"stage\": \"embed\", \"model\": \"matmul\","
    " \"out_dim\": 16, \"bytes\": 4096, \"layers\": 1, \"device_name\": \"NPU\","
    " \"label\": \"NPU (simulated)\", \"simulated\": true, \"status\": \"ok\", \"iterations\": 2,"
    " \"wall_ns\": {\"mean\": 5000, \"std\": 1.5, \"min\": 4000, \"max\": 6000, \"p50\": 5000},"
    " \"hw_ns\": {\"mean\": 4000, \"std\": 0, \"min\": 4000, \"max\": 4000, \"p50\": 4000},"
    " \"xfer_ns\": {\"mean\": 300, \"std\": 0, \"min\": 300, \"max\": 300, \"p50\": 300},"
    " \"total_ns\": 4000, \"total_from\": \"hw\", \"transfer_ns\": 300,"
    " \"transfer_from\": \"device\", \"compute_ns\": 3700},"
    "\"128,512,sim:NPU,embed\": {\"key\": \"128,512,sim:NPU,embed\", \"nodes\": 128,"
    " \"edges\": 512, \"in_dim\": 16, \"device\": \"sim:NPU\", \"stage\": \"embed\","
    " \"model\": \"matmul\", \"out_dim\": 16, \"bytes\": 8192, \"layers\": 1,"
    " \"status\": \"failed\", \"reason\": \"too big\"}}}";

/* What a loader returns: 0 or an error; `close` frees what it loaded. */
typedef int (*load_fn)(const char *path, void **out, pp_error *err);
typedef void (*free_fn)(void *obj);

static int load_sweep(const char *path, void **out, pp_error *err) {
    return pp_sweep_config_load(path, (pp_sweep_config **)out, err);
}
static void free_sweep(void *c) { pp_sweep_config_free(c); }
static int load_lookup(const char *path, void **out, pp_error *err) {
    return pp_lookup_load(path, (pp_lookup **)out, err);
}
static void free_lookup(void *l) { pp_lookup_free(l); }
static int load_pipeline(const char *path, void **out, pp_error *err) {
    return pp_pipeline_load(path, (pp_pipeline **)out, err);
}
static void free_pipeline(void *p) { pp_pipeline_free(p); }

/* Mutants of `seed` through `load`: every one loads or is refused with a
 * message, and some of each happen (else the mutants test nothing). */
static void fuzz(const char *what, const char *seed, size_t len, load_fn load, free_fn release) {
    const char *env = getenv("PP_FUZZ_ITERATIONS");
    long iterations = env ? atol(env) : 1500;
    char name[64];
    snprintf(name, sizeof name, "fuzz_%s.json", what);
    const char *path = pp_test_path(name);
    size_t cap = len * 2;
    char *buf = malloc(cap);
    long ok = 0, bad = 0;
    for (long it = 0; it < iterations; it++) {
        memcpy(buf, seed, len);
        size_t n = pp_test_mutate_text(buf, len, cap);
        pp_test_write_file(path, buf, n);
        void *obj = NULL;
        pp_error err = {{0}};
        int rc = load(path, &obj, &err);
        if (rc == PP_OK) {
            ok++;
            EXPECT(obj != NULL);
        } else {
            bad++;
            EXPECT(obj == NULL);
            EXPECT(rc < 0);
            EXPECT(err.msg[0] != 0);
        }
        release(obj);
        if (pp_test_failures) {
            fprintf(stderr, "%s: mutant %ld kept as %s\n", what, it, path);
            break;
        }
    }
    fprintf(stderr, "%s: %ld mutants: %ld loaded, %ld refused\n", what, iterations, ok, bad);
    EXPECT(ok > 0 && bad > 0);
    free(buf);
}

/* The example file at PP_SOURCE_DIR/rel, as the seed of fuzz(). */
static void fuzz_example(const char *what, const char *rel, load_fn load, free_fn release) {
    const char *src = getenv("PP_SOURCE_DIR");
    if (!src)
        pp_test_skip("PP_SOURCE_DIR is not set (run through ctest)");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", src, rel);
    size_t len = 0;
    char *seed = pp_test_read_file(path, &len);
    EXPECT(seed != NULL);
    if (seed)
        fuzz(what, seed, len, load, release);
    free(seed);
}

static void test_sweep_config_mutants(void) {
    fuzz_example("sweep", "examples/sweep.json", load_sweep, free_sweep);
}

static void test_lookup_table_mutants(void) {
    fuzz("lookup", lookup_seed, sizeof lookup_seed - 1, load_lookup, free_lookup);
}

static void test_pipeline_file_mutants(void) {
    fuzz_example("pipeline", "examples/gnn_pipeline.json", load_pipeline, free_pipeline);
}

int main(void) {
    RUN(test_sweep_config_mutants);
    RUN(test_lookup_table_mutants);
    RUN(test_pipeline_file_mutants);
    return pp_test_finish();
}
