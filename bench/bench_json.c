/* bench_json — Chrome JSON throughput beside Python's json module on the
 * same file. Prints BENCH lines (rates: above 1 is better):
 *
 *   json_write_MBps   pp_chrome_write   (baseline: json.dumps of the loaded file)
 *   json_read_MBps    pp_chrome_read    (baseline: json.load, collector off)
 *   json_read_vs_default_python_MBps    (baseline: json.load, collector on)
 *
 * The model is a streaming pipeline of about 1.1M events: per batch a
 * partition and a merge on the host thread, four execs (stage, batch, hw and
 * transfer times) on GPU and NPU streams, a stage span on a worker thread, a
 * queue counter and a three-step flow; an instant every 16 batches and an
 * annotation on every 8th exec. Each C figure is the best of 3 rounds (the
 * least disturbed on a shared machine); bench/json_python.py times Python the
 * same way. Target: ratio >= 10 for both.
 *
 * Usage: bench_json [json_python.py]  (default: beside this source file);
 * Python is $PP_PYTHON, else python3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeprof/io.h"

#define BATCHES 110000
#define ROUNDS 3

static uint32_t str(pp_model *m, const char *text) {
    uint32_t id = 0;
    pp_model_intern(m, text, strlen(text), &id);
    return id;
}

static uint32_t track(pp_model *m, pp_track_kind kind, const char *process, const char *name,
                      const char *device, int stream, unsigned flags) {
    pp_track_info t;
    uint32_t index = 0;
    pp_track_info_init(&t);
    t.kind = (uint8_t)kind;
    t.flags = flags;
    t.process = str(m, process);
    t.name = str(m, name);
    t.device = str(m, device);
    t.stream = stream;
    t.pid = 4242;
    t.tid = kind == PP_TRACK_KIND_THREAD ? 4242 + (int64_t)pp_model_track_count(m) : 0;
    t.sort_index = (int32_t)pp_model_track_count(m);
    pp_model_add_track(m, &t, &index);
    return index;
}

static void add(pp_model *m, pp_event *e) {
    if (pp_model_add_event(m, e) != PP_OK) {
        fprintf(stderr, "bench_json: cannot build the model\n");
        exit(1);
    }
}

static pp_model *build_model(void) {
    pp_model *m = NULL;
    if (pp_model_create(&m) != PP_OK)
        exit(1);
    uint32_t host = track(m, PP_TRACK_KIND_THREAD, "demo", "main", "", -1, 0);
    uint32_t worker = track(m, PP_TRACK_KIND_THREAD, "demo", "classifier", "", -1, 0);
    uint32_t dev[4] = {
        track(m, PP_TRACK_KIND_DEVICE, "GPU.0", "stream 0", "GPU.0", 0, 0),
        track(m, PP_TRACK_KIND_DEVICE, "GPU.0", "stream 1", "GPU.0", 1, 0),
        track(m, PP_TRACK_KIND_DEVICE, "NPU", "req 0", "NPU", 0, PP_TRACK_SIMULATED),
        track(m, PP_TRACK_KIND_DEVICE, "NPU", "req 1", "NPU", 1, PP_TRACK_SIMULATED),
    };
    uint32_t infer = str(m, "infer"), embedding = str(m, "Embedding"), slot = str(m, "slot");
    int64_t t0 = 1700000000000000000LL;
    for (int64_t b = 0; b < BATCHES; b++) {
        int64_t ts = t0 + b * 250123;
        pp_event e;
        pp_event_init(&e);
        e.kind = PP_EV_SPAN, e.track = host, e.name = str(m, "partition"), e.stage = embedding;
        e.role = PP_ROLE_PARTITION, e.ts_ns = ts, e.dur_ns = 12345, e.batch = b;
        add(m, &e);
        for (int d = 0; d < 4; d++) {
            e.track = dev[d], e.name = infer, e.role = PP_ROLE_EXEC;
            e.ts_ns = ts + 13000 + d * 777, e.dur_ns = 150000 + (b * 37 + d * 101) % 9999;
            e.hw_ns = (uint64_t)e.dur_ns - 20011, e.xfer_ns = 5003 + (uint64_t)d;
            add(m, &e);
            if ((b * 4 + d) % 8 == 0) {
                pp_annotation a = {.event = pp_model_event_count(m) - 1, .key = slot,
                                   .type = PP_VALUE_INT, .v.i = d};
                pp_model_add_annotation(m, &a);
            }
        }
        e.track = host, e.name = str(m, "merge"), e.role = PP_ROLE_MERGE;
        e.ts_ns = ts + 175000, e.dur_ns = 9876, e.hw_ns = 0, e.xfer_ns = 0;
        add(m, &e);
        e.track = worker, e.name = str(m, "classify"), e.stage = str(m, "Classifier");
        e.role = PP_ROLE_STAGE, e.ts_ns = ts + 186000, e.dur_ns = 60606;
        add(m, &e);
        pp_event_init(&e);
        e.kind = PP_EV_COUNTER, e.track = host, e.name = str(m, "queue depth");
        e.ts_ns = ts, e.value = (double)(b % 7); /* a depth: whole, as counters mostly are */
        add(m, &e);
        for (int phase = 0; phase < 3; phase++) {
            pp_event_init(&e);
            e.kind = PP_EV_FLOW, e.name = str(m, "batch"), e.id = (uint64_t)b + 1;
            e.phase = (uint8_t)phase, e.track = phase == 0 ? host : phase == 1 ? dev[0] : worker;
            e.ts_ns = ts + phase * 90000;
            add(m, &e);
        }
        if (b % 16 == 0) {
            pp_event_init(&e);
            e.kind = PP_EV_INSTANT, e.track = host, e.name = str(m, "checkpoint");
            e.ts_ns = ts + 1, e.batch = b;
            add(m, &e);
        }
    }
    return m;
}

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

    pp_model *m = build_model();
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
