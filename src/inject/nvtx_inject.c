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
 *   registered string the handle carries its interned id: no lookup at all
 *
 * Without a default session the initializer returns 0, and NVTX turns every
 * call back into a no-op. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

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

struct nvtxStringRegistration_st {
    struct nvtxStringRegistration_st *next; /* every string registered */
    pp_str id;
};

static struct nvtxDomainRegistration_st default_domain;
static pthread_mutex_t naming_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nvtxDomainRegistration_st *domains;   /* under naming_lock */
static struct nvtxStringRegistration_st *strings;   /* under naming_lock */
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
    struct nvtxStringRegistration_st *h = malloc(sizeof *h);
    if (!h)
        return NULL;
    h->id = pp_intern(text);
    pthread_mutex_lock(&naming_lock);
    h->next = strings;
    strings = h;
    pthread_mutex_unlock(&naming_lock);
    return h;
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

static pp_str message_of(inj_thread *t, const nvtxEventAttributes_t *a) {
    if (!a)
        return 0;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return inj_name_of_text(t, a->message.ascii);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return a->message.registered ? a->message.registered->id : 0;
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

/* nvtxNameOsThread: the thread's tracks take the name in every session
 * (core/thread_names.c), whichever thread names it. */
static void nvtx_name_os_thread_a(uint32_t tid, const char *name) {
    pp_thread_name_set((int64_t)tid, name);
}

static void nvtx_name_os_thread_w(uint32_t tid, const wchar_t *name) {
    inj_thread *t = inj_thread_get();
    if (t)
        pp_thread_name_set((int64_t)tid, inj_utf8(t, name));
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
    SLOT(NVTX_CBID_CORE_NameOsThreadA, nvtx_name_os_thread_a),
    SLOT(NVTX_CBID_CORE_NameOsThreadW, nvtx_name_os_thread_w),
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

static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void intern_keys(void) {
    key_domain = pp_intern("domain");
    key_category = pp_intern("category");
    key_payload = pp_intern("payload");
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
    if (!get || !pp_default_session())
        return 0;
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
        return 0;
    pthread_once(&keys_once, intern_keys);
    return install(cb, NVTX_CB_MODULE_CORE, core_slots, sizeof core_slots / sizeof core_slots[0]) &&
           install(cb, NVTX_CB_MODULE_CORE2, core2_slots, sizeof core2_slots / sizeof core2_slots[0]);
}
