/* The conversion of CUPTI activity records and the clock fit
 * (cupti_convert.h). No CUPTI call is made here: the collector passes the
 * records CUPTI wrote, tests pass records they built. */
#include <limits.h>

#include "core/error.h"
#include "inject/cupti_convert.h"

int cupti_clock_fit(const cupti_clock_sample *samples, size_t n, cupti_clock *out) {
    const cupti_clock_sample *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const cupti_clock_sample *s = &samples[i];
        if (s->host_after_ns < s->host_before_ns || s->cupti_ns > INT64_MAX)
            return PP_EINVAL;
        if (!best || s->host_after_ns - s->host_before_ns <
                         best->host_after_ns - best->host_before_ns)
            best = s;
    }
    if (!best)
        return PP_EINVAL;
    int64_t width = best->host_after_ns - best->host_before_ns;
    int64_t middle = best->host_before_ns + width / 2;
    out->offset_ns = middle - (int64_t)best->cupti_ns;
    out->error_ns = width - width / 2; /* the larger half when the width is odd */
    return PP_OK;
}

int64_t cupti_clock_bound(const cupti_clock *start, const cupti_clock *end) {
    int64_t drift = end->offset_ns - start->offset_ns;
    if (drift < 0)
        drift = -drift;
    int64_t worst = start->error_ns > end->error_ns ? start->error_ns : end->error_ns;
    return worst + drift;
}

/* [start, end] of a record in session time; 0 when the record has no
 * usable timestamps. */
static int interval(uint64_t start, uint64_t end, const cupti_clock *clock, cupti_span *out) {
    if ((start == 0 && end == 0) || end < start || end > (uint64_t)INT64_MAX)
        return 0;
    out->ts_ns = (int64_t)start + clock->offset_ns;
    out->dur_ns = (int64_t)(end - start);
    return 1;
}

static const char *memcpy_name(uint8_t kind) {
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "Memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "Memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "Memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "Memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "Memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy";
    }
}

static void on_stream(cupti_span *out, uint32_t device, uint32_t stream, uint32_t correlation) {
    out->where = CUPTI_ON_STREAM;
    out->device = device;
    out->stream = stream;
    out->role = PP_ROLE_EXEC;
    out->hw_ns = (uint64_t)out->dur_ns;
    out->correlation = correlation;
}

static int kernel(const cupti_kernel_rec *k, const cupti_clock *clock, cupti_span *out) {
    if (!interval(k->start, k->end, clock, out))
        return 0;
    on_stream(out, k->deviceId, k->streamId, k->correlationId);
    out->name = k->name && *k->name ? k->name : "kernel";
    if (k->queued != CUPTI_TIMESTAMP_UNKNOWN && k->queued <= k->start)
        out->queue_ns = (int64_t)(k->start - k->queued);
    return 1;
}

static int copy(const cupti_memcpy_rec *c, const cupti_clock *clock, cupti_span *out) {
    if (!interval(c->start, c->end, clock, out))
        return 0;
    on_stream(out, c->deviceId, c->streamId, c->correlationId);
    out->name = memcpy_name(c->copyKind);
    out->xfer_ns = out->hw_ns;
    out->bytes = c->bytes;
    return 1;
}

static int set(const cupti_memset_rec *m, const cupti_clock *clock, cupti_span *out) {
    if (!interval(m->start, m->end, clock, out))
        return 0;
    on_stream(out, m->deviceId, m->streamId, m->correlationId);
    out->name = "Memset";
    out->xfer_ns = out->hw_ns;
    out->bytes = m->bytes;
    return 1;
}

static int call(const CUpti_ActivityAPI *a, const cupti_clock *clock, cupti_api_name_fn api_name,
                cupti_span *out) {
    if (!interval(a->start, a->end, clock, out))
        return 0;
    out->where = CUPTI_ON_THREAD;
    out->tid = a->threadId;
    out->role = PP_ROLE_USER;
    out->correlation = a->correlationId;
    out->name = api_name ? api_name(a->kind, a->cbid) : NULL;
    if (!out->name || !*out->name)
        out->name = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? "runtime API call" : "driver API call";
    return 1;
}

int cupti_convert(const CUpti_Activity *rec, const cupti_clock *clock, cupti_api_name_fn api_name,
                  cupti_span *out) {
    *out = (cupti_span){.queue_ns = -1};
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return kernel((const cupti_kernel_rec *)(const void *)rec, clock, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return copy((const cupti_memcpy_rec *)(const void *)rec, clock, out);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return set((const cupti_memset_rec *)(const void *)rec, clock, out);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return call((const CUpti_ActivityAPI *)(const void *)rec, clock, api_name, out);
    default:
        return 0;
    }
}
