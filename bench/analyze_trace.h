/* analyze_trace.h — the trace bench_analyze and bench_pptrace measure (bench_analyze
 * hands its raw columns to the pandas baseline, bench/analyze_pandas.py).
 *
 * A streaming pipeline of BATCHES batches, 10 events each:
 *   prep   a stage span on a host thread
 *   embed  data parallel over CPU and NPU (simulated): partition, two execs
 *          with hw and transfer time and "share" annotations 0.4 / 0.6,
 *          merge, and the stage span around them
 *   cls    on two GPU streams (by batch parity): an exec and its stage span,
 *          with two level-2 op spans inside the exec ("type", "exec_type" and
 *          "cpu_ns" annotations)
 * with jittered durations (percentiles mean something), batches overlapping
 * across stages, every 97th NPU exec without hw time, every 1000th batch
 * without cls (incomplete), and a "warm up" region that ends in the middle of
 * batch 1000, so the analysis window (after it) cuts spans. */
#ifndef PP_BENCH_ANALYZE_TRACE_H
#define PP_BENCH_ANALYZE_TRACE_H

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeprof/analyze.h"
#include "pipeprof/io.h"
#include "pipeprof/model.h"

#define BATCHES 1000000

static void trace_die(const char *what) {
    fprintf(stderr, "bench_analyze: %s\n", what);
    exit(1);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* What both benches time in their child, as `pipeprof analyze` does it:
 * reading the trace at `path`, then analyzing it after the "warm up" region
 * with the model given up to the build (pp_report_build_owned); its events
 * in *events, the two times in s. */
static pp_report *trace_read_and_analyze(const char *path, size_t *events, double *read_s,
                                         double *analyze_s) {
#ifdef M_MMAP_THRESHOLD
    (void)mallopt(M_MMAP_THRESHOLD, 256 * 1024); /* as the CLI does (src/cli/main.c) */
#endif
    pp_error err = {{0}};
    pp_model *m = NULL;
    double t0 = now_s();
    if (pp_trace_read(path, &m, &err) != PP_OK)
        trace_die(err.msg);
    double t1 = now_s();
    *events = pp_model_event_count(m);
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.exclude_region = "warm up";
    pp_report *r = NULL;
    if (pp_report_build_owned(m, &o, &r, &err) != PP_OK)
        trace_die(err.msg);
    *read_s = t1 - t0, *analyze_s = now_s() - t1;
    return r;
}

/* Runs argv (argv[0] a path, or a name on PATH) and returns its standard
 * output as a malloc'd string; *ru gets its resource use (peak RSS, CPU
 * times). Dies when it cannot run or does not exit 0. */
static char *trace_run_child(char *const argv[], struct rusage *ru) {
    int fd[2];
    if (pipe(fd) != 0)
        trace_die("pipe failed");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    ssize_t got;
    while (buf && (got = read(fd[0], buf + len, cap - len - 1)) > 0)
        if ((len += (size_t)got) + 1 == cap)
            buf = realloc(buf, cap *= 2);
    close(fd[0]);
    int status = 0;
    if (pid < 0 || wait4(pid, &status, 0, ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || !buf) {
        fprintf(stderr, "bench: %s failed (see its message above)\n", argv[0]);
        exit(1);
    }
    buf[len] = '\0';
    return buf;
}

static uint32_t trace_str(pp_model *m, const char *text) {
    uint32_t id = 0;
    if (pp_model_intern(m, text, strlen(text), &id) != PP_OK)
        trace_die("cannot intern a string");
    return id;
}

static uint32_t trace_track(pp_model *m, pp_track_kind kind, const char *dev, const char *name,
                            int stream, uint32_t flags) {
    pp_track_info t;
    uint32_t index = 0;
    pp_track_info_init(&t);
    t.kind = (uint8_t)kind;
    t.flags = flags;
    t.process = trace_str(m, dev);
    t.name = trace_str(m, name);
    t.device = kind == PP_TRACK_KIND_DEVICE ? trace_str(m, dev) : 0;
    t.stream = stream;
    if (pp_model_add_track(m, &t, &index) != PP_OK)
        trace_die("cannot add a track");
    return index;
}

/* Appends a span and returns its event index. */
static size_t trace_span(pp_model *m, uint32_t trk, pp_event_kind kind, pp_role role,
                         uint32_t name, uint32_t stage, int64_t batch, int64_t ts, int64_t dur,
                         uint64_t hw, uint64_t xfer) {
    pp_event e;
    pp_event_init(&e);
    e.kind = (uint8_t)kind;
    e.role = (uint8_t)role;
    e.track = trk;
    e.name = name;
    e.stage = stage;
    e.batch = batch;
    e.ts_ns = ts;
    e.dur_ns = dur;
    e.hw_ns = hw;
    e.xfer_ns = xfer;
    if (pp_model_add_event(m, &e) != PP_OK)
        trace_die("cannot add an event");
    return pp_model_event_count(m) - 1;
}

static void trace_annotate(pp_model *m, size_t event, uint32_t key, pp_value_type type,
                           int64_t i, double d) {
    pp_annotation a = {.event = event, .key = key, .type = (uint8_t)type};
    if (type == PP_VALUE_DOUBLE)
        a.v.d = d;
    else if (type == PP_VALUE_STR)
        a.v.s = (uint32_t)i;
    else
        a.v.i = i;
    if (pp_model_add_annotation(m, &a) != PP_OK)
        trace_die("cannot add an annotation");
}

/* Deterministic jitter in [0, range). */
static int64_t trace_jitter(uint64_t *state, int64_t range) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int64_t)((*state >> 33) % (uint64_t)range);
}

/* The trace of `batches` batches (about 10 events each). */
static pp_model *trace_build_batches(int64_t batches) {
    pp_model *m = NULL;
    if (pp_model_create(&m) != PP_OK)
        trace_die("cannot create a model");
    uint32_t regions = trace_track(m, PP_TRACK_KIND_REGIONS, "bench", "regions", -1, 0);
    uint32_t prep_t = trace_track(m, PP_TRACK_KIND_THREAD, "bench", "prep", -1, 0);
    uint32_t embed_t = trace_track(m, PP_TRACK_KIND_THREAD, "bench", "embed", -1, 0);
    uint32_t cls_t = trace_track(m, PP_TRACK_KIND_THREAD, "bench", "cls", -1, 0);
    uint32_t cpu = trace_track(m, PP_TRACK_KIND_DEVICE, "CPU", "req 0", 0, 0);
    uint32_t npu = trace_track(m, PP_TRACK_KIND_DEVICE, "NPU", "req 0", 0, PP_TRACK_SIMULATED);
    uint32_t gpu[2] = {trace_track(m, PP_TRACK_KIND_DEVICE, "GPU", "stream 0", 0, 0),
                       trace_track(m, PP_TRACK_KIND_DEVICE, "GPU", "stream 1", 1, 0)};
    uint32_t prep = trace_str(m, "prep"), embed = trace_str(m, "embed"), cls = trace_str(m, "cls");
    uint32_t part = trace_str(m, "partition"), merge = trace_str(m, "merge");
    uint32_t matmul = trace_str(m, "matmul"), softmax = trace_str(m, "softmax");
    uint32_t k_share = trace_str(m, "share"), k_type = trace_str(m, "type");
    uint32_t k_exec = trace_str(m, "exec_type"), k_cpu = trace_str(m, "cpu_ns");
    uint32_t t_mm = trace_str(m, "MatMul"), t_sm = trace_str(m, "Softmax");
    uint32_t x_jit = trace_str(m, "jit_avx512_FP32"), x_ref = trace_str(m, "ref_any_FP32");
    trace_span(m, regions, PP_EV_REGION, PP_ROLE_NONE, trace_str(m, "warm up"), 0, -1, 0,
               1000 * 10000 + 4000, 0, 0);
    uint64_t rng = 42;
    for (int64_t b = 0; b < batches; b++) {
        int64_t t = b * 10000;
        trace_span(m, prep_t, PP_EV_SPAN, PP_ROLE_STAGE, prep, prep, b, t,
                   2000 + trace_jitter(&rng, 1000), 0, 0);
        int64_t e0 = t + 3000, p = 200 + trace_jitter(&rng, 100);
        int64_t wc = 3000 + trace_jitter(&rng, 2000), wn = 2500 + trace_jitter(&rng, 3000);
        int64_t dev = wc > wn ? wc : wn, mg = 150 + trace_jitter(&rng, 100);
        trace_span(m, embed_t, PP_EV_SPAN, PP_ROLE_STAGE, embed, embed, b, e0, p + dev + mg, 0, 0);
        trace_span(m, embed_t, PP_EV_SPAN, PP_ROLE_PARTITION, part, embed, b, e0, p, 0, 0);
        size_t x = trace_span(m, cpu, PP_EV_SPAN, PP_ROLE_EXEC, embed, embed, b, e0 + p, wc,
                              (uint64_t)(wc - 300), 100);
        trace_annotate(m, x, k_share, PP_VALUE_DOUBLE, 0, 0.4);
        x = trace_span(m, npu, PP_EV_SPAN, PP_ROLE_EXEC, embed, embed, b, e0 + p, wn,
                       b % 97 == 0 ? 0 : (uint64_t)(wn / 2), 400);
        trace_annotate(m, x, k_share, PP_VALUE_DOUBLE, 0, 0.6);
        trace_span(m, embed_t, PP_EV_SPAN, PP_ROLE_MERGE, merge, embed, b, e0 + p + dev, mg, 0, 0);
        if (b % 1000 == 999)
            continue;
        int64_t c0 = e0 + p + dev + mg + trace_jitter(&rng, 500), wg = 4000 + trace_jitter(&rng, 9000);
        trace_span(m, cls_t, PP_EV_SPAN, PP_ROLE_STAGE, cls, cls, b, c0, wg, 0, 0);
        trace_span(m, gpu[b & 1], PP_EV_SPAN, PP_ROLE_EXEC, cls, cls, b, c0, wg,
                   (uint64_t)(wg - 500), (uint64_t)(wg / 10));
        x = trace_span(m, gpu[b & 1], PP_EV_SPAN, PP_ROLE_OP, matmul, cls, b, c0 + 100, wg / 2,
                       0, 0);
        trace_annotate(m, x, k_type, PP_VALUE_STR, t_mm, 0);
        trace_annotate(m, x, k_exec, PP_VALUE_STR, x_jit, 0);
        trace_annotate(m, x, k_cpu, PP_VALUE_INT, wg / 3, 0);
        x = trace_span(m, gpu[b & 1], PP_EV_SPAN, PP_ROLE_OP, softmax, cls, b, c0 + 100 + wg / 2,
                       wg / 2 - 200, 0, 0);
        trace_annotate(m, x, k_type, PP_VALUE_STR, t_sm, 0);
        trace_annotate(m, x, k_exec, PP_VALUE_STR, x_ref, 0);
    }
    return m;
}

#endif
