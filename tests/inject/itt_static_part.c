/* itt_static_part — plays the ITT static part for the collector, for the ITT
 * calls no packaged static part can make from C: ittapi's static part is
 * compiled into programs and ships in no C library package, and its Python
 * binding has no frames, markers or metadata. It does what the static part
 * does (ittnotify_static.c): load INTEL_LIBITTNOTIFY64, hand __itt_api_init
 * a table of named entries with their no-ops, then call through the
 * pointers. tests/inject/test_itt_abi.sh records it; trace_expect.py lists
 * what each call must leave in the trace. The layouts come from
 * src/inject/itt_abi.h; test_itt.sh checks them against the real static
 * part. Exits 1 with a message when an API-level promise is broken (same
 * handle for the same name, the no-op kept for what the collector lacks). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inject/itt_abi.h"

typedef itt_domain *(*domain_create_fn)(const char *);
typedef itt_string_handle *(*handle_create_fn)(const char *);
typedef void (*task_begin_fn)(const itt_domain *, itt_id, itt_id, itt_string_handle *);
typedef void (*task_end_fn)(const itt_domain *);
typedef void (*frame_fn)(const itt_domain *, itt_id *);
typedef void (*marker_fn)(const itt_domain *, itt_id, itt_string_handle *, int);
typedef void (*metadata_fn)(const itt_domain *, itt_id, itt_string_handle *, int, size_t, void *);
typedef void (*metadata_str_fn)(const itt_domain *, itt_id, itt_string_handle *, const char *, size_t);
typedef itt_timestamp (*timestamp_fn)(void);
typedef void (*overlapped_begin_fn)(const itt_domain *, itt_id, itt_id, itt_string_handle *);
typedef void (*overlapped_end_fn)(const itt_domain *, itt_id);
typedef void (*init_fn)(itt_global *, int);

static domain_create_fn domain_create;
static handle_create_fn handle_create;
static task_begin_fn task_begin;
static task_end_fn task_end;
static frame_fn frame_begin, frame_end;
static marker_fn marker;
static metadata_fn metadata_add;
static metadata_str_fn metadata_str_add;
static timestamp_fn get_timestamp;
static overlapped_begin_fn overlapped_begin;
static overlapped_end_fn overlapped_end;
static void (*not_in_collector)(void);

static void no_op(void) {}

#define ENTRY(name, ptr) {name, (void **)&ptr, NULL, NULL, 0}
static itt_api_info api_list[] = {
    ENTRY("__itt_domain_create", domain_create),
    ENTRY("__itt_string_handle_create", handle_create),
    ENTRY("__itt_task_begin", task_begin),
    ENTRY("__itt_task_end", task_end),
    ENTRY("__itt_frame_begin_v3", frame_begin),
    ENTRY("__itt_frame_end_v3", frame_end),
    ENTRY("__itt_marker", marker),
    ENTRY("__itt_metadata_add", metadata_add),
    ENTRY("__itt_metadata_str_add", metadata_str_add),
    ENTRY("__itt_get_timestamp", get_timestamp),
    ENTRY("__itt_task_begin_overlapped", overlapped_begin),
    ENTRY("__itt_task_end_overlapped", overlapped_end),
    ENTRY("__itt_counter_inc_v3", not_in_collector),
    {NULL, NULL, NULL, NULL, 0},
};

static const itt_id null_id = {0, 0, 0};

static int fail(const char *what) {
    fprintf(stderr, "itt_static_part: %s\n", what);
    return 1;
}

static void spin_us(long us) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void task(const itt_domain *d, const char *name, long us) {
    task_begin(d, null_id, null_id, handle_create(name));
    spin_us(us);
    task_end(d);
}

/* Two threads at once: each makes the same string handle anew per task (as
 * PyTorch does), and ends one of the overlapped tasks main began. */
#define WORKER_TASKS 100
static itt_domain *shared_domain;

static void *worker(void *arg) {
    itt_id id = {(unsigned long long)(uintptr_t)arg, 0, 0};
    for (int i = 0; i < WORKER_TASKS; i++)
        task(shared_domain, "shared", 0);
    overlapped_end(shared_domain, id);
    return NULL;
}

int main(void) {
    const char *path = getenv("INTEL_LIBITTNOTIFY64");
    void *lib = path ? dlopen(path, RTLD_NOW) : NULL;
    init_fn init = lib ? (init_fn)(uintptr_t)dlsym(lib, "__itt_api_init") : NULL;
    if (!init)
        return fail("INTEL_LIBITTNOTIFY64 names no library with __itt_api_init");
    void *null_op;
    void (*op)(void) = no_op;
    memcpy(&null_op, &op, sizeof null_op);
    for (itt_api_info *e = api_list; e->name; e++)
        e->null_func = null_op;
    itt_global g = {.magic = {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30},
                    .version_major = 3, .lib = lib, .api_list_ptr = api_list};
    init(&g, 0);
    size_t filled = 0;
    for (itt_api_info *e = api_list; e->name; e++)
        filled += *e->func_ptr != e->null_func;
    if (filled == 0)
        return fail("the collector installed only the no-ops");
    if (not_in_collector != no_op)
        return fail("an entry the collector lacks did not keep its no-op");
    if (filled != sizeof api_list / sizeof api_list[0] - 2)
        return fail("the collector left out an entry it has");

    itt_domain *d = domain_create("pipeline");
    if (!d || !d->flags || domain_create("pipeline") != d)
        return fail("domain_create: not one enabled handle per name");
    if (handle_create("prep") != handle_create("prep") || handle_create("prep") == handle_create("embed"))
        return fail("string_handle_create: not one handle per text");
    itt_timestamp t0 = get_timestamp();

    /* handles the static part made itself before the collector was loaded */
    static itt_domain early_domain = {.flags = 1, .nameA = "early domain"};
    static itt_string_handle early = {.strA = "early"};
    task_begin(&early_domain, null_id, null_id, &early);
    task_end(&early_domain);

    /* a frame around a task, and a marker */
    frame_begin(d, NULL);
    task(d, "work", 100);
    frame_end(d, NULL);
    marker(d, null_id, handle_create("tick"), 2);

    /* stage and batch from metadata, and one more annotation */
    for (int64_t b = 0; b < 4; b++) {
        task_begin(d, null_id, null_id, handle_create("prep"));
        metadata_str_add(d, null_id, handle_create("stage"), "prep", 0);
        metadata_add(d, null_id, handle_create("batch"), ITT_METADATA_S64, 1, &b);
        spin_us(200);
        task_end(d);
        task_begin(d, null_id, null_id, handle_create("embed"));
        metadata_str_add(d, null_id, handle_create("stage"), "embed-and-more", 5);
        metadata_add(d, null_id, handle_create("batch"), ITT_METADATA_S64, 1, &b);
        uint32_t rows = 128;
        metadata_add(d, null_id, handle_create("rows"), ITT_METADATA_U32, 1, &rows);
        spin_us(b == 2 ? 900 : 400);
        task_end(d);
    }
    /* overlapped tasks 1 and 2, begun here, each ended by a worker */
    shared_domain = d;
    pthread_t th[2];
    for (uintptr_t k = 0; k < 2; k++) {
        itt_id id = {k + 1, 0, 0};
        overlapped_begin(d, id, null_id, handle_create(k ? "request 2" : "request 1"));
    }
    for (uintptr_t k = 0; k < 2; k++)
        if (pthread_create(&th[k], NULL, worker, (void *)(k + 1)) != 0)
            return fail("cannot start a thread");
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);

    if (get_timestamp() <= t0)
        return fail("get_timestamp does not advance");
    return 0;
}
