/* inject_ranges — the annotated program bench_inject times: N ranges made
 * through NVTX (push/pop) or ITT (task_begin/end), printing the nanoseconds
 * one range took on average. It links nothing of pipeprof: with no tool
 * attached the calls cost what NVTX's and ITT's own no-ops cost, and under
 * NVTX_INJECTION64_PATH / INTEL_LIBITTNOTIFY64 (with PIPEPROF_OUTPUT) they
 * are recorded. ITT calls go through pointers filled by the collector's
 * __itt_api_init, as ITT's static part does (tests/inject/itt_static_part.c
 * says why a C program has to play that part). */
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inject/itt_abi.h"

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t nvtx_ranges(long n) {
    int64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        nvtxRangePushA("range");
        nvtxRangePop();
    }
    return now_ns() - t0;
}

typedef itt_domain *(*domain_create_fn)(const char *);
typedef itt_string_handle *(*handle_create_fn)(const char *);
typedef void (*task_begin_fn)(const itt_domain *, itt_id, itt_id, itt_string_handle *);
typedef void (*task_end_fn)(const itt_domain *);

static domain_create_fn domain_create;
static handle_create_fn handle_create;
static task_begin_fn task_begin;
static task_end_fn task_end;

/* With no collector the static part leaves the pointers NULL and its
 * macros skip the call: that is the baseline. */
static void itt_load(void) {
    const char *path = getenv("INTEL_LIBITTNOTIFY64");
    void *lib = path ? dlopen(path, RTLD_NOW) : NULL;
    void (*init)(itt_global *, int) = NULL;
    void *sym = lib ? dlsym(lib, "__itt_api_init") : NULL;
    memcpy(&init, &sym, sizeof init);
    static itt_api_info list[] = {
        {"__itt_domain_create", (void **)&domain_create, NULL, NULL, 0},
        {"__itt_string_handle_create", (void **)&handle_create, NULL, NULL, 0},
        {"__itt_task_begin", (void **)&task_begin, NULL, NULL, 0},
        {"__itt_task_end", (void **)&task_end, NULL, NULL, 0},
        {NULL, NULL, NULL, NULL, 0},
    };
    itt_global g = {.magic = {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30},
                    .version_major = 3, .lib = lib, .api_list_ptr = list};
    if (init)
        init(&g, 0);
}

static int64_t itt_ranges(long n) {
    static itt_domain fallback = {.flags = 1, .nameA = "bench"};
    itt_domain *d = domain_create ? domain_create("bench") : &fallback;
    itt_string_handle *name = handle_create ? handle_create("range") : NULL;
    itt_id null_id = {0, 0, 0};
    int64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        if (d->flags && task_begin)
            task_begin(d, null_id, null_id, name);
        if (d->flags && task_end)
            task_end(d);
    }
    return now_ns() - t0;
}

int main(int argc, char **argv) {
    long n = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
    if (n <= 0 || (strcmp(argv[1], "nvtx") != 0 && strcmp(argv[1], "itt") != 0)) {
        fprintf(stderr, "usage: inject_ranges nvtx|itt N\n");
        return 2;
    }
    int nvtx = strcmp(argv[1], "nvtx") == 0;
    if (!nvtx)
        itt_load();
    /* warm-up: the injection's load, the thread's first record */
    if (nvtx)
        nvtx_ranges(1000);
    else
        itt_ranges(1000);
    int64_t ns = nvtx ? nvtx_ranges(n) : itt_ranges(n);
    printf("%.3f\n", (double)ns / (double)n);
    return 0;
}
