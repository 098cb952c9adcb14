/* bench_requests.h — timing a stream of requests on one compiled model,
 * shared by the backend benches (bench_openvino, bench_opencl). */
#ifndef PP_BENCH_REQUESTS_H
#define PP_BENCH_REQUESTS_H

#include <stdio.h>
#include <stdlib.h>

#include "bench_stats.h"
#include "device/workload.h"
#include "pipeprof/device.h"

/* Runs `requests` requests of w compiled at `level` on d, `inflight` of them
 * at a time, and returns their wall time in ns; *cpu_us receives the
 * process CPU time per request. Exits naming `bench` when a request fails. */
static inline int64_t bench_requests(const char *bench, pp_device *d, const pp_workload *w,
                                     int level, int inflight, int requests, double *cpu_us) {
    pp_compiled *c = NULL;
    pp_error err = {{0}};
    if (pp_compiled_create_level(d, w, inflight, level, &c, &err) != PP_OK) {
        fprintf(stderr, "%s: %s\n", bench, err.msg);
        exit(1);
    }
    for (int i = 0; i < inflight; i++)
        pp_wl_fill_input(w, (uint64_t)i, pp_request_input(pp_compiled_request(c, i)));
    double cpu0 = bench_process_cpu_us();
    int64_t t0 = pp_now();
    int failed = 0;
    for (int k = 0; k < requests; k++) {
        pp_request *r = pp_compiled_request(c, k % inflight);
        if (k >= inflight)
            failed |= pp_request_wait(r) != PP_OK;
        failed |= pp_request_start(r, NULL, NULL) != PP_OK;
    }
    for (int i = 0; i < inflight; i++)
        failed |= pp_request_wait(pp_compiled_request(c, i)) != PP_OK;
    int64_t t1 = pp_now();
    *cpu_us = (bench_process_cpu_us() - cpu0) / requests;
    pp_compiled_free(c);
    if (failed) {
        fprintf(stderr, "%s: a request failed\n", bench);
        exit(1);
    }
    return t1 - t0;
}

#endif
