/* The session clock. CLOCK_MONOTONIC goes through the vDSO (no syscall) and
 * costs ~20 ns; bench/bench_record.c measures it as the floor a span's cost
 * is compared with. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock_id.h"
#include "pipeprof/trace.h"

int64_t pp_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Read when a model is built from a session, never on the recording path. */
void pp_clock_identity(char *host, size_t host_cap, char *boot_id, size_t boot_cap) {
    if (gethostname(host, host_cap) != 0)
        host[0] = '\0';
    host[host_cap - 1] = '\0';
    boot_id[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return;
    if (!fgets(boot_id, (int)boot_cap, f))
        boot_id[0] = '\0';
    fclose(f);
    boot_id[strcspn(boot_id, "\n")] = '\0';
}
