/* cupti_convert.h — from CUPTI activity records to session spans, and the
 * clock alignment that maps CUPTI's timestamps into the session clock.
 *
 * Pure functions over the records' own layouts (cupti_activity.h of the
 * release the collector is built against), so that tests can hand-build
 * records and check what becomes of them without a GPU; the collector
 * (cupti_inject.c) walks CUPTI's buffers and records what comes out here.
 *
 * What each record becomes (docs/recording.md, "CUDA kernels through CUPTI"):
 *   - kernel (CONCURRENT_KERNEL): an exec on `GPU <device>/stream <stream>`,
 *     [start, end], hw_ns = its duration; queue_ns = start - queued when
 *     CUPTI collected the queued time (latency timestamps);
 *   - memcpy, memset: an exec on its stream, hw_ns = xfer_ns = duration,
 *     with the bytes moved;
 *   - runtime / driver API call: a span on the host thread that made it.
 * Device work and the API call that launched it carry the same
 * `correlation`, which is how the analyzer labels a kernel with the stage
 * and batch of the host range around its launch (docs/analysis.md). */
#ifndef PP_CUPTI_CONVERT_H
#define PP_CUPTI_CONVERT_H

#include <cupti_activity.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeprof/trace.h"

/* The newest record layouts of the release built against (cmake/cupti.cmake
 * reads them from cupti_activity.h): CUPTI fills its buffers with those. */
#if !defined(PP_CUPTI_KERNEL) || !defined(PP_CUPTI_MEMCPY) || !defined(PP_CUPTI_MEMSET)
#error "PP_CUPTI_KERNEL, PP_CUPTI_MEMCPY and PP_CUPTI_MEMSET name the record layouts (cmake/cupti.cmake)"
#endif
typedef PP_CUPTI_KERNEL cupti_kernel_rec;
typedef PP_CUPTI_MEMCPY cupti_memcpy_rec;
typedef PP_CUPTI_MEMSET cupti_memset_rec;

/* session ns = CUPTI ns + offset_ns, within error_ns. */
typedef struct cupti_clock {
    int64_t offset_ns;
    int64_t error_ns;
} cupti_clock;

/* One reading of the two clocks: the session clock just before and just
 * after reading CUPTI's. */
typedef struct cupti_clock_sample {
    int64_t host_before_ns, host_after_ns;
    uint64_t cupti_ns;
} cupti_clock_sample;

/* The alignment from the sample with the narrowest host bracket: CUPTI's
 * reading lies somewhere inside it, so taking its middle errs by at most
 * half its width. PP_EINVAL for no samples or a bracket that runs
 * backwards. */
int cupti_clock_fit(const cupti_clock_sample *samples, size_t n, cupti_clock *out);

/* The bound that holds over a whole run aligned with `start` when a fresh
 * fit at its end gave `end`: both measurements' errors plus how far the
 * clocks drifted apart in between. */
int64_t cupti_clock_bound(const cupti_clock *start, const cupti_clock *end);

typedef enum cupti_where {
    CUPTI_ON_STREAM = 0, /* device work: track GPU <device>/stream <stream> */
    CUPTI_ON_THREAD = 1  /* an API call: the host track of thread `tid` */
} cupti_where;

/* One span to record. Strings live as long as the process (kernel names
 * are CUPTI's; the others static or from `api_name`). */
typedef struct cupti_span {
    cupti_where where;
    uint32_t device, stream; /* CUPTI_ON_STREAM */
    uint32_t tid;            /* CUPTI_ON_THREAD: the OS thread id (gettid) */
    const char *name;
    pp_role role;            /* PP_ROLE_EXEC for device work, PP_ROLE_USER for calls */
    int64_t ts_ns, dur_ns;   /* session clock */
    uint64_t hw_ns, xfer_ns;
    uint32_t correlation;    /* links device work to its launching call */
    uint64_t bytes;          /* memcpy, memset; 0 otherwise */
    int64_t queue_ns;        /* queued -> start; -1 where not known */
} cupti_span;

/* Names an API call (cuptiGetCallbackName in the collector); NULL or ""
 * names it "runtime API call" or "driver API call". */
typedef const char *(*cupti_api_name_fn)(CUpti_ActivityKind kind, CUpti_CallbackId cbid);

/* Converts one record. Returns 1 with *out filled, or 0 for a record that
 * makes no span: a kind not converted, or one without timestamps (CUPTI
 * writes 0 for both when it could not collect them) or ending before it
 * starts. */
int cupti_convert(const CUpti_Activity *rec, const cupti_clock *clock, cupti_api_name_fn api_name,
                  cupti_span *out);

#endif
