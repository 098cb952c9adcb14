/* libpipeprof_itt: an ITT collector. A program annotated with ITT (PyTorch's
 * torch.profiler.itt and emit_itt, oneDNN, OpenVINO, the ittapi Python
 * package) loads the library named by INTEL_LIBITTNOTIFY64 on its first ITT
 * call and hands __itt_api_init its function table, which this file fills
 * with its own functions. From then on each call lands here and is recorded
 * into the default session (PIPEPROF_OUTPUT):
 *
 *   task_begin/end        a span on the thread's track (tasks of one domain nest)
 *   task_begin/end_overlapped  a range on a track of its own (may end on
 *                         another thread)
 *   frame_begin/end_v3    a span named after the domain, "itt": "frame"
 *   marker                an instant on the thread's track
 *   metadata_add/_str_add an annotation of the innermost open task; "stage"
 *                         (string) and "batch" (integer) make the task a stage
 *                         instance for the analyzer
 *   pause/resume          pause and resume the session
 *   get_timestamp         the session clock
 *
 * Every span carries a "domain" annotation. Domains and string handles made
 * here carry their interned name in `extra1`, so a task costs no lookup;
 * those the program made before the collector was loaded are found by
 * address in the thread's name cache. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "inject/inject.h"
#include "inject/itt_abi.h"

#define EXPORT __attribute__((visibility("default")))

static pp_str key_domain, key_itt, text_frame;
/* Taken only to create a domain or string handle (lookups take no lock),
 * and around fork (fork_prepare). */
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;

/* Domains and string handles by interned id of their name, so that creating
 * the same name again (the static part forwards every create here, PyTorch
 * makes a string handle per range) finds the first one without a lock:
 * chunks of pointers, published with release order and never moved. */
#define BY_ID_CHUNK 1024
#define BY_ID_CHUNKS 4096 /* ids below 4 M */
typedef _Atomic(_Atomic(void *) *) by_id_table[BY_ID_CHUNKS];
static by_id_table domains_by_id, handles_by_id;

static void *by_id_find(by_id_table table, pp_str id) {
    if (id >= (pp_str)BY_ID_CHUNK * BY_ID_CHUNKS)
        return NULL;
    _Atomic(void *) *chunk = atomic_load_explicit(&table[id / BY_ID_CHUNK], memory_order_acquire);
    return chunk ? atomic_load_explicit(&chunk[id % BY_ID_CHUNK], memory_order_acquire) : NULL;
}

/* The entry for id, made by make(id) under create_lock when there is none
 * yet; NULL for an id past the table or out of memory. */
static void *by_id_get(by_id_table table, pp_str id, void *(*make)(pp_str)) {
    void *found = by_id_find(table, id);
    if (found || id >= (pp_str)BY_ID_CHUNK * BY_ID_CHUNKS)
        return found;
    pthread_mutex_lock(&create_lock);
    found = by_id_find(table, id);
    _Atomic(void *) *chunk = atomic_load(&table[id / BY_ID_CHUNK]);
    if (!found && !chunk && (chunk = calloc(BY_ID_CHUNK, sizeof *chunk)) != NULL)
        atomic_store_explicit(&table[id / BY_ID_CHUNK], chunk, memory_order_release);
    if (!found && chunk && (found = make(id)) != NULL)
        atomic_store_explicit(&chunk[id % BY_ID_CHUNK], found, memory_order_release);
    pthread_mutex_unlock(&create_lock);
    return found;
}

/* fork(): the child gets the lock as it was; take it around fork, as
 * src/core/fork.c does the core's. Installed as the library loads. */
static void fork_prepare(void) {
    pthread_mutex_lock(&create_lock);
}

static void fork_release(void) {
    pthread_mutex_unlock(&create_lock);
}

__attribute__((constructor)) static void register_fork_handlers(void) {
    pthread_atfork(fork_prepare, fork_release, fork_release);
}

static pp_str name_of(inj_thread *t, const void *handle, int extra1, const char *text) {
    return extra1 > 0 ? (pp_str)extra1 : inj_name_of_handle(t, handle, text);
}

static pp_str domain_name(inj_thread *t, const itt_domain *d) {
    return d ? name_of(t, d, d->extra1, d->nameA) : 0;
}

static pp_str handle_name(inj_thread *t, const itt_string_handle *h) {
    return h ? name_of(t, h, h->extra1, h->strA) : 0;
}

/* ---- creating domains and string handles (slow paths) ---- */

/* The interned id of a name given to a create call: through the thread's
 * cache when there is a thread state (lock-free after the first time). */
static pp_str id_of_name(const char *name) {
    inj_thread *t = inj_thread_get();
    return t ? inj_name_of_text(t, name) : pp_intern(name);
}

static void *make_domain(pp_str id) {
    itt_domain *d = calloc(1, sizeof *d);
    if (d) {
        d->nameA = pp_str_text(id);
        d->extra1 = id <= INT_MAX ? (int)id : 0;
        d->flags = 1; /* enabled */
    }
    return d;
}

static void *make_handle(pp_str id) {
    itt_string_handle *h = calloc(1, sizeof *h);
    if (h) {
        h->strA = pp_str_text(id);
        h->extra1 = (int)id;
    }
    return h;
}

EXPORT itt_domain *__itt_domain_create(const char *name);
itt_domain *__itt_domain_create(const char *name) {
    if (!name)
        return NULL;
    /* "" is a domain too (id 0): ITT's macros test the flags of what they get */
    return by_id_get(domains_by_id, *name ? id_of_name(name) : 0, make_domain);
}

EXPORT itt_string_handle *__itt_string_handle_create(const char *name);
itt_string_handle *__itt_string_handle_create(const char *name) {
    pp_str id = name && *name ? id_of_name(name) : 0;
    return id ? by_id_get(handles_by_id, id, make_handle) : NULL;
}

/* ---- events (hot path) ---- */

/* A frame is kept on the range stack under a key of its own, so ending a
 * frame never closes a task of the same domain. */
static const void *frame_key(const itt_domain *d) {
    return (const char *)d + 1;
}

static void open_range(const void *key, const itt_domain *d, pp_str name, pp_str kind) {
    int64_t now = pp_now();
    inj_thread *t = inj_thread_get();
    if (!t)
        return;
    inj_push(t, key, name, now);
    inj_arg a = {.key = key_domain, .type = INJ_ARG_STR, .v.s = domain_name(t, d)};
    if (a.v.s)
        inj_open_arg(t, &a);
    if (kind) {
        a = (inj_arg){.key = key_itt, .type = INJ_ARG_STR, .v.s = kind};
        inj_open_arg(t, &a);
    }
}

static void close_range(const void *key) {
    int64_t now = pp_now();
    inj_thread *t = inj_thread_get();
    if (t)
        inj_pop(t, key, now);
}

EXPORT void __itt_task_begin(const itt_domain *d, itt_id id, itt_id parent, itt_string_handle *name);
void __itt_task_begin(const itt_domain *d, itt_id id, itt_id parent, itt_string_handle *name) {
    (void)id;
    (void)parent;
    inj_thread *t = inj_thread_get();
    if (t)
        open_range(d, d, handle_name(t, name), 0);
}

EXPORT void __itt_task_end(const itt_domain *d);
void __itt_task_end(const itt_domain *d) {
    close_range(d);
}

/* Overlapped tasks may end on any thread, named by the __itt_id they began
 * with: a lock-free table maps the id to the session's range id. A slot is
 * claimed by compare-and-swap of its key; probing stops after MAX_PROBE
 * slots, so a full neighbourhood drops the task instead of slowing down. */
#define OVERLAPPED_SLOTS 4096
#define MAX_PROBE 64
enum { SLOT_FREE = 0, SLOT_GONE = 1 };
static struct {
    _Atomic uint64_t key;
    _Atomic uint64_t range;
} overlapped[OVERLAPPED_SLOTS];

static uint64_t overlapped_key(const itt_domain *d, itt_id id) {
    uint64_t h = inj_hash_ptr(d) ^ (id.d1 * 0xff51afd7ed558ccdull) ^ (id.d2 * 0xc4ceb9fe1a85ec53ull) ^
                 id.d3;
    return h > SLOT_GONE ? h : h + 2;
}

EXPORT void __itt_task_begin_overlapped(const itt_domain *d, itt_id id, itt_id parent,
                                        itt_string_handle *name);
void __itt_task_begin_overlapped(const itt_domain *d, itt_id id, itt_id parent,
                                 itt_string_handle *name) {
    (void)parent;
    inj_thread *t = inj_thread_get();
    uint64_t range = 0, key = overlapped_key(d, id);
    if (!t || pp_range_start(t->session, handle_name(t, name), &range) != PP_OK || !range)
        return;
    pp_str dom = domain_name(t, d);
    if (dom)
        pp_annotate_str(t->session, key_domain, dom);
    for (uint64_t i = 0; i < MAX_PROBE; i++) {
        size_t at = (size_t)((key + i) % OVERLAPPED_SLOTS);
        uint64_t seen = atomic_load_explicit(&overlapped[at].key, memory_order_relaxed);
        if (seen <= SLOT_GONE &&
            atomic_compare_exchange_strong_explicit(&overlapped[at].key, &seen, key,
                                                    memory_order_relaxed, memory_order_relaxed)) {
            /* the program orders this task's end after its begin, so the
             * ending thread sees this store */
            atomic_store_explicit(&overlapped[at].range, range, memory_order_release);
            return;
        }
    }
    /* no slot: the range keeps its begin and is reported as unmatched */
}

EXPORT void __itt_task_end_overlapped(const itt_domain *d, itt_id id);
void __itt_task_end_overlapped(const itt_domain *d, itt_id id) {
    inj_thread *t = inj_thread_get();
    uint64_t key = overlapped_key(d, id);
    if (!t)
        return;
    for (uint64_t i = 0; i < MAX_PROBE; i++) {
        size_t at = (size_t)((key + i) % OVERLAPPED_SLOTS);
        /* read before the slot is given up: a new task may claim it after */
        uint64_t seen = key, range = atomic_load_explicit(&overlapped[at].range, memory_order_acquire);
        if (atomic_compare_exchange_strong_explicit(&overlapped[at].key, &seen, SLOT_GONE,
                                                    memory_order_relaxed, memory_order_relaxed)) {
            pp_range_stop(t->session, range);
            return;
        }
    }
}

EXPORT void __itt_frame_begin_v3(const itt_domain *d, itt_id *id);
void __itt_frame_begin_v3(const itt_domain *d, itt_id *id) {
    (void)id;
    inj_thread *t = inj_thread_get();
    if (t)
        open_range(frame_key(d), d, domain_name(t, d), text_frame);
}

EXPORT void __itt_frame_end_v3(const itt_domain *d, itt_id *id);
void __itt_frame_end_v3(const itt_domain *d, itt_id *id) {
    (void)id;
    close_range(frame_key(d));
}

EXPORT void __itt_marker(const itt_domain *d, itt_id id, itt_string_handle *name, int scope);
void __itt_marker(const itt_domain *d, itt_id id, itt_string_handle *name, int scope) {
    (void)id;
    (void)scope;
    int64_t now = pp_now();
    inj_thread *t = inj_thread_get();
    if (!t || pp_mark(t->session, t->track, handle_name(t, name), now) != PP_OK)
        return;
    pp_str dom = domain_name(t, d);
    if (dom)
        pp_annotate_str(t->session, key_domain, dom);
}

EXPORT void __itt_metadata_add(const itt_domain *d, itt_id id, itt_string_handle *key, int type,
                               size_t count, void *data);
void __itt_metadata_add(const itt_domain *d, itt_id id, itt_string_handle *key, int type,
                        size_t count, void *data) {
    (void)d;
    (void)id;
    inj_thread *t = inj_thread_get();
    if (!t || !key || count == 0 || !data)
        return;
    inj_arg a = {.key = handle_name(t, key), .type = INJ_ARG_INT};
    switch (type) { /* the first value: annotations hold one */
    case ITT_METADATA_U64: a.v.i = (int64_t)*(const uint64_t *)data; break;
    case ITT_METADATA_S64: a.v.i = *(const int64_t *)data; break;
    case ITT_METADATA_U32: a.v.i = *(const uint32_t *)data; break;
    case ITT_METADATA_S32: a.v.i = *(const int32_t *)data; break;
    case ITT_METADATA_U16: a.v.i = *(const uint16_t *)data; break;
    case ITT_METADATA_S16: a.v.i = *(const int16_t *)data; break;
    case ITT_METADATA_FLOAT: a = (inj_arg){a.key, INJ_ARG_DOUBLE, {.d = *(const float *)data}}; break;
    case ITT_METADATA_DOUBLE: a = (inj_arg){a.key, INJ_ARG_DOUBLE, {.d = *(const double *)data}}; break;
    default: return;
    }
    inj_open_arg(t, &a);
}

EXPORT void __itt_metadata_str_add(const itt_domain *d, itt_id id, itt_string_handle *key,
                                   const char *data, size_t length);
void __itt_metadata_str_add(const itt_domain *d, itt_id id, itt_string_handle *key,
                            const char *data, size_t length) {
    (void)d;
    (void)id;
    inj_thread *t = inj_thread_get();
    if (!t || !key || !data)
        return;
    if (length == 0)
        length = strlen(data);
    if (length >= sizeof t->text)
        length = sizeof t->text - 1;
    memcpy(t->text, data, length);
    t->text[length] = '\0';
    inj_arg a = {.key = handle_name(t, key), .type = INJ_ARG_STR, .v.s = inj_name_of_text(t, t->text)};
    inj_open_arg(t, &a);
}

EXPORT itt_timestamp __itt_get_timestamp(void);
itt_timestamp __itt_get_timestamp(void) {
    return (itt_timestamp)pp_now();
}

EXPORT void __itt_pause(void);
void __itt_pause(void) {
    pp_session_pause(pp_default_session());
}

EXPORT void __itt_resume(void);
void __itt_resume(void) {
    pp_session_resume(pp_default_session());
}

/* ---- the static part's entry point ---- */

typedef void (*any_fn)(void);

typedef struct export {
    const char *name;
    any_fn fn;
} export;

#define EXPORTED(fn) {#fn, (any_fn)(fn)}

static const export exports[] = {
    EXPORTED(__itt_domain_create),  EXPORTED(__itt_string_handle_create),
    EXPORTED(__itt_task_begin),     EXPORTED(__itt_task_end),
    EXPORTED(__itt_task_begin_overlapped), EXPORTED(__itt_task_end_overlapped),
    EXPORTED(__itt_frame_begin_v3), EXPORTED(__itt_frame_end_v3),
    EXPORTED(__itt_marker),         EXPORTED(__itt_metadata_add),
    EXPORTED(__itt_metadata_str_add), EXPORTED(__itt_get_timestamp),
    EXPORTED(__itt_pause),          EXPORTED(__itt_resume),
};

/* Our function for the static part's entry `name`, as the data pointer its
 * table holds (POSIX makes the two the same size; memcpy says so without a
 * cast ISO C forbids). NULL when we have none. */
static void *export_of(const char *name) {
    void *p = NULL;
    for (size_t i = 0; i < sizeof exports / sizeof exports[0]; i++)
        if (strcmp(exports[i].name, name) == 0)
            memcpy(&p, &exports[i].fn, sizeof p);
    return p;
}

static void intern_keys(void) {
    key_domain = pp_intern("domain");
    key_itt = pp_intern("itt");
    text_frame = pp_intern("frame");
}

/* Called once per static part (each library with ITT compiled in has one)
 * under its lock. Points each of its entries at our function, or at its
 * no-op where we have none; without a default session, all at the no-ops,
 * so the program runs as if no collector were there. */
EXPORT void __itt_api_init(itt_global *g, int init_groups);
void __itt_api_init(itt_global *g, int init_groups) {
    static const unsigned char magic[8] = {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30};
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)init_groups;
    if (!g || memcmp(g->magic, magic, sizeof magic) != 0 || !g->api_list_ptr)
        return;
    int recording = pp_default_session() != NULL;
    pthread_once(&once, intern_keys);
    for (itt_api_info *e = g->api_list_ptr; e->name; e++) {
        void *fn = recording ? export_of(e->name) : NULL;
        *e->func_ptr = fn ? fn : e->null_func;
    }
}
