/* bench_json — Chrome JSON throughput beside Python's json module on the
 * same file. Prints BENCH lines (rates: above 1 is better):
 *
 *   json_write_MBps   pp_chrome_write   (baseline: json.dumps of the loaded file)
 *   json_read_MBps    pp_chrome_read    (baseline: json.load, collector off)
 *   json_read_vs_default_python_MBps    (baseline: json.load, collector on)
 *
 * The model is the pipeline of about 1.1M events of bench/pipeline_trace.h.
 * Each C figure is the best of 3 rounds (the least disturbed on a shared
 * machine); bench/json_python.py times Python the same way. Target: ratio
 * >= 10 for both.
 *
 * Usage: bench_json [json_python.py]  (default: beside this source file);
 * Python is $PP_PYTHON, else python3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "pipeline_trace.h"

#define ROUNDS 3

static double seconds_since(int64_t t0) {
    return (double)(pp_now() - t0) / 1e9;
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
    double write_s = 1e9, read_s = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        int64_t t0 = pp_now();
        if (pp_chrome_write(m, path, &err) != PP_OK)
            fail("pp_chrome_write", &err);
        double s = seconds_since(t0);
        write_s = s < write_s ? s : write_s;
    }
    for (int r = 0; r < ROUNDS; r++) {
        pp_model *back = NULL;
        int64_t t0 = pp_now();
        if (pp_chrome_read(path, &back, &err) != PP_OK)
            fail("pp_chrome_read", &err);
        double s = seconds_since(t0);
        read_s = s < read_s ? s : read_s;
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
    double py_load = 0, py_dump = 0, py_load_gc = 0;
    int have_python = python_rates(script, path, &py_load, &py_dump, &py_load_gc);
    remove(path);
    pp_model_free(m);
    if (!have_python) {
        fprintf(stderr, "bench_json: the Python baseline (%s) failed; no figures\n", script);
        return 1;
    }
    double write_rate = mb / write_s, read_rate = mb / read_s;
    printf("BENCH json_write_MBps value=%.1f unit=MB/s baseline=python_json:%.1f ratio=%.2f\n",
           write_rate, py_dump, write_rate / py_dump);
    printf("BENCH json_read_MBps value=%.1f unit=MB/s baseline=python_json:%.1f ratio=%.2f\n",
           read_rate, py_load, read_rate / py_load);
    /* the same read against json.load as programs run it (collector on) */
    printf("BENCH json_read_vs_default_python_MBps value=%.1f unit=MB/s baseline=python_json_gc_on:%.1f "
           "ratio=%.2f\n", read_rate, py_load_gc, read_rate / py_load_gc);
    return 0;
}
