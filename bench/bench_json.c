/* bench_json — Chrome JSON throughput beside simdjson and Python's json
 * module on the same file. Prints BENCH lines (rates: above 1 is better):
 *
 *   json_write_MBps   pp_chrome_write   (baseline: json.dumps of the loaded file)
 *   json_read_MBps    pp_chrome_read    (baseline: json.load, collector off)
 *   json_read_vs_default_python_MBps    (baseline: json.load, collector on)
 *   json_read_vs_simdjson_MBps   pp_chrome_read building the model
 *                     (baseline: simdjson On-Demand walking every field)
 *   json_read_vs_simdjson_model_MBps  the same read
 *                     (baseline: simdjson On-Demand building the model, the
 *                     alternative to adopting it: simdjson_model_file)
 *   json_write_vs_simdjson_MBps  pp_chrome_write from the model
 *                     (baseline: simdjson writing its DOM minified)
 *   json_read_vs_yyjson_MBps  pp_chrome_read building the model
 *                     (baseline: yyjson's DOM parse of the same text, already
 *                     in memory, into memory already faulted in:
 *                     bench/yyjson_baseline.h)
 *   json_read_vs_yyjson_file_MBps  the same read (baseline: yyjson_read_file,
 *                     the file read into fresh memory and parsed into a
 *                     fresh DOM, freed: timed as pp_chrome_read is)
 *
 * The model is the pipeline of about 1.1M events of bench/pipeline_trace.h.
 * Each figure is the best of 3 rounds (the least disturbed on a shared
 * machine); bench/json_python.py times Python the same way. The lines
 * against Python are wall-clock rates; those against simdjson are MB per
 * second of this process's CPU time (user + system, page faults included),
 * which a machine shared with other work disturbs far less, for both sides.
 * Targets: ratio >= 10 against Python, >= 1 against simdjson
 * (bench/simdjson_baseline.h; without simdjson at build time those lines
 * are left out with a note) and against yyjson (left out without
 * PIPEPROF_YYJSON_DIR).
 *
 * Usage: bench_json [json_python.py]  (default: beside this source file);
 * Python is $PP_PYTHON, else python3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "pipeline_trace.h"
#ifdef PP_HAVE_SIMDJSON
#include "simdjson_baseline.h"
#endif
#ifdef PP_HAVE_YYJSON
#include "yyjson_baseline.h"
#endif

#define ROUNDS 3

static double seconds_since(int64_t t0) {
    return (double)(pp_now() - t0) / 1e9;
}

/* CPU time of this process, user + system, in seconds. */
static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char *what, const pp_error *err) {
    fprintf(stderr, "bench_json: %s failed: %s\n", what, err->msg);
    exit(1);
}

/* Runs the Python baseline and reads its three figures; 0 when it failed. */
static int python_rates(const char *script, const char *path, double *load, double *dump,
                        double *load_gc) {
    const char *py = getenv("PP_PYTHON");
    char cmd[3 * 4096 + 16], line[256];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", py && *py ? py : "python3", script, path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    int found = 0;
    while (fgets(line, sizeof line, p)) {
        found += sscanf(line, "load_MBps=%lf", load) == 1;
        found += sscanf(line, "dump_MBps=%lf", dump) == 1;
        found += sscanf(line, "load_gc_MBps=%lf", load_gc) == 1;
    }
    return pclose(p) == 0 && found == 3;
}

/* Best-of-ROUNDS simdjson rates on the file at `path` (MB per CPU second): walking it,
 * building the model of its `events` events from it, writing it; 0 without simdjson,
 * with a note saying why. */
static void simdjson_rates(const char *path, size_t events, double *read_rate, double *model_rate,
                           double *write_rate) {
    *read_rate = *model_rate = *write_rate = 0;
#ifdef PP_HAVE_SIMDJSON
    char out[4200];
    snprintf(out, sizeof out, "%s.simdjson", path);
    struct stat st;
    double mb = stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0, read_s = 1e9, write_s = 1e9;
    double model_s = 1e9;
    size_t bytes = 0;
    for (int r = 0; r < ROUNDS; r++) {
        size_t walked = 0;
        uint64_t sum = 0;
        double w = 0, t0 = cpu_seconds();
        if (simdjson_walk_file(path, &walked, &sum) != 0) {
            fprintf(stderr, "bench_json: simdjson failed on %s\n", path);
            exit(1);
        }
        double s = cpu_seconds() - t0;
        pp_model *m = NULL;
        t0 = cpu_seconds();
        if (simdjson_model_file(path, &m) != 0) {
            fprintf(stderr, "bench_json: simdjson failed to build the model of %s\n", path);
            exit(1);
        }
        double ms = cpu_seconds() - t0;
        if (pp_model_event_count(m) != events) {
            fprintf(stderr, "bench_json: simdjson built %zu events of %zu\n", pp_model_event_count(m), events);
            exit(1);
        }
        pp_model_free(m);
        model_s = ms < model_s ? ms : model_s;
        if (simdjson_write_file(path, out, &w, &bytes) != 0) {
            fprintf(stderr, "bench_json: simdjson failed to write %s\n", out);
            exit(1);
        }
        read_s = s < read_s ? s : read_s;
        write_s = w < write_s ? w : write_s;
    }
    remove(out);
    fprintf(stderr, "bench_json: simdjson kernel %s\n", simdjson_kernel());
    *read_rate = mb / read_s;
    *model_rate = mb / model_s;
    *write_rate = (double)bytes / 1e6 / write_s;
#else
    (void)path;
    (void)events;
    fprintf(stderr, "bench_json: simdjson (libsimdjson-dev) was not found at build time; "
                    "the json_*_vs_simdjson lines are left out\n");
#endif
}

/* yyjson's DOM parse of the file at `path`, MB per CPU second (best of
 * ROUNDS): into warm memory, and from the file into fresh memory in
 * *file_rate; 0 without yyjson, with a note saying why. */
static double yyjson_rate(const char *path, double *file_rate) {
    *file_rate = 0;
#ifdef PP_HAVE_YYJSON
    struct stat st;
    double cpu_s = 0, file_s = 0;
    size_t values = 0;
    if (stat(path, &st) != 0 || yyjson_dom_parse_cpu(path, ROUNDS, &cpu_s, &values) != 0 ||
        yyjson_file_parse_cpu(path, ROUNDS, &file_s) != 0) {
        fprintf(stderr, "bench_json: yyjson failed on %s\n", path);
        exit(1);
    }
    fprintf(stderr, "bench_json: yyjson %s, %zu values\n", yyjson_baseline_version(), values);
    *file_rate = (double)st.st_size / 1e6 / file_s;
    return (double)st.st_size / 1e6 / cpu_s;
#else
    (void)path;
    fprintf(stderr, "bench_json: yyjson's source was not given at build time (cmake "
                    "-DPIPEPROF_YYJSON_DIR=...); the json_read_vs_yyjson line is left out\n");
    return 0;
#endif
}

int main(int argc, char **argv) {
    char script[4096], path[4096];
    if (argc > 1) {
        snprintf(script, sizeof script, "%s", argv[1]);
    } else { /* the script lies beside this file */
        snprintf(script, sizeof script, "%s", __FILE__);
        char *slash = strrchr(script, '/');
        snprintf(slash ? slash + 1 : script, sizeof script - (size_t)(slash ? slash + 1 - script : 0),
                 "json_python.py");
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/pp_bench_json_%ld.json", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());

    pp_model *m = build_pipeline_model();
    pp_error err = {{0}};
    double write_s = 1e9, read_s = 1e9, write_cpu = 1e9, read_cpu = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        double c0 = cpu_seconds();
        int64_t t0 = pp_now();
        if (pp_chrome_write(m, path, &err) != PP_OK)
            fail("pp_chrome_write", &err);
        double s = seconds_since(t0), c = cpu_seconds() - c0;
        write_s = s < write_s ? s : write_s;
        write_cpu = c < write_cpu ? c : write_cpu;
    }
    for (int r = 0; r < ROUNDS; r++) {
        pp_model *back = NULL;
        double c0 = cpu_seconds();
        int64_t t0 = pp_now();
        if (pp_chrome_read(path, &back, &err) != PP_OK)
            fail("pp_chrome_read", &err);
        double s = seconds_since(t0), c = cpu_seconds() - c0;
        read_s = s < read_s ? s : read_s;
        read_cpu = c < read_cpu ? c : read_cpu;
        if (pp_model_event_count(back) != pp_model_event_count(m)) {
            fprintf(stderr, "bench_json: read back %zu events of %zu\n",
                    pp_model_event_count(back), pp_model_event_count(m));
            exit(1);
        }
        pp_model_free(back);
    }
    struct stat st;
    double mb = stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
    fprintf(stderr, "bench_json: %zu events, %.1f MB of JSON\n", pp_model_event_count(m), mb);
    double simd_read = 0, simd_model = 0, simd_write = 0;
    simdjson_rates(path, pp_model_event_count(m), &simd_read, &simd_model, &simd_write);
    double yy_file = 0, yy_read = yyjson_rate(path, &yy_file);
    double py_load = 0, py_dump = 0, py_load_gc = 0;
    int have_python = python_rates(script, path, &py_load, &py_dump, &py_load_gc);
    remove(path);
    pp_model_free(m);
    double write_rate = mb / write_s, read_rate = mb / read_s;
    if (simd_read > 0) {
        printf("BENCH json_read_vs_simdjson_MBps value=%.1f unit=MB/cpu-s baseline=simdjson_ondemand_walk:%.1f "
               "ratio=%.2f\n", mb / read_cpu, simd_read, mb / read_cpu / simd_read);
        printf("BENCH json_read_vs_simdjson_model_MBps value=%.1f unit=MB/cpu-s "
               "baseline=simdjson_ondemand_model:%.1f ratio=%.2f\n", mb / read_cpu, simd_model,
               mb / read_cpu / simd_model);
        printf("BENCH json_write_vs_simdjson_MBps value=%.1f unit=MB/cpu-s baseline=simdjson_dom_minify:%.1f "
               "ratio=%.2f\n", mb / write_cpu, simd_write, mb / write_cpu / simd_write);
    }
    if (yy_read > 0)
        printf("BENCH json_read_vs_yyjson_MBps value=%.1f unit=MB/cpu-s baseline=yyjson_dom_warm:%.1f "
               "ratio=%.2f\n", mb / read_cpu, yy_read, mb / read_cpu / yy_read);
    if (yy_file > 0)
        printf("BENCH json_read_vs_yyjson_file_MBps value=%.1f unit=MB/cpu-s baseline=yyjson_read_file:%.1f "
               "ratio=%.2f\n", mb / read_cpu, yy_file, mb / read_cpu / yy_file);
    if (!have_python) {
        fprintf(stderr, "bench_json: the Python baseline (%s) failed; no figures against it\n", script);
        return 1;
    }
    printf("BENCH json_write_MBps value=%.1f unit=MB/s baseline=python_json:%.1f ratio=%.2f\n",
           write_rate, py_dump, write_rate / py_dump);
    printf("BENCH json_read_MBps value=%.1f unit=MB/s baseline=python_json:%.1f ratio=%.2f\n",
           read_rate, py_load, read_rate / py_load);
    /* the same read against json.load as programs run it (collector on) */
    printf("BENCH json_read_vs_default_python_MBps value=%.1f unit=MB/s baseline=python_json_gc_on:%.1f "
           "ratio=%.2f\n", read_rate, py_load_gc, read_rate / py_load_gc);
    return 0;
}
