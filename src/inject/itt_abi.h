/* itt_abi.h — the part of the ITT API's binary interface a collector
 * implements, as Intel's ittnotify.h and ittnotify_config.h (ittapi, BSD-3)
 * define it for x86-64 Linux.
 *
 * Why declared here: a program's ITT calls go through the "static part" of
 * ittapi compiled into it (PyTorch, oneDNN, OpenVINO, the ittapi Python
 * package), which loads the collector named by INTEL_LIBITTNOTIFY64 and calls
 * its __itt_api_init with the static part's global table. No Debian package
 * and no package of the project's venv ships ittnotify.h (PyTorch's wheel
 * does, and it is not a dependency), and a collector needs only these few
 * layouts, which ITT keeps stable across versions (new fields go at the
 * end). tests/inject/test_itt.sh and test_torch_itt.sh check them against
 * the real static part of the ittapi and torch wheels. */
#ifndef PP_ITT_ABI_H
#define PP_ITT_ABI_H

#include <pthread.h>
#include <stddef.h>

/* __itt_domain: `flags` non-zero enables the domain (the API's macros skip
 * every call on a disabled one); extra1/extra2 are the collector's. */
typedef struct itt_domain {
    volatile int flags;
    const char *nameA;
    void *nameW;
    int extra1;
    void *extra2;
    struct itt_domain *next;
} itt_domain;

/* __itt_string_handle */
typedef struct itt_string_handle {
    const char *strA;
    void *strW;
    int extra1;
    void *extra2;
    struct itt_string_handle *next;
} itt_string_handle;

/* __itt_id, passed by value */
typedef struct itt_id {
    unsigned long long d1, d2, d3;
} itt_id;

typedef unsigned long long itt_timestamp; /* __itt_timestamp */

/* __itt_metadata_type */
enum {
    ITT_METADATA_U64 = 1,
    ITT_METADATA_S64,
    ITT_METADATA_U32,
    ITT_METADATA_S32,
    ITT_METADATA_U16,
    ITT_METADATA_S16,
    ITT_METADATA_FLOAT,
    ITT_METADATA_DOUBLE
};

/* __itt_api_info: one entry of the static part's function table; `name` is
 * the symbol a collector exports ("__itt_task_begin"), `func_ptr` the
 * pointer the static part calls through, `null_func` its no-op. */
typedef struct itt_api_info {
    const char *name;
    void **func_ptr;
    void *init_func;
    void *null_func;
    int group;
} itt_api_info;

/* The head of __itt_global, up to the fields a collector reads. */
typedef struct itt_global {
    unsigned char magic[8]; /* ED AB AB EC 0D EE DA 30 */
    unsigned long version_major;
    unsigned long version_minor;
    unsigned long version_build;
    volatile long api_initialized;
    volatile long mutex_initialized;
    volatile long atomic_counter;
    pthread_mutex_t mutex;
    void *lib; /* dlopen handle of the collector */
    void *error_handler;
    const char **dll_path_ptr;
    itt_api_info *api_list_ptr; /* ends with a NULL name */
} itt_global;

#endif
