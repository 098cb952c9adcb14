/* inject.h — what the NVTX injection and the ITT collector share: each
 * recording thread's state, and the per-thread name cache that makes their
 * hot paths lock-free.
 *
 * Both libraries are loaded into a program that knows nothing of pipeprof
 * (NVTX_INJECTION64_PATH, INTEL_LIBITTNOTIFY64; docs/recording.md) and record
 * into the env-activated default session (PIPEPROF_OUTPUT). The annotation
 * APIs hand over names as text or as handles, on every call; pp_intern takes
 * a lock, so each thread keeps a small table from text (by content) or
 * handle (by address) to the interned id. A hit costs a hash and a compare;
 * only the first use of a name on a thread takes the slow path (pp_intern,
 * and a bigger table now and then). Open ranges live in a per-thread stack,
 * so ending one allocates nothing either. */
#ifndef PP_INJECT_H
#define PP_INJECT_H

#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "pipeprof/trace.h"

/* One cached name: `key` is a hash of the text or of the handle's address. */
typedef struct inj_name {
    uint64_t key;
    const void *ptr; /* the handle, or the interned text (for comparing) */
    uint32_t len;    /* text length; INJ_HANDLE for handle entries */
    pp_str id;
} inj_name;

#define INJ_HANDLE UINT32_MAX
#define INJ_STACK_DEPTH 128 /* open push/pop ranges kept per thread */
#define INJ_MAX_ARGS 4      /* annotations held for an open range */

typedef enum inj_arg_type { INJ_ARG_INT = 1, INJ_ARG_DOUBLE = 2, INJ_ARG_STR = 3 } inj_arg_type;

/* A key/value annotation waiting for its range to end. */
typedef struct inj_arg {
    pp_str key;
    uint8_t type; /* inj_arg_type */
    union {
        int64_t i;
        double d;
        pp_str s;
    } v;
} inj_arg;

/* A range opened by push (NVTX) or task_begin (ITT), recorded when it ends. */
typedef struct inj_open {
    int64_t ts_ns;
    const void *domain; /* the API's domain handle: pops match on it */
    pp_str name;
    pp_str stage;
    int64_t batch;
    int nargs;
    inj_arg args[INJ_MAX_ARGS];
} inj_open;

typedef struct inj_thread {
    pp_session *session; /* the default session when the thread started */
    pp_track track;      /* the thread's host track in it */
    inj_name *names;     /* open addressing, capacity a power of two */
    size_t cap, used;
    int depth;           /* open ranges, may exceed INJ_STACK_DEPTH */
    inj_open stack[INJ_STACK_DEPTH];
    char text[1024];     /* a wide string converted to UTF-8 */
} inj_thread;

/* The calling thread's state: created on its first call (slow path: lock,
 * allocation), freed when the thread exits. NULL when nothing is recording
 * (no default session) or when out of memory. */
inj_thread *inj_thread_slow(void);
extern _Thread_local inj_thread *inj_tls;

static inline inj_thread *inj_thread_get(void) {
    return inj_tls ? inj_tls : inj_thread_slow();
}

/* Slow path of the lookups below: interns and caches the name. */
pp_str inj_name_add(inj_thread *t, uint64_t key, const void *handle, const char *text, size_t len);

/* FNV-1a over the text, also giving its length. */
static inline uint64_t inj_hash_text(const char *text, size_t *len) {
    uint64_t h = 1469598103934665603ull;
    const char *p = text;
    for (; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ull;
    }
    *len = (size_t)(p - text);
    return h;
}

static inline uint64_t inj_hash_ptr(const void *p) {
    return ((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) ^ 0x5bd1e995u;
}

/* The interned id of `text` (NULL or "" give 0). Lock-free after the first
 * time this thread saw the text. */
static inline pp_str inj_name_of_text(inj_thread *t, const char *text) {
    if (!text || !*text)
        return 0;
    size_t len;
    uint64_t key = inj_hash_text(text, &len);
    for (size_t i = key & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        const inj_name *n = &t->names[i];
        if (!n->ptr)
            return inj_name_add(t, key, NULL, text, len);
        if (n->key == key && n->len == len && memcmp(n->ptr, text, len) == 0)
            return n->id;
    }
}

/* The interned id of the immutable name `text` behind `handle` (a domain or
 * string handle that lives as long as the process): looked up by address. */
static inline pp_str inj_name_of_handle(inj_thread *t, const void *handle, const char *text) {
    uint64_t key = inj_hash_ptr(handle);
    for (size_t i = key & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        const inj_name *n = &t->names[i];
        if (!n->ptr)
            return inj_name_add(t, key, handle, text, text ? strlen(text) : 0);
        if (n->ptr == handle && n->len == INJ_HANDLE)
            return n->id;
    }
}

/* Opens a range on the calling thread's stack at `ts_ns`; returns the new
 * depth (1 = outermost). Past INJ_STACK_DEPTH only the depth is counted. */
int inj_push(inj_thread *t, const void *domain, pp_str name, int64_t ts_ns);
/* The innermost open range, or NULL when none is open or it was not kept. */
static inline inj_open *inj_top(inj_thread *t) {
    return t->depth > 0 && t->depth <= INJ_STACK_DEPTH ? &t->stack[t->depth - 1] : NULL;
}
/* Closes the innermost range of `domain` at `end_ns` and records it (with
 * its annotations) on the thread's track. Returns the depth it had (1 =
 * outermost), or -1 when no range is open. */
int inj_pop(inj_thread *t, const void *domain, int64_t end_ns);
/* Holds an annotation for the innermost open range (dropped past
 * INJ_MAX_ARGS); "stage" and "batch" become the range's own fields. */
void inj_open_arg(inj_thread *t, const inj_arg *arg);
/* Records the annotations in order after the record just made. */
void inj_record_args(pp_session *s, const inj_arg *args, int n);

/* A wide string as UTF-8 in t->text (cut at its size). */
const char *inj_utf8(inj_thread *t, const wchar_t *w);

#endif
