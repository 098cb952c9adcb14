/* libpipeprof_nvtx: an NVTX injection library. A program annotated with
 * NVTX v3 (nvtxRangePush, torch.cuda.nvtx, the nvtx Python package, ...)
 * loads the library named by NVTX_INJECTION64_PATH on its first NVTX call
 * and calls InitializeInjectionNvtx2, which writes this file's functions into
 * the program's NVTX function tables (every module that includes the NVTX
 * headers has its own tables and calls it once). From then on each NVTX call
 * lands here and is recorded into the default session (PIPEPROF_OUTPUT):
 *
 *   push/pop          a span on the thread's track (ranges of one domain nest)
 *   start/end         a range on a track of its own (may end on another thread)
 *   mark              an instant on the thread's track
 *   domain, category  "domain" and "category" annotations of the event
 *   payload           a "payload" annotation (int or double)
 *   registered string the handle is an index into a table of interned ids;
 *                     a handle this library did not hand out is ignored
 *                     (the event is named "<invalid nvtxStringHandle_t>")
 *                     and counted, never dereferenced
 *
 * Without a default session the initializer returns 0, and NVTX turns every
 * call back into a no-op.
 *
 * fork(): the child of a multithreaded program gets one thread and every
 * lock as it was. naming_lock is taken around fork (the pattern of
 * src/core/fork.c), and fork waits while a module's NVTX initialization
 * that called us is still completing (the program's NVTX code spins until
 * it completes, which in a child it never would). Not covered: a fork while
 * NVTX is still loading this library (dlopen of it and libpipeprof's
 * dependencies), before any code of ours runs; such a child spins in
 * nvtxInitOnce on its first NVTX call (docs/recording.md, "Fork"). */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "inject/inject.h"

#define MAX_CATEGORIES 256 /* named categories kept per domain */

typedef struct category_name {
    uint32_t category;
    pp_str name;
} category_name;

/* A domain handle as NVTX hands it back to us. Categories are appended
 * under a lock (naming is rare) and read without one: an entry is written
 * before `ncategories` is raised with release order. */
struct nvtxDomainRegistration_st {
    struct nvtxDomainRegistration_st *next; /* every domain made: kept, never freed */
    pp_str name;                            /* 0 for the default domain */
    _Atomic int ncategories;
    category_name categories[MAX_CATEGORIES];
};

/* Registered strings: handle h stands for entry (h >> 4) - 1 of a table of
 * interned ids, in blocks that never move (written under naming_lock before
 * `nstrings` is raised with release order, read without a lock). The low
 * four bits are STRING_TAG, which no aligned pointer has, so a handle the
 * program made up from an address is told apart at once. */
#define STRING_TAG 0x5u
#define STRINGS_PER_BLOCK 4096
#define STRING_BLOCKS 1024 /* 4 M registered strings */
static pp_str *string_blocks[STRING_BLOCKS];
static _Atomic uint32_t nstrings;
static _Atomic uint64_t invalid_string_handles;
static pp_str text_invalid_handle;

static struct nvtxDomainRegistration_st default_domain;
static pthread_mutex_t naming_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nvtxDomainRegistration_st *domains;   /* under naming_lock */
static pp_str key_domain, key_category, key_payload;

static struct nvtxDomainRegistration_st *domain_of(nvtxDomainHandle_t d) {
    return d ? d : &default_domain;
}

/* ---- names (registration calls: rare, may lock and allocate) ---- */

static void name_category(nvtxDomainHandle_t d, uint32_t category, const char *name) {
    struct nvtxDomainRegistration_st *dom = domain_of(d);
    pp_str id = pp_intern(name);
    pthread_mutex_lock(&naming_lock);
    int n = atomic_load_explicit(&dom->ncategories, memory_order_relaxed);
    int i = 0;
    while (i < n && dom->categories[i].category != category)
        i++;
    if (i == n && n < MAX_CATEGORIES) {
        dom->categories[n] = (category_name){category, id};
        atomic_store_explicit(&dom->ncategories, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&naming_lock);
}

static void nvtx_name_category_a(uint32_t category, const char *name) {
    name_category(NULL, category, name);
}

static void nvtx_domain_name_category_a(nvtxDomainHandle_t d, uint32_t category, const char *name) {
    name_category(d, category, name);
}

static void nvtx_name_category_w(uint32_t category, const wchar_t *name) {
    inj_thread *t = inj_thread_get();
    if (t)
        name_category(NULL, category, inj_utf8(t, name));
}

static void nvtx_domain_name_category_w(nvtxDomainHandle_t d, uint32_t category, const wchar_t *name) {
    inj_thread *t = inj_thread_get();
    if (t)
        name_category(d, category, inj_utf8(t, name));
}

static nvtxDomainHandle_t nvtx_domain_create_a(const char *name) {
    struct nvtxDomainRegistration_st *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->name = pp_intern(name);
    pthread_mutex_lock(&naming_lock);
    d->next = domains;
    domains = d;
    pthread_mutex_unlock(&naming_lock);
    return d;
}

static nvtxDomainHandle_t nvtx_domain_create_w(const wchar_t *name) {
    inj_thread *t = inj_thread_get();
    return nvtx_domain_create_a(t ? inj_utf8(t, name) : "");
}

/* Domains are kept to the end (on the list above): a thread may still be
 * recording with one that another thread destroys, and a domain is a few
 * KiB at most. */
static void nvtx_domain_destroy(nvtxDomainHandle_t d) {
    (void)d;
}

static nvtxStringHandle_t nvtx_register_string_a(nvtxDomainHandle_t d, const char *text) {
    (void)d;
    pp_str id = pp_intern(text);
    uintptr_t handle = 0;
    pthread_mutex_lock(&naming_lock);
    uint32_t i = atomic_load_explicit(&nstrings, memory_order_relaxed);
    pp_str **block = &string_blocks[i / STRINGS_PER_BLOCK];
    if (i < (uint32_t)STRINGS_PER_BLOCK * STRING_BLOCKS &&
        (*block || (*block = calloc(STRINGS_PER_BLOCK, sizeof **block)) != NULL)) {
        (*block)[i % STRINGS_PER_BLOCK] = id;
        atomic_store_explicit(&nstrings, i + 1, memory_order_release);
        handle = ((uintptr_t)(i + 1) << 4) | STRING_TAG;
    }
    pthread_mutex_unlock(&naming_lock);
    return (nvtxStringHandle_t)handle;
}

static nvtxStringHandle_t nvtx_register_string_w(nvtxDomainHandle_t d, const wchar_t *text) {
    inj_thread *t = inj_thread_get();
    return nvtx_register_string_a(d, t ? inj_utf8(t, text) : "");
}

/* ---- events (hot path) ---- */

static pp_str category_name_of(const struct nvtxDomainRegistration_st *d, uint32_t category) {
    int n = atomic_load_explicit(&((struct nvtxDomainRegistration_st *)d)->ncategories,
                                 memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (d->categories[i].category == category)
            return d->categories[i].name;
    return 0;
}

/* The interned text of a registered string handle; one this library did
 * not hand out is counted and named as such, never read through. */
static pp_str registered_text(nvtxStringHandle_t handle) {
    uintptr_t h = (uintptr_t)handle;
    if (!h)
        return 0;
    uintptr_t i = (h >> 4) - 1;
    if ((h & 0xf) != STRING_TAG || h >> 4 == 0 ||
        i >= atomic_load_explicit(&nstrings, memory_order_acquire)) {
        atomic_fetch_add_explicit(&invalid_string_handles, 1, memory_order_relaxed);
        return text_invalid_handle;
    }
    return string_blocks[i / STRINGS_PER_BLOCK][i % STRINGS_PER_BLOCK];
}

static pp_str message_of(inj_thread *t, const nvtxEventAttributes_t *a) {
    if (!a)
        return 0;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return inj_name_of_text(t, a->message.ascii);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return registered_text(a->message.registered);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return inj_name_of_text(t, inj_utf8(t, a->message.unicode));
    default:
        return 0;
    }
}

/* The annotations an event's attributes carry: domain, category, payload. */
static int args_of(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, inj_arg *out) {
    int n = 0;
    const struct nvtxDomainRegistration_st *dom = domain_of(d);
    if (dom->name)
        out[n++] = (inj_arg){.key = key_domain, .type = INJ_ARG_STR, .v.s = dom->name};
    if (!a)
        return n;
    if (a->category) {
        pp_str name = category_name_of(dom, a->category);
        out[n++] = name ? (inj_arg){.key = key_category, .type = INJ_ARG_STR, .v.s = name}
                        : (inj_arg){.key = key_category, .type = INJ_ARG_INT, .v.i = a->category};
    }
    inj_arg p = {.key = key_payload, .type = INJ_ARG_INT};
    switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        p.v.i = (int64_t)a->payload.ullValue;
        break;
    case NVTX_PAYLOAD_TYPE_INT64:
        p.v.i = a->payload.llValue;
        break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        p.v.i = a->payload.uiValue;
        break;
    case NVTX_PAYLOAD_TYPE_INT32:
        p.v.i = a->payload.iValue;
        break;
    case NVTX_PAYLOAD_TYPE_DOUBLE:
        p = (inj_arg){.key = key_payload, .type = INJ_ARG_DOUBLE, .v.d = a->payload.dValue};
        break;
    case NVTX_PAYLOAD_TYPE_FLOAT:
        p = (inj_arg){.key = key_payload, .type = INJ_ARG_DOUBLE, .v.d = a->payload.fValue};
        break;
    default:
        return n;
    }
    out[n++] = p;
    return n;
}

static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, pp_str name) {
    int64_t now = pp_now();
    inj_thread *t = inj_thread_get();
    if (!t)
        return -1;
    int depth = inj_push(t, d, a ? message_of(t, a) : name, now);
    inj_arg args[3];
    int n = args_of(d, a, args);
    for (int i = 0; i < n; i++)
        inj_open_arg(t, &args[i]);
    return depth - 1; /* NVTX counts levels from 0 */
}

static int pop(nvtxDomainHandle_t d) {
    int64_t now = pp_now();
    inj_thread *t = inj_thread_get();
    if (!t)
        return -1;
    int depth = inj_pop(t, d, now);
    return depth < 0 ? -1 : depth - 1;
}

static int nvtx_push_ex(const nvtxEventAttributes_t *a) {
    return push(NULL, a, 0);
}

static int nvtx_domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    return push(d, a, 0);
}

static int nvtx_push_a(const char *message) {
    inj_thread *t = inj_thread_get();
    return t ? push(NULL, NULL, inj_name_of_text(t, message)) : -1;
}

static int nvtx_push_w(const wchar_t *message) {
    inj_thread *t = inj_thread_get();
    return t ? push(NULL, NULL, inj_name_of_text(t, inj_utf8(t, message))) : -1;
}

static int nvtx_pop(void) {
    return pop(NULL);
}

static int nvtx_domain_pop(nvtxDomainHandle_t d) {
    return pop(d);
}

static nvtxRangeId_t start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, pp_str name) {
    inj_thread *t = inj_thread_get();
    uint64_t id = 0;
    if (!t || pp_range_start(t->session, a ? message_of(t, a) : name, &id) != PP_OK)
        return 0;
    inj_arg args[3];
    inj_record_args(t->session, args, args_of(d, a, args));
    return id;
}

static nvtxRangeId_t nvtx_start_ex(const nvtxEventAttributes_t *a) {
    return start(NULL, a, 0);
}

static nvtxRangeId_t nvtx_domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    return start(d, a, 0);
}

static nvtxRangeId_t nvtx_start_a(const char *message) {
    inj_thread *t = inj_thread_get();
    return t ? start(NULL, NULL, inj_name_of_text(t, message)) : 0;
}

static nvtxRangeId_t nvtx_start_w(const wchar_t *message) {
    inj_thread *t = inj_thread_get();
    return t ? start(NULL, NULL, inj_name_of_text(t, inj_utf8(t, message))) : 0;
}

static void nvtx_end(nvtxRangeId_t id) {
    inj_thread *t = inj_thread_get();
    if (t)
        pp_range_stop(t->session, id);
}

static void nvtx_domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
    (void)d;
    nvtx_end(id);
}

static void mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, pp_str name) {
    int64_t now = pp_now();
    inj_thread *t = inj_thread_get();
    if (!t || pp_mark(t->session, t->track, a ? message_of(t, a) : name, now) != PP_OK)
        return;
    inj_arg args[3];
    inj_record_args(t->session, args, args_of(d, a, args));
}

static void nvtx_mark_ex(const nvtxEventAttributes_t *a) {
    mark(NULL, a, 0);
}

static void nvtx_domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    mark(d, a, 0);
}

static void nvtx_mark_a(const char *message) {
    inj_thread *t = inj_thread_get();
    if (t)
        mark(NULL, NULL, inj_name_of_text(t, message));
}

static void nvtx_mark_w(const wchar_t *message) {
    inj_thread *t = inj_thread_get();
    if (t)
        mark(NULL, NULL, inj_name_of_text(t, inj_utf8(t, message)));
}

/* ---- installing the callbacks ---- */

typedef struct slot {
    unsigned id;
    NvtxFunctionPointer fn;
} slot;

#define SLOT(id, fn) {id, (NvtxFunctionPointer)(fn)}

static const slot core_slots[] = {
    SLOT(NVTX_CBID_CORE_MarkEx, nvtx_mark_ex),
    SLOT(NVTX_CBID_CORE_MarkA, nvtx_mark_a),
    SLOT(NVTX_CBID_CORE_MarkW, nvtx_mark_w),
    SLOT(NVTX_CBID_CORE_RangeStartEx, nvtx_start_ex),
    SLOT(NVTX_CBID_CORE_RangeStartA, nvtx_start_a),
    SLOT(NVTX_CBID_CORE_RangeStartW, nvtx_start_w),
    SLOT(NVTX_CBID_CORE_RangeEnd, nvtx_end),
    SLOT(NVTX_CBID_CORE_RangePushEx, nvtx_push_ex),
    SLOT(NVTX_CBID_CORE_RangePushA, nvtx_push_a),
    SLOT(NVTX_CBID_CORE_RangePushW, nvtx_push_w),
    SLOT(NVTX_CBID_CORE_RangePop, nvtx_pop),
    SLOT(NVTX_CBID_CORE_NameCategoryA, nvtx_name_category_a),
    SLOT(NVTX_CBID_CORE_NameCategoryW, nvtx_name_category_w),
};

static const slot core2_slots[] = {
    SLOT(NVTX_CBID_CORE2_DomainMarkEx, nvtx_domain_mark_ex),
    SLOT(NVTX_CBID_CORE2_DomainRangeStartEx, nvtx_domain_start_ex),
    SLOT(NVTX_CBID_CORE2_DomainRangeEnd, nvtx_domain_end),
    SLOT(NVTX_CBID_CORE2_DomainRangePushEx, nvtx_domain_push_ex),
    SLOT(NVTX_CBID_CORE2_DomainRangePop, nvtx_domain_pop),
    SLOT(NVTX_CBID_CORE2_DomainNameCategoryA, nvtx_domain_name_category_a),
    SLOT(NVTX_CBID_CORE2_DomainNameCategoryW, nvtx_domain_name_category_w),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, nvtx_register_string_a),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringW, nvtx_register_string_w),
    SLOT(NVTX_CBID_CORE2_DomainCreateA, nvtx_domain_create_a),
    SLOT(NVTX_CBID_CORE2_DomainCreateW, nvtx_domain_create_w),
    SLOT(NVTX_CBID_CORE2_DomainDestroy, nvtx_domain_destroy),
};

/* Writes our functions into one module's table; slots the program's NVTX
 * version does not have are left alone. 1 on success. */
static int install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const slot *slots,
                   size_t n) {
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (slots[i].id <= size && table[slots[i].id])
            *table[slots[i].id] = slots[i].fn;
    return 1;
}

/* ---- fork ---- */

/* The program's NVTX state of each module that called us: the word NVTX's
 * nvtxInitOnce spins on (0 fresh, 1 started, 2 complete). NVTX v3 hands
 * InitializeInjectionNvtx2 the address of its globals' export table, which
 * follows that word (nvtxImpl.h: nvtxGlobals_t). */
typedef struct nvtx_globals_head {
    volatile unsigned int init_state;
    NvtxExportTableCallbacks callbacks;
} nvtx_globals_head;
#define NVTX_STATE_STARTED 1u
#define NVTX_STATE_COMPLETE 2u
#define MAX_MODULES 64
static volatile unsigned int *module_states[MAX_MODULES];
static _Atomic int nmodules;

/* Before fork: wait until every module whose NVTX initialization we saw
 * start has completed it (the initializing thread runs meanwhile; bounded
 * at 5 s, so that an initialization stuck for some other reason cannot hold
 * fork for ever), then take naming_lock. */
static void fork_prepare(void) {
    int waited_ms = 0;
    struct timespec ms = {0, 1000000};
    int n = atomic_load_explicit(&nmodules, memory_order_acquire);
    for (int i = 0; i < n; i++)
        for (; waited_ms < 5000 && *module_states[i] != NVTX_STATE_COMPLETE; waited_ms++)
            nanosleep(&ms, NULL);
    pthread_mutex_lock(&naming_lock);
}

static void fork_release(void) {
    pthread_mutex_unlock(&naming_lock);
}

static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

/* Once per process: the annotation keys, and the fork handlers. */
static void intern_keys(void) {
    key_domain = pp_intern("domain");
    key_category = pp_intern("category");
    key_payload = pp_intern("payload");
    text_invalid_handle = pp_intern("<invalid nvtxStringHandle_t>");
}

/* The fork handlers go in as this library loads, the earliest moment any
 * of its code runs: NVTX loads it from inside an initialization. */
__attribute__((constructor)) static void register_fork_handlers(void) {
    pthread_atfork(fork_prepare, fork_release, fork_release);
}

/* Tracks the initialization of the module whose export table is `cb`, when
 * it looks like NVTX v3's (its state word says "started"). */
static void track_module(const NvtxExportTableCallbacks *cb) {
    const nvtx_globals_head *g =
        (const nvtx_globals_head *)((const char *)cb - offsetof(nvtx_globals_head, callbacks));
    if (g->init_state != NVTX_STATE_STARTED)
        return;
    pthread_mutex_lock(&naming_lock);
    int n = atomic_load_explicit(&nmodules, memory_order_relaxed);
    if (n < MAX_MODULES) {
        module_states[n] = (volatile unsigned int *)&g->init_state;
        atomic_store_explicit(&nmodules, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&naming_lock);
}

/* Says how many events named a string handle this library never handed
 * out, if any: the trace names them "<invalid nvtxStringHandle_t>". */
__attribute__((destructor)) static void report_invalid_handles(void) {
    uint64_t n = atomic_load(&invalid_string_handles);
    if (n)
        fprintf(stderr, "pipeprof: NVTX: %llu event(s) named by a string handle that "
                        "nvtxDomainRegisterString did not return: recorded as \"<invalid "
                        "nvtxStringHandle_t>\"\n", (unsigned long long)n);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
    const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    if (cb)
        track_module(cb); /* recording or not, fork must wait for this initialization */
    if (!cb || !pp_default_session() || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
        return 0;
    pthread_once(&keys_once, intern_keys);
    return install(cb, NVTX_CB_MODULE_CORE, core_slots, sizeof core_slots / sizeof core_slots[0]) &&
           install(cb, NVTX_CB_MODULE_CORE2, core2_slots, sizeof core2_slots / sizeof core2_slots[0]);
}
