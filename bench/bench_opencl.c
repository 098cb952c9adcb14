/* bench_opencl — what profiling costs on an OpenCL device (PoCL's CPU
 * device here), and how far its clock alignment drifts over a run.
 *
 * Profiling: the demo's GraphPrep (a sage layer over 1024 nodes) and
 * Embedding (two 64 x 64 MatMuls over 1024 nodes), and a tiny MatMul (64
 * nodes, 16 x 16: the fixed cost per request shows) run with queues created with and without
 * CL_QUEUE_PROFILING_ENABLE (profiling level 1 and 0; level 1 also reads
 * every command's four timestamps after each request), two requests in
 * flight; rounds alternate the two so that drift of the machine hits both
 * alike; each figure is the median over the rounds:
 *   BENCH opencl_profiling_<model>_us_per_request value=<us> unit=us
 *         baseline=plain_queue:<us> ratio=<profiled / plain>
 * (a time: below 1 is better; ratio - 1 is what profiling costs). Wall
 * time on a shared 2-core machine moves by tens of percent from round to
 * round for the larger models, so the process CPU time per request (user +
 * system, getrusage: PoCL's worker threads included) comes beside it:
 *   BENCH opencl_profiling_<model>_cpu_per_request value=<us> unit=us
 *         baseline=plain_queue:<us> ratio=<profiled / plain>
 *
 * Drift: the device clock's offset to the session clock is measured at the
 * start (the alignment a device is opened with) and again every 5 s for
 * --seconds S (default 60; bench/run uses the default). The largest change
 * is how far timestamps mapped with the opening alignment are off by the
 * end of such a run; beside it, the two measurements' error bounds added
 * (what their own errors can explain of it):
 *   BENCH opencl_clock_offset_change_ns value=<max |offset(t) - offset(0)|>
 *         unit=ns baseline=both_error_bounds:<bound(0) + bound(t)> ratio=<change / bounds>
 * (ratio <= 1: no drift beyond the measurements' error over the run).
 * Prints a note and nothing else when built without OpenCL or without an
 * OpenCL device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_requests.h"
#include "pipeprof/device.h"

#define ROUNDS 9
#define INFLIGHT 2

/* Wall time per request of w compiled at `level` on d, over `requests`
 * requests with INFLIGHT in flight, in microseconds, and the process CPU
 * time per request (*cpu). */
static double us_per_request(pp_device *d, const pp_workload *w, int level, int requests,
                             double *cpu) {
    return (double)bench_requests("bench_opencl", d, w, level, INFLIGHT, requests, cpu) / 1e3 /
           requests;
}

static void bench_model(pp_device *d, const char *name, const pp_workload *w, int requests) {
    double on[ROUNDS], off[ROUNDS], cpu_on[ROUNDS], cpu_off[ROUNDS], warm;
    us_per_request(d, w, 1, INFLIGHT * 4, &warm); /* builds the kernels once before timing */
    for (int r = 0; r < ROUNDS; r++) {
        off[r] = us_per_request(d, w, 0, requests, &cpu_off[r]);
        on[r] = us_per_request(d, w, 1, requests, &cpu_on[r]);
    }
    double a = bench_median(on, ROUNDS), b = bench_median(off, ROUNDS);
    double ca = bench_median(cpu_on, ROUNDS), cb = bench_median(cpu_off, ROUNDS);
    printf("BENCH opencl_profiling_%s_us_per_request value=%.1f unit=us baseline=plain_queue:%.1f "
           "ratio=%.3f\n", name, a, b, a / b);
    printf("BENCH opencl_profiling_%s_cpu_per_request value=%.1f unit=us "
           "baseline=plain_queue:%.1f ratio=%.3f\n", name, ca, cb, ca / cb);
}

static void bench_drift(pp_device *d, int seconds) {
    pp_device_clock start, now;
    pp_error err = {{0}};
    if (pp_device_clock_get(d, 0, &start, &err) != PP_OK) {
        fprintf(stderr, "bench_opencl: %s\n", err.msg);
        exit(1);
    }
    int64_t worst = 0, bounds = start.error_ns;
    for (int t = 5; t <= seconds; t += 5) {
        nanosleep(&(struct timespec){.tv_sec = 5}, NULL);
        if (pp_device_clock_get(d, 1, &now, &err) != PP_OK) {
            fprintf(stderr, "bench_opencl: %s\n", err.msg);
            exit(1);
        }
        int64_t drift = llabs(now.offset_ns - start.offset_ns);
        if (drift > worst) {
            worst = drift;
            bounds = start.error_ns + now.error_ns;
        }
        fprintf(stderr, "bench_opencl: after %d s the offset moved %lld ns (this measurement's "
                        "bound %lld ns)\n", t, (long long)(now.offset_ns - start.offset_ns),
                (long long)now.error_ns);
    }
    fprintf(stderr, "bench_opencl: aligned by %s over %d s\n", start.method, seconds);
    printf("BENCH opencl_clock_offset_change_ns value=%lld unit=ns baseline=both_error_bounds:%lld "
           "ratio=%.3f\n", (long long)worst, (long long)bounds,
           bounds > 0 ? (double)worst / (double)bounds : 0.0);
}

int main(int argc, char **argv) {
    int seconds = 60;
    if (argc == 3 && strcmp(argv[1], "--seconds") == 0 && atoi(argv[2]) >= 5) {
        seconds = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: bench_opencl [--seconds S]   (S >= 5; default 60)\n");
        return 2;
    }
    if (!strstr(pp_features(), "opencl")) {
        fprintf(stderr, "bench_opencl: built without OpenCL; nothing to measure\n");
        return 0;
    }
    pp_device *d = NULL;
    pp_error err = {{0}};
    if (pp_device_open("opencl:0", NULL, &d, &err) != PP_OK) {
        fprintf(stderr, "bench_opencl: %s; nothing to measure\n", err.msg);
        return 0;
    }
    fprintf(stderr, "bench_opencl: %s\n", pp_device_label(d));
    pp_workload sage, matmul;
    pp_workload_init(&sage);
    sage.kind = PP_WORKLOAD_SAGE;
    sage.nodes = 1024, sage.edges = 8192;
    pp_workload_init(&matmul);
    matmul.nodes = 1024, matmul.layers = 2;
    bench_model(d, "sage", &sage, 60);
    bench_model(d, "matmul", &matmul, 60);
    pp_workload tiny;
    pp_workload_init(&tiny);
    tiny.nodes = 64, tiny.in_dim = 16, tiny.out_dim = 16;
    bench_model(d, "tiny", &tiny, 400);
    bench_drift(d, seconds);
    pp_device_close(d);
    return 0;
}
