/* bench_pptrace — the native format and analysis at scale, on the pipeline
 * trace of bench_analyze (bench/analyze_trace.h: 10 events and 7
 * annotations per batch, 1M batches = 10M events by default).
 *
 * BENCH lines:
 *   pptrace_bytes_per_event      .pptrace file bytes / event, baseline the
 *                                .pftrace of the same model (below 1 is
 *                                better; the goal is at most 0.5)
 *   pptrace_read_GBps            reading the .pptrace into a model, in bytes
 *                                of fixed-width rows per second (the decoded
 *                                size: 71 bytes an event + 21 an annotation,
 *                                the size of a version-1 file; kept as the
 *                                unit whatever the model holds in memory, so
 *                                that figures stay comparable), baseline
 *                                memcpy of that many bytes (above 1 is better)
 *                                (the reader decodes blocks on worker
 *                                threads where the machine has a spare CPU:
 *                                src/io/pptrace_read_ahead.h)
 *   pptrace_read_cpu_GBps        the same in the process's CPU time (user and
 *                                system, page faults included, every thread),
 *                                which other programs on a shared machine
 *                                inflate less than wall time; baseline
 *                                memcpy's CPU time
 *   analyze_pptrace_Mevents_per_s  read + pp_report_build end to end, in a
 *                                child process (wall time: the read and the
 *                                device step use a second CPU where there
 *                                is one), baseline the read alone
 *   analyze_pptrace_peak_B_per_event  that child's peak RSS / event,
 *                                baseline the model's own bytes / event
 *                                (its event columns and annotation table:
 *                                what any analysis of the loaded model holds;
 *                                model_bytes below)
 *   analyze_pptrace_fault_floor_s  the same child's read + analysis in
 *                                seconds, baseline a child that only faults
 *                                in as many bytes of fresh memory as its
 *                                peak RSS (one write a page): what holding
 *                                that much costs on this machine before any
 *                                work (ratio: how far above it)
 *   convert_json_peak_B_per_event  `pipeprof convert` of the .pptrace to
 *                                Chrome JSON (pp_trace_convert, 65536 events
 *                                at a time), peak RSS / event of a child,
 *                                baseline reading the whole model and
 *                                writing it (pp_trace_read, pp_trace_write)
 *   convert_json_Mevents_per_s   the same conversions' speed
 *
 * Usage: bench_pptrace [BATCHES]           (default 1000000)
 *        bench_pptrace --child TRACE       (the analysis, run by the bench)
 *        bench_pptrace --convert TRACE OUT chunks|whole  (a conversion)
 *        bench_pptrace --fault BYTES          (the fault floor) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze_trace.h"
#include "pipeprof/analyze.h"
#include "pipeprof/io.h"

static void bench_line(const char *name, double v, const char *unit, const char *base_name,
                       double base) {
    printf("BENCH %s value=%.3f unit=%s baseline=%s:%.3f ratio=%.4f\n", name, v, unit, base_name,
           base, base > 0 ? v / base : 0.0);
}

/* Reads TRACE, analyzes it, prints "events load_s analyze_s". */
static int child(const char *path) {
    size_t events;
    double read_s, analyze_s;
    pp_report *r = trace_read_and_analyze(path, &events, &read_s, &analyze_s);
    printf("%zu %.6f %.6f\n", events, read_s, analyze_s);
    pp_report_free(r);
    return 0;
}

/* Converts TRACE to OUT, in chunks or whole; prints "events seconds". */
static int convert(const char *in, const char *out, const char *how) {
    pp_error err = {{0}};
    pp_convert_info info = {0};
    double t0 = now_s();
    int rc;
    if (strcmp(how, "chunks") == 0) {
        rc = pp_trace_convert(in, out, NULL, &info, &err);
        if (rc == PP_OK && info.chunks == 0)
            trace_die("pp_trace_convert read the trace whole");
    } else {
        pp_model *m = NULL;
        rc = pp_trace_read(in, &m, &err);
        if (rc == PP_OK)
            rc = pp_trace_write(m, out, &err);
        info.events = pp_model_event_count(m);
        pp_model_free(m);
    }
    if (rc != PP_OK)
        trace_die(err.msg);
    printf("%llu %.6f\n", (unsigned long long)info.events, now_s() - t0);
    return 0;
}

/* Runs `self --convert in out how`; returns its seconds, and its peak RSS
 * in bytes in *peak_bytes; removes OUT. */
static double run_convert(const char *self, const char *in, const char *out, const char *how,
                          size_t events, double *peak_bytes) {
    char *const argv[] = {(char *)self, "--convert", (char *)in, (char *)out, (char *)how, NULL};
    struct rusage ru;
    char *text = trace_run_child(argv, &ru);
    unsigned long long n = 0;
    double s = 0;
    if (sscanf(text, "%llu %lf", &n, &s) != 2 || n != events)
        trace_die("the conversion child printed no figures or converted other events");
    free(text);
    unlink(out);
    *peak_bytes = (double)ru.ru_maxrss * 1024.0;
    return s;
}

/* Faults in `bytes` of fresh anonymous memory, a write a page, and prints
 * the seconds it took. */
static int fault_in(const char *bytes_arg) {
    size_t bytes = (size_t)strtoull(bytes_arg, NULL, 10), page = (size_t)sysconf(_SC_PAGESIZE);
    double t0 = now_s();
    volatile char *p =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        trace_die("cannot map the fault floor's memory");
    for (size_t i = 0; i < bytes; i += page)
        p[i] = 1;
    printf("%.6f\n", now_s() - t0);
    return 0;
}

/* Runs `self --fault BYTES`; returns its seconds. */
static double run_fault_floor(const char *self, double bytes) {
    char arg[32];
    snprintf(arg, sizeof arg, "%.0f", bytes);
    char *const argv[] = {(char *)self, "--fault", arg, NULL};
    struct rusage ru;
    char *out = trace_run_child(argv, &ru);
    double s = 0;
    if (sscanf(out, "%lf", &s) != 1)
        trace_die("the fault-floor child printed no figure");
    free(out);
    return s;
}

/* Runs `self --child path`; fills its figures and its peak RSS in bytes. */
static void run_child(const char *self, const char *path, size_t *events, double *load_s,
                      double *analyze_s, double *peak_bytes) {
    char *const argv[] = {(char *)self, "--child", (char *)path, NULL};
    struct rusage ru;
    char *out = trace_run_child(argv, &ru);
    if (sscanf(out, "%zu %lf %lf", events, load_s, analyze_s) != 3)
        trace_die("the analysis child printed no figures");
    free(out);
    *peak_bytes = (double)ru.ru_maxrss * 1024.0;
}

static double file_bytes(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0)
        trace_die("cannot stat a written trace");
    return (double)st.st_size;
}

/* Seconds of this process's CPU time (user and system), which the other
 * programs of a shared machine do not inflate as they do wall time. */
static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Best of 3: seconds to memcpy `bytes` (in 64 MiB pieces, cache-cold), in
 * wall time and in CPU time. */
static void memcpy_s(size_t bytes, double *wall, double *cpu) {
    size_t piece = (size_t)64 << 20;
    char *src = malloc(piece), *dst = malloc(piece);
    if (!src || !dst)
        trace_die("out of memory");
    memset(src, 1, piece);
    memset(dst, 2, piece);
    *wall = *cpu = 1e30;
    for (int round = 0; round < 3; round++) {
        double t0 = now_s(), c0 = cpu_s();
        for (size_t done = 0; done < bytes; done += piece) {
            size_t n = bytes - done < piece ? bytes - done : piece;
            memcpy(dst, src, n);
            src[done / piece % piece] ^= dst[n - 1]; /* keep each copy observable */
        }
        double t = now_s() - t0, c = cpu_s() - c0;
        *wall = t < *wall ? t : *wall;
        *cpu = c < *cpu ? c : *cpu;
    }
    free(src);
    free(dst);
}

/* Whether a batch takes the side table: one other than none (-1) more than
 * 32766 from its page's base, the first such batch of its page of 256
 * events, which *base keeps (INT64_MIN: none yet; src/model/columns.h). */
static int batch_is_wide(int64_t batch, int64_t *base) {
    if (batch == -1)
        return 0;
    if (*base == INT64_MIN)
        *base = batch;
    int64_t d;
    return *base == INT64_MIN || __builtin_sub_overflow(batch, *base, &d) || d < -32767 ||
           d > 32766;
}

/* The bytes the model holds: 16 an event in its dense columns (ts, dur,
 * name 4; track 2; kind, role 1), for each sparse column with a value its
 * width (batch, where some event has one, and stage 2; hw_ns, xfer_ns 4;
 * phase 1; id, value 8: one that is zero, or no batch, throughout is never
 * written and takes no memory), 16 for each value too wide for its narrow
 * column (src/model/columns.h: a start more than 2^31 ns from the first of
 * its page of 256 events, or a batch more than 32766 from its page's base,
 * too), and its annotation table, 16 bytes an annotation
 * (src/model/ann_table.h). */
static double model_bytes(const pp_model *m) {
    pp_event_columns c;
    if (pp_model_columns(m, &c) != PP_OK)
        trace_die("no memory for the model's columns");
    uint64_t stage = 0, phase = 0, hw = 0, xfer = 0, id = 0, value = 0, wide = 0, batch = 0;
    int64_t batch_base = INT64_MIN;
    for (size_t i = 0; i < c.count; i++) {
        if (i % 256 == 0)
            batch_base = INT64_MIN;
        uint64_t bits;
        memcpy(&bits, &c.value[i], sizeof bits);
        stage |= c.stage[i], phase |= c.phase[i], batch |= c.batch[i] != -1;
        hw |= c.hw_ns[i], xfer |= c.xfer_ns[i], id |= c.id[i], value |= bits;
        wide += ((uint64_t)c.dur_ns[i] >= UINT32_MAX) + (uint64_t)batch_is_wide(c.batch[i], &batch_base) +
                (c.hw_ns[i] >= UINT32_MAX) + (c.xfer_ns[i] >= UINT32_MAX) +
                (c.track[i] >= UINT16_MAX) + (c.stage[i] >= UINT16_MAX) +
                (c.ts_ns[i] - c.ts_ns[i & ~(size_t)255] <= INT32_MIN ||
                 c.ts_ns[i] - c.ts_ns[i & ~(size_t)255] > INT32_MAX);
    }
    double per_event = 16.0 + 4.0 * ((hw != 0) + (xfer != 0)) + 2.0 * ((stage != 0) + batch) +
                       1.0 * (phase != 0) + 8.0 * ((id != 0) + (value != 0));
    size_t nanns;
    pp_model_annotations(m, &nanns);
    return per_event * (double)c.count + 16.0 * (double)wide + 16.0 * (double)nanns;
}

static char bench_dir[512];

static void remove_dir(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", bench_dir);
    if (bench_dir[0] && system(cmd) != 0)
        fprintf(stderr, "bench_pptrace: could not remove %s\n", bench_dir);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--fault") == 0)
        return fault_in(argv[2]);
    if (argc == 5 && strcmp(argv[1], "--convert") == 0)
        return convert(argv[2], argv[3], argv[4]);
    int64_t batches = argc == 2 ? atoll(argv[1]) : BATCHES;
    if (batches <= 0)
        trace_die("usage: bench_pptrace [BATCHES] (a positive count)");
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(bench_dir, sizeof bench_dir, "%s/bench_pptrace.XXXXXX", tmp);
    if (!mkdtemp(bench_dir))
        trace_die("cannot create a temporary folder");
    atexit(remove_dir);
    char pptrace[600], pftrace[600], json[600];
    snprintf(pptrace, sizeof pptrace, "%s/trace.pptrace", bench_dir);
    snprintf(json, sizeof json, "%s/trace.json", bench_dir);
    snprintf(pftrace, sizeof pftrace, "%s/trace.pftrace", bench_dir);

    pp_model *m = trace_build_batches(batches);
    pp_error err = {{0}};
    if (pp_pptrace_write(m, pptrace, &err) != PP_OK || pp_perfetto_write(m, pftrace, &err) != PP_OK)
        trace_die(err.msg);
    size_t events = pp_model_event_count(m), nanns;
    pp_model_annotations(m, &nanns);
    double row_bytes = 71.0 * (double)events + 21.0 * (double)nanns;
    double model_size = model_bytes(m);
    pp_model_free(m);
    double pp_size = file_bytes(pptrace), pf_size = file_bytes(pftrace);
    if (unlink(pftrace) != 0)
        trace_die("cannot remove the .pftrace");

    double read_s = 1e30, read_cpu_s = 1e30;
    for (int round = 0; round < 3; round++) {
        double t0 = now_s(), c0 = cpu_s();
        if (pp_pptrace_read(pptrace, &m, &err) != PP_OK)
            trace_die(err.msg);
        double t = now_s() - t0, c = cpu_s() - c0;
        read_s = t < read_s ? t : read_s;
        read_cpu_s = c < read_cpu_s ? c : read_cpu_s;
        pp_model_free(m);
    }
    double copy_s, copy_cpu_s;
    memcpy_s((size_t)row_bytes, &copy_s, &copy_cpu_s);

    size_t child_events = 0;
    double load_s, analyze_s, peak;
    run_child(argv[0], pptrace, &child_events, &load_s, &analyze_s, &peak);
    if (child_events != events)
        trace_die("the analysis child read a different number of events");
    double fault_s = run_fault_floor(argv[0], peak);

    double whole_peak, chunks_peak;
    double whole_s = run_convert(argv[0], pptrace, json, "whole", events, &whole_peak);
    double chunks_s = run_convert(argv[0], pptrace, json, "chunks", events, &chunks_peak);

    printf("bench_pptrace: convert to .json: whole %.3f s, peak %.0f MB; chunks %.3f s, peak "
           "%.0f MB\n", whole_s, whole_peak / 1e6, chunks_s, chunks_peak / 1e6);
    printf("bench_pptrace: %zu events, %zu annotations; .pptrace %.0f bytes, .pftrace %.0f bytes; "
           "read %.3f s; analyze child: load %.3f s + analyze %.3f s, peak %.0f MB (faulting that "
           "much in alone: %.3f s)\n",
           events, nanns, pp_size, pf_size, read_s, load_s, analyze_s, peak / 1e6, fault_s);
    bench_line("pptrace_bytes_per_event", pp_size / (double)events, "B", "pftrace",
               pf_size / (double)events);
    bench_line("pptrace_read_GBps", row_bytes / read_s / 1e9, "GB/s", "memcpy",
               row_bytes / copy_s / 1e9);
    bench_line("pptrace_read_cpu_GBps", row_bytes / read_cpu_s / 1e9, "GB/s", "memcpy",
               row_bytes / copy_cpu_s / 1e9);
    bench_line("analyze_pptrace_Mevents_per_s", (double)events / (load_s + analyze_s) / 1e6,
               "Mevents/s", "read_only", (double)events / load_s / 1e6);
    bench_line("analyze_pptrace_peak_B_per_event", peak / (double)events, "B", "model",
               model_size / (double)events);
    bench_line("analyze_pptrace_fault_floor_s", load_s + analyze_s, "s", "fault_in_peak", fault_s);
    bench_line("convert_json_peak_B_per_event", chunks_peak / (double)events, "B",
               "read_whole_and_write", whole_peak / (double)events);
    bench_line("convert_json_Mevents_per_s", (double)events / chunks_s / 1e6, "Mevents/s",
               "read_whole_and_write", (double)events / whole_s / 1e6);
    return 0;
}
