/* bench_flight — what the flight recorder (src/capture/pptrace_stream.c)
 * costs against writing the same .pptrace at stop from a model of the whole
 * recording (the path of every other output). Each round runs this program
 * twice as a child recording SPANS spans from one thread: once with
 * PIPEPROF_OUTPUT=FILE.pptrace (streamed while it records), once with a
 * session of its own whose output is written at stop. Prints BENCH lines:
 *
 *   flight_span_ns        pp_span in CPU time of the recording thread (the
 *                         writer thread reads the same buffers meanwhile)
 *   flight_cpu_ns         CPU time of the whole process per span, recording
 *                         and stop, every thread
 *   flight_stop_ms        wall time of pp_session_stop (the stream's
 *                         last period and end, against building and
 *                         writing the model)
 *   flight_peak_rss_MB    the process's peak memory
 *
 * Medians of ROUNDS rounds, the two kinds alternating. Below 1 is better for
 * every ratio. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "pipeprof/io.h"

#define SPANS 1000000L
#define ROUNDS 5

static double thread_cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double wall_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The child: records, stops, and hands the span cost and the stop time to
 * fd; _exit, so that the env session's exit-time flush does not run again. */
static int child(int streamed, const char *path, int fd) {
    pp_session *s = NULL;
    if (streamed) {
        s = pp_default_session();
    } else {
        pp_session_config cfg;
        pp_session_config_init(&cfg);
        cfg.output = path;
        if (pp_session_open(&cfg, &s) != PP_OK || pp_session_start(s) != PP_OK)
            s = NULL;
    }
    if (!s)
        _exit(3);
    pp_track t;
    pp_track_thread(s, "main", &t);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern("step");
    double cpu0 = thread_cpu_ns();
    for (long i = 0; i < SPANS; i++) {
        r.ts_ns = pp_now();
        r.dur_ns = 5;
        r.batch = i;
        pp_span(s, &r);
    }
    double figures[2] = {(thread_cpu_ns() - cpu0) / SPANS, wall_ns()};
    pp_error err = {{0}};
    if (pp_session_stop(s, &err) != PP_OK) {
        fprintf(stderr, "bench_flight: %s\n", err.msg);
        _exit(4);
    }
    figures[1] = (wall_ns() - figures[1]) / 1e6;
    _exit(write(fd, figures, sizeof figures) == (ssize_t)sizeof figures ? 0 : 5);
}

typedef struct run_figures {
    double span_ns, cpu_ns, stop_ms, rss_mb;
} run_figures;

static int run(int streamed, const char *path, run_figures *out) {
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char fdbuf[16];
        snprintf(fdbuf, sizeof fdbuf, "%d", fds[1]);
        if (streamed)
            setenv("PIPEPROF_OUTPUT", path, 1);
        else
            unsetenv("PIPEPROF_OUTPUT");
        execl("/proc/self/exe", "bench_flight", streamed ? "streamed" : "whole", path, fdbuf,
              (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    double figures[2];
    ssize_t got = read(fds[0], figures, sizeof figures);
    close(fds[0]);
    int status = 0;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    if (got != (ssize_t)sizeof figures || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_flight: the %s child failed (status %d)\n",
                streamed ? "streamed" : "whole", status);
        return -1;
    }
    out->span_ns = figures[0];
    out->stop_ms = figures[1];
    out->cpu_ns = ((double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
                   (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3) / SPANS;
    out->rss_mb = (double)ru.ru_maxrss / 1024;
    return 0;
}

static void print(const char *name, const char *unit, double *v, double *base) {
    double a = bench_median(v, ROUNDS), b = bench_median(base, ROUNDS);
    printf("BENCH %s value=%.3f unit=%s baseline=exit_time_write:%.3f ratio=%.3f\n", name, a, unit,
           b, a / b);
}

int main(int argc, char **argv) {
    if (argc == 4)
        return child(strcmp(argv[1], "streamed") == 0, argv[2], atoi(argv[3]));
    char path[64];
    snprintf(path, sizeof path, "/tmp/bench_flight_%d.pptrace", (int)getpid());
    double v[4][ROUNDS], base[4][ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        run_figures s, w;
        if (run(1, path, &s) != 0 || run(0, path, &w) != 0) {
            remove(path);
            return 1;
        }
        v[0][i] = s.span_ns, v[1][i] = s.cpu_ns, v[2][i] = s.stop_ms, v[3][i] = s.rss_mb;
        base[0][i] = w.span_ns, base[1][i] = w.cpu_ns, base[2][i] = w.stop_ms, base[3][i] = w.rss_mb;
    }
    remove(path);
    print("flight_span_ns", "ns", v[0], base[0]);
    print("flight_cpu_ns", "ns", v[1], base[1]);
    print("flight_stop_ms", "ms", v[2], base[2]);
    print("flight_peak_rss_MB", "MB", v[3], base[3]);
    return 0;
}
