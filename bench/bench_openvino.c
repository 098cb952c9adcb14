/* bench_openvino — what profiling costs on OpenVINO's CPU device.
 *
 * PERF_COUNT: the same model (the demo's GraphPrep, a sage layer over 1024
 * nodes, and its Embedding, two 64 x 64 MatMuls) compiled with and without
 * PERF_COUNT=YES (profiling level 1 and 0), two requests kept in flight,
 * a few hundred ms of requests per round; rounds alternate the two so that drift of the
 * machine hits both alike; each figure is the median over the rounds.
 *   BENCH perf_count_<model> value=<requests/s> unit=requests/s
 *         baseline=perf_count_off:<requests/s> ratio=<on / off>
 * (a rate: above 1 is better; 1 - ratio is PERF_COUNT's cost, reading the
 * profiling info after each request included). Throughput on a shared
 * 2-core machine moves by several percent from round to round, so the
 * process CPU time per request (user + system, getrusage) comes beside it:
 *   BENCH perf_count_<model>_cpu_per_request value=<us> unit=us
 *         baseline=perf_count_off:<us> ratio=<on / off>
 * (a time: below 1 is better). The profiler's overhead on a
 * whole OpenVINO pipeline is bench_overhead's openvino_pipeline_level* lines.
 * Prints a note and nothing else when built without OpenVINO. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_requests.h"
#include "pipeprof/device.h"

#define ROUNDS 15
#define INFLIGHT 2

/* Requests per second of w compiled at `level` on d, over `requests`
 * requests with INFLIGHT in flight, and the CPU time per request (*cpu). */
static double rate(pp_device *d, const pp_workload *w, int level, int requests, double *cpu) {
    return (double)requests * 1e9 /
           (double)bench_requests("bench_openvino", d, w, level, INFLIGHT, requests, cpu);
}

static void bench_model(pp_device *d, const char *name, const pp_workload *w, int requests) {
    double on[ROUNDS], off[ROUNDS], cpu_on[ROUNDS], cpu_off[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        off[r] = rate(d, w, 0, requests, &cpu_off[r]);
        on[r] = rate(d, w, 1, requests, &cpu_on[r]);
    }
    double a = bench_median(on, ROUNDS), b = bench_median(off, ROUNDS);
    double ca = bench_median(cpu_on, ROUNDS), cb = bench_median(cpu_off, ROUNDS);
    printf("BENCH perf_count_%s value=%.1f unit=requests/s baseline=perf_count_off:%.1f "
           "ratio=%.3f\n", name, a, b, a / b);
    printf("BENCH perf_count_%s_cpu_per_request value=%.1f unit=us baseline=perf_count_off:%.1f "
           "ratio=%.3f\n", name, ca, cb, ca / cb);
}

int main(void) {
    if (!strstr(pp_features(), "openvino")) {
        fprintf(stderr, "bench_openvino: built without OpenVINO; nothing to measure\n");
        return 0;
    }
    pp_device *d = NULL;
    pp_error err = {{0}};
    if (pp_device_open("openvino:CPU", NULL, &d, &err) != PP_OK) {
        fprintf(stderr, "bench_openvino: %s\n", err.msg);
        return 1;
    }
    pp_workload sage, embed;
    pp_workload_init(&sage);
    sage.kind = PP_WORKLOAD_SAGE;
    sage.nodes = 1024, sage.edges = 8192, sage.in_dim = 64, sage.out_dim = 64;
    pp_workload_init(&embed);
    embed.nodes = 512, embed.in_dim = 64, embed.out_dim = 64, embed.layers = 2;
    bench_model(d, "sage", &sage, 400);     /* about 1 ms each */
    bench_model(d, "matmul", &embed, 4000); /* about 70 us each */
    pp_device_close(d);
    return 0;
}
