/* bench_analyze — pp_report_build on a 10M-event pipeline trace (read from
 * .pptrace and from Chrome JSON) beside pandas computing every metric of the
 * same report (bench/analyze_pandas.py), in the same run, on the same trace
 * (bench/analyze_trace.h). Both sides print every figure of the report
 * (findings aside: they are prose) in the same lines; the bench exits 1 when
 * any line differs. Each side runs in a child process whose peak RSS is read
 * with wait4(). The window is everything after the "warm up" region.
 *
 * BENCH lines (below 1 is better for all of them):
 *   analyze_10M_s             the analysis alone, input already in memory:
 *                             pp_report_build vs the pandas functions on
 *                             DataFrames
 *   analyze_10M_pptrace_s     read the .pptrace + analyze, vs pandas reading
 *                             raw columns (numpy.fromfile: the cheapest load
 *                             pandas has; it parses nothing) + analyzing
 *   analyze_10M_json_s        read the Chrome JSON + analyze, vs the same
 *                             pandas figure
 *   analyze_10M_pptrace_peak_MB, analyze_10M_json_peak_MB
 *                             peak RSS of the whole child, vs pandas's
 *
 * Each side runs PP_BENCH_ROUNDS times (default 3), interleaved; each
 * figure is the side's best round.
 *
 * Usage: bench_analyze [analyze_pandas.py]   (Python: $PP_PYTHON, else python3)
 *        bench_analyze --child TRACE          (the pipeprof side, run by the bench) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze_trace.h"
#include "pipeprof/analyze.h"
#include "pipeprof/io.h"

static void trace_write_column(const char *dir, const char *name, const void *data, size_t size,
                               size_t n) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, size, n, f) != n || fclose(f) != 0)
        trace_die("cannot write the columns for pandas");
}

/* What pandas gets: every event column the metrics read and the annotation
 * table, as raw little-endian arrays (numpy.fromfile reads them without
 * parsing), and the track and string tables as text (tables.txt). */
static void trace_write_columns(const pp_model *m, const char *dir) {
    pp_event_columns c;
    pp_model_columns(m, &c);
    trace_write_column(dir, "kind", c.kind, 1, c.count);
    trace_write_column(dir, "role", c.role, 1, c.count);
    trace_write_column(dir, "track", c.track, 4, c.count);
    trace_write_column(dir, "name", c.name, 4, c.count);
    trace_write_column(dir, "stage", c.stage, 4, c.count);
    trace_write_column(dir, "batch", c.batch, 8, c.count);
    trace_write_column(dir, "ts", c.ts_ns, 8, c.count);
    trace_write_column(dir, "dur", c.dur_ns, 8, c.count);
    trace_write_column(dir, "hw", c.hw_ns, 8, c.count);
    trace_write_column(dir, "xfer", c.xfer_ns, 8, c.count);
    size_t na;
    const pp_annotation *a = pp_model_annotations(m, &na);
    uint64_t *event = malloc(na * sizeof *event);
    uint32_t *key = malloc(na * sizeof *key);
    uint8_t *type = malloc(na);
    int64_t *ival = malloc(na * sizeof *ival);
    double *dval = malloc(na * sizeof *dval);
    if (!event || !key || !type || !ival || !dval)
        trace_die("out of memory");
    for (size_t i = 0; i < na; i++) {
        event[i] = a[i].event, key[i] = a[i].key, type[i] = a[i].type;
        ival[i] = a[i].type == PP_VALUE_STR ? a[i].v.s : a[i].type == PP_VALUE_INT ? a[i].v.i : 0;
        dval[i] = a[i].type == PP_VALUE_DOUBLE ? a[i].v.d : 0.0;
    }
    trace_write_column(dir, "ann_event", event, 8, na);
    trace_write_column(dir, "ann_key", key, 4, na);
    trace_write_column(dir, "ann_type", type, 1, na);
    trace_write_column(dir, "ann_int", ival, 8, na);
    trace_write_column(dir, "ann_double", dval, 8, na);
    free(event), free(key), free(type), free(ival), free(dval);
    char path[1024];
    snprintf(path, sizeof path, "%s/tables.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        trace_die("cannot write tables.txt");
    for (uint32_t t = 0; t < pp_model_track_count(m); t++) {
        const pp_track_info *ti = pp_model_track(m, t);
        fprintf(f, "track\t%u\t%u\t%u\t%s\t%s\t%s\n", t, ti->kind, ti->flags,
                pp_model_string(m, ti->device), pp_model_string(m, ti->process),
                pp_model_string(m, ti->name));
    }
    for (uint32_t s = 1; s < pp_model_string_count(m); s++)
        fprintf(f, "string\t%u\t%s\n", s, pp_model_string(m, s));
    fclose(f);
}

static void put_summary(FILE *out, const pp_summary *s) {
    fprintf(out, " n=%llu min=%lld mean=%lld p50=%lld p90=%lld p95=%lld p97=%lld p99=%lld "
                 "p999=%lld max=%lld total=%lld",
            (unsigned long long)s->n, (long long)s->min, (long long)s->mean, (long long)s->p50,
            (long long)s->p90, (long long)s->p95, (long long)s->p97, (long long)s->p99,
            (long long)s->p999, (long long)s->max, (long long)s->total);
}

static void put_gaps(FILE *out, const pp_gap_stats *g) {
    fprintf(out, " bubbles=%llu mean=%lld p50=%lld p95=%lld max=%lld total=%lld leading=%lld "
                 "trailing=%lld\n",
            (unsigned long long)g->count, (long long)g->mean, (long long)g->p50,
            (long long)g->p95, (long long)g->max, (long long)g->total, (long long)g->leading_ns,
            (long long)g->trailing_ns);
}

/* Position-weighted sums (mod 2^64) of the per-batch and per-(batch, stage)
 * columns: one line compares a million rows, order included. */
static void put_digests(const pp_report *r, FILE *out) {
    size_t n;
    const pp_batch_stats *b = pp_report_batches(r, &n);
    uint64_t d[6] = {0};
    for (size_t i = 0; i < n; i++) {
        uint64_t w = i + 1;
        d[0] += w * (uint64_t)b[i].batch, d[1] += w * (uint64_t)b[i].complete;
        d[2] += w * b[i].stages, d[3] += w * (uint64_t)b[i].cycle_ns;
        d[4] += w * b[i].bottleneck, d[5] += w * (uint64_t)b[i].e2e_ns;
    }
    fprintf(out, "batches rows=%zu batch=%llu complete=%llu stages=%llu cycle=%llu "
                 "bottleneck=%llu e2e=%llu\n", n, (unsigned long long)d[0],
            (unsigned long long)d[1], (unsigned long long)d[2], (unsigned long long)d[3],
            (unsigned long long)d[4], (unsigned long long)d[5]);
    const pp_stage_time *t = pp_report_stage_times(r, &n);
    memset(d, 0, sizeof d);
    for (size_t i = 0; i < n; i++) {
        uint64_t w = i + 1;
        d[0] += w * t[i].stage, d[1] += w * (uint64_t)t[i].batch;
        d[2] += w * (uint64_t)t[i].time_ns, d[3] += w * (uint64_t)t[i].measured_ns;
    }
    fprintf(out, "stage_times rows=%zu stage=%llu batch=%llu time=%llu measured=%llu\n", n,
            (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2],
            (unsigned long long)d[3]);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Op rows as text lines, sorted (the report sorts by total; equal totals
 * may come in any order on the pandas side). */
static void put_ops(const pp_report *r, FILE *out, const char *what, const pp_op_stats *o,
                    size_t n) {
    size_t nd;
    const pp_device_stats *dev = pp_report_devices(r, &nd);
    char **lines = malloc((n ? n : 1) * sizeof *lines);
    for (size_t i = 0; lines && i < n; i++) {
        lines[i] = malloc(512);
        if (lines[i])
            snprintf(lines[i], 512, "%s %s|%s|%s|%s count=%llu total=%lld mean=%lld p50=%lld "
                                    "p95=%lld max=%lld cpu_count=%llu cpu_total=%lld\n",
                     what, dev[o[i].device].name, o[i].name, o[i].type, o[i].exec_type,
                     (unsigned long long)o[i].count, (long long)o[i].total,
                     (long long)o[i].mean, (long long)o[i].p50, (long long)o[i].p95,
                     (long long)o[i].max, (unsigned long long)o[i].cpu_count,
                     (long long)o[i].cpu_total);
        else
            trace_die("out of memory");
    }
    if (!lines)
        trace_die("out of memory");
    qsort(lines, n, sizeof *lines, cmp_str);
    for (size_t i = 0; i < n; i++)
        fputs(lines[i], out), free(lines[i]);
    free(lines);
}

/* Every figure of the report, one table row per line. */
static void put_figures(const pp_report *r, FILE *out) {
    const pp_window *w = pp_report_window(r);
    fprintf(out, "window start=%lld end=%lld\n", (long long)w->start_ns, (long long)w->end_ns);
    size_t n, nd;
    const pp_device_stats *d = pp_report_devices(r, &nd);
    for (size_t i = 0; i < nd; i++) {
        fprintf(out, "device %s sim=%d tracks=%u execs=%llu hw_unknown=%llu busy=%lld idle=%lld "
                     "wall_util=%.9g hw_util=%.9g hw_eff=%.9g xfer=%.9g pen_pct=%.9g penalty",
                d[i].name, d[i].simulated, d[i].tracks, (unsigned long long)d[i].execs,
                (unsigned long long)d[i].hw_unknown, (long long)d[i].busy_ns,
                (long long)d[i].idle_ns, d[i].wall_util, d[i].hw_util, d[i].hw_eff,
                d[i].transfer_share, d[i].penalty_pct_wall);
        put_summary(out, &d[i].penalty);
        put_gaps(out, &d[i].bubbles);
    }
    const pp_track_stats *t = pp_report_tracks(r, &n);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "track %s execs=%llu hw_unknown=%llu busy=%lld hw_util=%.9g", t[i].name,
                (unsigned long long)t[i].execs, (unsigned long long)t[i].hw_unknown,
                (long long)t[i].busy_ns, t[i].hw_util);
        put_gaps(out, &t[i].bubbles);
    }
    const pp_stage_stats *s = pp_report_stages(r, &n);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "stage %s dp=%d exec_less=%d bottleneck=%llu execs=%llu hw_unknown=%llu "
                     "hw=%lld xfer=%lld pen_pct=%.9g time",
                s[i].name, s[i].data_parallel, s[i].exec_less,
                (unsigned long long)s[i].bottleneck_count, (unsigned long long)s[i].execs,
                (unsigned long long)s[i].hw_unknown, (long long)s[i].hw_ns,
                (long long)s[i].xfer_ns, s[i].penalty_pct_wall);
        put_summary(out, &s[i].time);
        fputs(" penalty", out);
        put_summary(out, &s[i].penalty);
        fputc('\n', out);
    }
    const pp_cycle_stats *c = pp_report_cycles(r);
    fprintf(out, "cycles batches=%llu complete=%llu bound=%.9g bound_complete=%.9g "
                 "measured=%.9g cycle",
            (unsigned long long)c->batches, (unsigned long long)c->complete, c->throughput_bound,
            c->throughput_bound_complete, c->throughput_measured);
    put_summary(out, &c->cycle);
    fputs(" complete", out);
    put_summary(out, &c->cycle_complete);
    fputs(" e2e", out);
    put_summary(out, &c->e2e);
    fputc('\n', out);
    put_digests(r, out);
    const pp_dp_stats *dp = pp_report_dp(r, &n);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "dp %s batches=%llu imbalance=%.9g", s[dp[i].stage].name,
                (unsigned long long)dp[i].batches, dp[i].imbalance);
        const pp_summary *parts[] = {&dp[i].partition, &dp[i].max_device, &dp[i].merge,
                                     &dp[i].formula, &dp[i].measured};
        for (size_t k = 0; k < 5; k++)
            put_summary(out, parts[k]);
        fputc('\n', out);
        for (size_t k = 0; k < dp[i].ndevices; k++) {
            const pp_dp_device *v = &dp[i].devices[k];
            fprintf(out, "dp_device %s %s wall=%lld share=%.9g rate=%.9g suggested=%.9g\n",
                    s[dp[i].stage].name, d[v->device].name, (long long)v->wall_ns, v->share,
                    v->rate, v->suggested_share);
        }
    }
    const pp_op_stats *o = pp_report_ops(r, &n);
    put_ops(r, out, "op", o, n);
    o = pp_report_op_types(r, &n);
    put_ops(r, out, "op_type", o, n);
}

static int child(const char *path) {
    size_t events;
    double read_s, analyze_s;
    pp_report *r = trace_read_and_analyze(path, &events, &read_s, &analyze_s);
    put_figures(r, stdout);
    printf("TIME load=%.3f analyze=%.3f\n", read_s, analyze_s);
    pp_report_free(r);
    return 0;
}

/* The temporary folder of the run: removed on any exit. */
static char bench_dir[512];

static void remove_dir(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", bench_dir);
    if (bench_dir[0] && system(cmd) != 0)
        fprintf(stderr, "bench_analyze: could not remove %s\n", bench_dir);
}

/* Runs argv; its stdout as a malloc'd string, *rss_mb its peak RSS. */
static char *run_child(char *const argv[], double *rss_mb) {
    struct rusage ru;
    char *out = trace_run_child(argv, &ru);
    *rss_mb = (double)ru.ru_maxrss / 1024.0;
    fprintf(stderr, "bench_analyze: %s %s: user %.2f s, system %.2f s\n", argv[0], argv[2],
            (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    return out;
}

static double time_of(const char *out, const char *key) {
    const char *p = strstr(out, key);
    return p ? atof(p + strlen(key)) : -1.0;
}

/* One side of the comparison over its rounds: the output of its first
 * round (the figures), and the best load and analysis times and the highest
 * peak RSS over all rounds. Best of rounds because this machine's noise
 * (other work, page-cache and huge-page state) only ever adds time. */
typedef struct side {
    char *out;
    double load, analyze, rss_mb;
} side;

static void run_round(side *s, char *const argv[]) {
    double rss;
    char *out = run_child(argv, &rss);
    double load = time_of(out, "load="), analyze = time_of(out, "analyze=");
    if (!s->out || load < s->load)
        s->load = load;
    if (!s->out || analyze < s->analyze)
        s->analyze = analyze;
    if (rss > s->rss_mb)
        s->rss_mb = rss;
    if (s->out)
        free(out);
    else
        s->out = out;
}

/* The figures are everything before the TIME line; prints the first line
 * that differs. */
static int same_figures(const char *a, const char *b, const char *what) {
    const char *ta = strstr(a, "TIME "), *tb = strstr(b, "TIME ");
    if (ta && tb && ta - a == tb - b && memcmp(a, b, (size_t)(ta - a)) == 0)
        return 1;
    size_t i = 0, line = 0;
    for (; a[i] && a[i] == b[i]; i++)
        if (a[i] == '\n')
            line = i + 1;
    a += line, b += line;
    fprintf(stderr, "bench_analyze: pipeprof (%s) and pandas disagree; first difference:\n"
                    "  pipeprof: %.*s\n  pandas:   %.*s\n", what, (int)strcspn(a, "\n"), a,
            (int)strcspn(b, "\n"), b);
    return 0;
}

static void bench_line(const char *name, double v, double base, const char *unit) {
    printf("BENCH %s value=%.3f unit=%s baseline=pandas:%.3f ratio=%.4f\n", name, v, unit, base,
           base > 0 ? v / base : 0.0);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child(argv[2]);
    char script[1024];
    snprintf(script, sizeof script, "%s", argc > 1 ? argv[1] : __FILE__);
    if (argc == 1) { /* analyze_pandas.py beside this source file */
        char *slash = strrchr(script, '/');
        size_t at = slash ? (size_t)(slash + 1 - script) : 0;
        snprintf(script + at, sizeof script - at, "analyze_pandas.py");
    }
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char pptrace[600], json[600];
    snprintf(bench_dir, sizeof bench_dir, "%s/bench_analyze.%d", tmp, (int)getpid());
    snprintf(pptrace, sizeof pptrace, "%s/trace.pptrace", bench_dir);
    snprintf(json, sizeof json, "%s/trace.json", bench_dir);
    if (mkdir(bench_dir, 0700) != 0)
        trace_die("cannot create the temporary folder");
    atexit(remove_dir);
    double t0 = now_s();
    pp_model *m = trace_build_batches(BATCHES);
    pp_error err = {{0}};
    if (pp_pptrace_write(m, pptrace, &err) != PP_OK || pp_chrome_write(m, json, &err) != PP_OK)
        trace_die(err.msg);
    trace_write_columns(m, bench_dir);
    size_t nevents = pp_model_event_count(m);
    pp_model_free(m);
    sync(); /* the children are timed, not the writeback of these files */
    fprintf(stderr, "bench_analyze: %zu events built and written in %.1f s\n", nevents,
            now_s() - t0);

    char *pp_argv[] = {argv[0], "--child", pptrace, NULL};
    char *js_argv[] = {argv[0], "--child", json, NULL};
    const char *py = getenv("PP_PYTHON") ? getenv("PP_PYTHON") : "python3";
    char *pd_argv[] = {(char *)py, script, bench_dir, NULL};
    int rounds = getenv("PP_BENCH_ROUNDS") ? atoi(getenv("PP_BENCH_ROUNDS")) : 3;
    if (rounds < 1)
        rounds = 1;
    side pp = {0}, js = {0}, pd = {0};
    for (int i = 0; i < rounds; i++) { /* interleaved, so drifts in load hit every side */
        run_round(&pp, pp_argv);
        run_round(&js, js_argv);
        run_round(&pd, pd_argv);
    }
    fputs(pp.out, stdout);
    printf("best of %d rounds: pipeprof (.pptrace) load=%.3f analyze=%.3f, "
           "pipeprof (JSON) load=%.3f analyze=%.3f, pandas load=%.3f analyze=%.3f\n",
           rounds, pp.load, pp.analyze, js.load, js.analyze, pd.load, pd.analyze);
    if (!same_figures(pp.out, pd.out, ".pptrace") || !same_figures(js.out, pd.out, "JSON"))
        return 1;
    double pp_an = pp.analyze, pd_an = pd.analyze, pp_load = pp.load, pd_load = pd.load;
    double js_load = js.load, js_an = js.analyze;
    double rss_pp = pp.rss_mb, rss_js = js.rss_mb, rss_pd = pd.rss_mb;
    bench_line("analyze_10M_s", pp_an, pd_an, "s");
    bench_line("analyze_10M_pptrace_s", pp_load + pp_an, pd_load + pd_an, "s");
    bench_line("analyze_10M_json_s", js_load + js_an, pd_load + pd_an, "s");
    bench_line("analyze_10M_pptrace_peak_MB", rss_pp, rss_pd, "MB");
    bench_line("analyze_10M_json_peak_MB", rss_js, rss_pd, "MB");
    free(pp.out), free(js.out), free(pd.out);
    return 0;
}
