/* libpipeprof_cupti: the CUPTI collector. `pipeprof record` names it in
 * CUDA_INJECTION64_PATH; the CUDA driver loads it during cuInit and calls
 * InitializeInjection, which subscribes to CUPTI's activity records of
 * kernels, memcpys, memsets and the runtime and driver API calls. Each
 * full buffer is turned into spans (cupti_convert.c) and recorded into the
 * default session (PIPEPROF_OUTPUT; cupti_record.c). docs/recording.md
 * describes what is recorded.
 *
 * Cost: nothing on the program's threads beyond CUPTI's own activity
 * tracing (it stamps each API call and device activity into its buffers);
 * conversion and recording run on the thread CUPTI hands full buffers to,
 * and at exit, when the last buffers are flushed.
 *
 * Clock: CUPTI's timestamps are mapped into the session clock by an offset
 * fitted from brackets of pp_now() around cuptiGetTimestamp() at start; a
 * second fit at exit bounds the drift, and every GPU track gets a "clock
 * alignment" mark with the bound over the run.
 *
 * This file needs a GPU and its driver to run; see docs/recording.md for
 * what has been verified on one. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#include "inject/cupti_record.h"

#define BUFFER_BYTES (4u << 20)
#define CLOCK_SAMPLES 32

static struct {
    cupti_clock clock;
    pthread_mutex_t lock; /* guards the recorder and `dropped` */
    cupti_recorder rec;
    uint64_t dropped; /* records CUPTI could not keep */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *api_name(CUpti_ActivityKind kind, CUpti_CallbackId cbid) {
    const char *name = NULL;
    CUpti_CallbackDomain domain =
        kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    return cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS ? name : NULL;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
    (void)size;
    pthread_mutex_lock(&g.lock);
    CUpti_Activity *rec = NULL;
    cupti_span sp;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        if (cupti_convert(rec, &g.clock, api_name, &sp))
            cupti_recorder_add(&g.rec, &sp);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        g.dropped += dropped;
    pthread_mutex_unlock(&g.lock);
    free(buffer);
}

static int clock_measure(cupti_clock *out) {
    cupti_clock_sample samples[CLOCK_SAMPLES];
    for (int i = 0; i < CLOCK_SAMPLES; i++) {
        samples[i].host_before_ns = pp_now();
        if (cuptiGetTimestamp(&samples[i].cupti_ns) != CUPTI_SUCCESS)
            return -1;
        samples[i].host_after_ns = pp_now();
    }
    return cupti_clock_fit(samples, CLOCK_SAMPLES, out) == PP_OK ? 0 : -1;
}

/* A CUPTI call failed: CUDA work goes unrecorded, which the user learns
 * from the run's stderr and from a "CUPTI failed" mark in the trace. */
static void report_failure(const char *call, CUptiResult rc) {
    const char *why = NULL;
    if (cuptiGetResultString(rc, &why) != CUPTI_SUCCESS || !why)
        why = "unknown CUPTI error";
    fprintf(stderr, "pipeprof: cupti: %s failed: %s; kernels and copies are not recorded\n", call,
            why);
    pp_session *s = g.rec.s;
    pp_track t;
    if (pp_track_thread(s, NULL, &t) == PP_OK && pp_mark(s, t, pp_intern("CUPTI failed"), pp_now()) == PP_OK)
        pp_annotate_str(s, pp_intern("error"), pp_intern(why));
}

/* At exit, before the default session is written (its exit handler was
 * registered when libpipeprof loaded, before this one): the last buffers,
 * then each GPU track's clock mark with the bound over the run. */
static void finish(void) {
    CUptiResult rc = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (rc != CUPTI_SUCCESS)
        report_failure("cuptiActivityFlushAll", rc);
    cupti_clock end;
    int64_t bound = g.clock.error_ns, drift = 0;
    if (clock_measure(&end) == 0) {
        bound = cupti_clock_bound(&g.clock, &end);
        drift = end.offset_ns - g.clock.offset_ns;
    }
    pthread_mutex_lock(&g.lock);
    cupti_recorder_mark_clocks(&g.rec, bound, drift, g.dropped);
    pthread_mutex_unlock(&g.lock);
}

static int enable(CUpti_ActivityKind kind, const char *what) {
    CUptiResult rc = cuptiActivityEnable(kind);
    if (rc != CUPTI_SUCCESS)
        report_failure(what, rc);
    return rc == CUPTI_SUCCESS ? 0 : -1;
}

/* The driver's entry point (CUDA_INJECTION64_PATH), called once during
 * cuInit. Returns 1 whatever happens: a profiler must never stop the
 * program's CUDA from working. */
__attribute__((visibility("default"))) int InitializeInjection(void) {
    static atomic_int done;
    pp_session *s = pp_default_session();
    if (atomic_exchange(&done, 1) || !s || cupti_recorder_init(&g.rec, s) != PP_OK)
        return 1;
    if (clock_measure(&g.clock) != 0) {
        report_failure("cuptiGetTimestamp", CUPTI_ERROR_UNKNOWN);
        return 1;
    }
    CUptiResult rc;
    /* API records then name threads as gettid does, as host tracks do */
    if ((rc = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS) {
        report_failure("cuptiSetThreadIdType", rc);
        return 1;
    }
    if ((rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
        report_failure("cuptiActivityRegisterCallbacks", rc);
        return 1;
    }
    atexit(finish);
    /* queued times give kernels their queue part; where CUPTI cannot
     * collect them kernels are still recorded, without it */
    cuptiActivityEnableLatencyTimestamps(1);
    if (enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "cuptiActivityEnable(CONCURRENT_KERNEL)") == 0 &&
        enable(CUPTI_ACTIVITY_KIND_MEMCPY, "cuptiActivityEnable(MEMCPY)") == 0 &&
        enable(CUPTI_ACTIVITY_KIND_MEMSET, "cuptiActivityEnable(MEMSET)") == 0 &&
        enable(CUPTI_ACTIVITY_KIND_RUNTIME, "cuptiActivityEnable(RUNTIME)") == 0)
        enable(CUPTI_ACTIVITY_KIND_DRIVER, "cuptiActivityEnable(DRIVER)");
    return 1;
}
