/* The session clock. CLOCK_MONOTONIC goes through the vDSO (no syscall) and
 * costs ~20 ns; bench/bench_record.c measures it as the floor a span's cost
 * is compared with. */
#include <time.h>

#include "pipeprof/trace.h"

int64_t pp_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
