/* bench_analyze — pp_report_build on a 10M-event pipeline trace beside
 * pandas computing the same device and stage metrics (bench/analyze_pandas.py).
 * Prints BENCH lines (times and memory: below 1 is better):
 *
 *   analyze_10M_s        time of the analysis itself, the model / DataFrame
 *                        already in memory (baseline: pandas)
 *   analyze_10M_peak_MB  peak RSS of the whole process: reading the input and
 *                        analyzing it (pipeprof reads the .pptrace; pandas
 *                        reads raw little-endian columns with numpy.fromfile,
 *                        the cheapest load pandas has)
 *
 * The model: 1.25M batches of a streaming pipeline, 8 events each: prep
 * (a stage span on a host thread), embed data parallel over CPU and NPU
 * (partition, two execs with hw and transfer time, merge, a stage span), cls
 * on two GPU streams (an exec and a stage span), with bubbles of varying
 * length. Both sides print the same figures (busy, bubbles, stage-time
 * percentiles, cycle latency), one per line; the bench fails when any line
 * differs. Each side runs once, in a child process whose peak RSS is read
 * with wait4().
 *
 * Usage: bench_analyze [analyze_pandas.py]   (Python: $PP_PYTHON, else python3)
 *        bench_analyze --child TRACE          (the pipeprof side, run by the bench) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeprof/analyze.h"
#include "pipeprof/io.h"

#define BATCHES 1250000

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The temporary folder of the run (empty in the child): removed on any exit. */
static char bench_dir[512];

static void remove_dir(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", bench_dir);
    if (bench_dir[0] && system(cmd) != 0)
        fprintf(stderr, "bench_analyze: could not remove %s\n", bench_dir);
}

static void die(const char *what) {
    fprintf(stderr, "bench_analyze: %s\n", what);
    exit(1);
}

static uint32_t str(pp_model *m, const char *text) {
    uint32_t id = 0;
    if (pp_model_intern(m, text, strlen(text), &id) != PP_OK)
        die("cannot intern a string");
    return id;
}

static uint32_t track(pp_model *m, pp_track_kind kind, const char *dev, const char *name,
                      int stream) {
    pp_track_info t;
    uint32_t index = 0;
    pp_track_info_init(&t);
    t.kind = (uint8_t)kind;
    t.process = str(m, dev);
    t.name = str(m, name);
    t.device = kind == PP_TRACK_KIND_DEVICE ? str(m, dev) : 0;
    t.stream = stream;
    if (pp_model_add_track(m, &t, &index) != PP_OK)
        die("cannot add a track");
    return index;
}

static void span(pp_model *m, uint32_t trk, pp_role role, uint32_t stage, int64_t batch,
                 int64_t ts, int64_t dur, uint64_t hw, uint64_t xfer) {
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_SPAN;
    e.role = (uint8_t)role;
    e.track = trk;
    e.name = stage;
    e.stage = stage;
    e.batch = batch;
    e.ts_ns = ts;
    e.dur_ns = dur;
    e.hw_ns = hw;
    e.xfer_ns = xfer;
    if (pp_model_add_event(m, &e) != PP_OK)
        die("cannot add an event");
}

/* Deterministic jitter: durations vary so that percentiles mean something. */
static int64_t jitter(uint64_t *state, int64_t range) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int64_t)((*state >> 33) % (uint64_t)range);
}

static pp_model *build_model(void) {
    pp_model *m = NULL;
    if (pp_model_create(&m) != PP_OK)
        die("cannot create a model");
    uint32_t prep_t = track(m, PP_TRACK_KIND_THREAD, "host", "prep", -1);
    uint32_t embed_t = track(m, PP_TRACK_KIND_THREAD, "host", "embed", -1);
    uint32_t cls_t = track(m, PP_TRACK_KIND_THREAD, "host", "cls", -1);
    uint32_t cpu = track(m, PP_TRACK_KIND_DEVICE, "CPU", "req 0", 0);
    uint32_t npu = track(m, PP_TRACK_KIND_DEVICE, "NPU", "req 0", 0);
    uint32_t gpu[2] = {track(m, PP_TRACK_KIND_DEVICE, "GPU", "stream 0", 0),
                       track(m, PP_TRACK_KIND_DEVICE, "GPU", "stream 1", 1)};
    uint32_t prep = str(m, "prep"), embed = str(m, "embed"), cls = str(m, "cls");
    uint64_t rng = 42;
    /* stages overlap across batches: batch b's prep runs while b-1 embeds */
    for (int64_t b = 0; b < BATCHES; b++) {
        int64_t t = b * 10000;
        int64_t p = 2000 + jitter(&rng, 1000);
        span(m, prep_t, PP_ROLE_STAGE, prep, b, t, p, 0, 0);
        int64_t e0 = t + 3000, part = 200 + jitter(&rng, 100);
        int64_t wc = 3000 + jitter(&rng, 2000), wn = 2500 + jitter(&rng, 3000);
        int64_t dev = wc > wn ? wc : wn, merge = 150 + jitter(&rng, 100);
        span(m, embed_t, PP_ROLE_STAGE, embed, b, e0, part + dev + merge, 0, 0);
        span(m, embed_t, PP_ROLE_PARTITION, embed, b, e0, part, 0, 0);
        span(m, cpu, PP_ROLE_EXEC, embed, b, e0 + part, wc, (uint64_t)(wc - 300), 100);
        span(m, npu, PP_ROLE_EXEC, embed, b, e0 + part, wn, (uint64_t)(wn / 2), 400);
        span(m, embed_t, PP_ROLE_MERGE, embed, b, e0 + part + dev, merge, 0, 0);
        int64_t c0 = e0 + part + dev + merge + jitter(&rng, 500), wg = 4000 + jitter(&rng, 9000);
        span(m, cls_t, PP_ROLE_STAGE, cls, b, c0, wg, 0, 0);
        span(m, gpu[b & 1], PP_ROLE_EXEC, cls, b, c0, wg, (uint64_t)(wg - 500), 0);
    }
    return m;
}

/* The figures both sides print, one per line, in the same order. */
static void print_figures(const pp_report *r, FILE *out) {
    size_t n;
    const pp_device_stats *d = pp_report_devices(r, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "device %s execs=%llu busy=%lld bubbles=%llu bubble_total=%lld\n", d[i].name,
                (unsigned long long)d[i].execs, (long long)d[i].busy_ns,
                (unsigned long long)d[i].bubbles.count, (long long)d[i].bubbles.total);
    const pp_stage_stats *s = pp_report_stages(r, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "stage %s n=%llu mean=%lld p50=%lld p95=%lld p99=%lld max=%lld\n",
                s[i].name, (unsigned long long)s[i].time.n, (long long)s[i].time.mean,
                (long long)s[i].time.p50, (long long)s[i].time.p95, (long long)s[i].time.p99,
                (long long)s[i].time.max);
    const pp_cycle_stats *c = pp_report_cycles(r);
    fprintf(out, "cycles batches=%llu complete=%llu mean=%lld p50=%lld p95=%lld max=%lld\n",
            (unsigned long long)c->batches, (unsigned long long)c->complete,
            (long long)c->cycle.mean, (long long)c->cycle.p50, (long long)c->cycle.p95,
            (long long)c->cycle.max);
}

static int child(const char *path) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    double t0 = now_s();
    if (pp_pptrace_read(path, &m, &err) != PP_OK)
        die(err.msg);
    double t1 = now_s();
    pp_report *r = NULL;
    if (pp_report_build(m, NULL, &r, &err) != PP_OK)
        die(err.msg);
    double t2 = now_s();
    print_figures(r, stdout);
    printf("TIME load=%.3f analyze=%.3f\n", t1 - t0, t2 - t1);
    pp_report_free(r);
    pp_model_free(m);
    return 0;
}

/* Raw little-endian columns for pandas: role u8, track u32, stage u32 (0 =
 * none), batch/ts/dur i64, and the strings of the stage ids. */
static void write_columns(const pp_model *m, const char *dir) {
    pp_event_columns c;
    pp_model_columns(m, &c);
    struct {
        const char *name;
        const void *data;
        size_t size;
    } cols[] = {{"role", c.role, 1},   {"track", c.track, 4}, {"stage", c.stage, 4},
                {"batch", c.batch, 8}, {"ts", c.ts_ns, 8},    {"dur", c.dur_ns, 8}};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.bin", dir, cols[i].name);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(cols[i].data, cols[i].size, c.count, f) != c.count || fclose(f) != 0)
            die("cannot write the columns for pandas");
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/tables.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write tables.txt");
    for (uint32_t t = 0; t < pp_model_track_count(m); t++) {
        const pp_track_info *ti = pp_model_track(m, t);
        fprintf(f, "track %u %s\n", t, ti->kind == PP_TRACK_KIND_DEVICE
                                           ? pp_model_string(m, ti->device) : "-");
    }
    for (uint32_t s = 1; s < pp_model_string_count(m); s++)
        fprintf(f, "string %u %s\n", s, pp_model_string(m, s));
    fclose(f);
}

/* Runs argv, captures its stdout into a malloc'd string; *rss_mb = peak RSS. */
static char *run_child(char *const argv[], double *rss_mb) {
    int fd[2];
    if (pipe(fd) != 0)
        die("pipe failed");
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
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !buf)
        die("a child failed (see its message above)");
    buf[len] = '\0';
    *rss_mb = (double)ru.ru_maxrss / 1024.0;
    return buf;
}

static double time_of(const char *out, const char *key) {
    const char *p = strstr(out, key);
    return p ? atof(p + strlen(key)) : -1.0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child(argv[2]);
    char script[1024];
    if (argc > 1)
        snprintf(script, sizeof script, "%s", argv[1]);
    else
        snprintf(script, sizeof script, "%s", __FILE__);
    if (argc == 1) { /* analyze_pandas.py beside this source file */
        char *slash = strrchr(script, '/');
        snprintf(slash ? slash + 1 : script, sizeof script - (size_t)(slash ? slash + 1 - script : 0),
                 "analyze_pandas.py");
    }
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *dir = bench_dir, trace[600];
    snprintf(bench_dir, sizeof bench_dir, "%s/bench_analyze.%d", tmp, (int)getpid());
    snprintf(trace, sizeof trace, "%s/trace.pptrace", dir);
    if (mkdir(dir, 0700) != 0)
        die("cannot create the temporary folder");
    atexit(remove_dir);
    double t0 = now_s();
    pp_model *m = build_model();
    pp_error err = {{0}};
    if (pp_pptrace_write(m, trace, &err) != PP_OK)
        die(err.msg);
    write_columns(m, dir);
    fprintf(stderr, "bench_analyze: %zu events built and written in %.1f s\n",
            pp_model_event_count(m), now_s() - t0);
    pp_model_free(m);

    double rss_pp, rss_pd;
    char *self[] = {argv[0], "--child", trace, NULL};
    char *pp_out = run_child(self, &rss_pp);
    const char *py = getenv("PP_PYTHON") ? getenv("PP_PYTHON") : "python3";
    char *pd_argv[] = {(char *)py, script, dir, NULL};
    char *pd_out = run_child(pd_argv, &rss_pd);

    /* the figures are everything before the TIME line */
    size_t fp = (size_t)(strstr(pp_out, "TIME") - pp_out), fd = (size_t)(strstr(pd_out, "TIME") - pd_out);
    fputs(pp_out, stdout);
    fputs(pd_out, stdout);
    if (!strstr(pp_out, "TIME") || !strstr(pd_out, "TIME") || fp != fd ||
        memcmp(pp_out, pd_out, fp) != 0) {
        fprintf(stderr, "bench_analyze: pipeprof and pandas disagree (figures above)\n");
        return 1;
    }
    double a_pp = time_of(pp_out, "analyze="), a_pd = time_of(pd_out, "analyze=");
    printf("BENCH analyze_10M_s value=%.3f unit=s baseline=pandas:%.3f ratio=%.3f\n", a_pp, a_pd,
           a_pp / a_pd);
    printf("BENCH analyze_10M_peak_MB value=%.0f unit=MB baseline=pandas:%.0f ratio=%.3f\n", rss_pp,
           rss_pd, rss_pp / rss_pd);
    free(pp_out);
    free(pd_out);
    return 0;
}
