/* Recording converted CUPTI spans into a session (cupti_record.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "inject/cupti_record.h"

int cupti_recorder_init(cupti_recorder *r, pp_session *s) {
    *r = (cupti_recorder){.s = s};
    r->key_correlation = pp_intern("correlation");
    r->key_bytes = pp_intern("bytes");
    r->key_queue = pp_intern("queue_ns");
    return r->key_correlation && r->key_bytes && r->key_queue ? PP_OK : PP_ENOMEM;
}

void cupti_recorder_free(cupti_recorder *r) {
    free(r->streams);
    free(r->threads);
    r->streams = NULL;
    r->threads = NULL;
}

/* The name's interned id; a cache miss (first use, or another text in the
 * slot) interns it again, which gives the same id. */
static pp_str name_of(cupti_recorder *r, const char *text) {
    size_t slot = ((uintptr_t)text >> 3) % CUPTI_NAME_CACHE;
    if (r->names[slot].text != text) {
        r->names[slot].text = text;
        r->names[slot].id = pp_intern(text);
    }
    return r->names[slot].id;
}

static int grow(void **items, size_t *cap, size_t n, size_t size) {
    if (n < *cap)
        return 0;
    size_t bigger = *cap ? 2 * *cap : 16;
    void *p = realloc(*items, bigger * size);
    if (!p)
        return -1;
    *items = p;
    *cap = bigger;
    return 0;
}

static int stream_track(cupti_recorder *r, const cupti_span *sp, pp_track *out) {
    for (size_t i = 0; i < r->nstreams; i++)
        if (r->streams[i].device == sp->device && r->streams[i].stream == sp->stream) {
            *out = r->streams[i].track;
            return 0;
        }
    char device[32];
    snprintf(device, sizeof device, "GPU %" PRIu32, sp->device);
    if (sp->stream > INT32_MAX ||
        grow((void **)&r->streams, &r->capstreams, r->nstreams, sizeof *r->streams) ||
        pp_track_device(r->s, device, (int)sp->stream, NULL, 0, out) != PP_OK)
        return -1;
    r->streams[r->nstreams++] = (cupti_stream_track){sp->device, sp->stream, *out, sp->ts_ns};
    return 0;
}

/* The thread's name comes from /proc while it runs; one that has ended
 * before its records arrived is named "thread <tid>". */
static int thread_track(cupti_recorder *r, uint32_t tid, pp_track *out) {
    for (size_t i = 0; i < r->nthreads; i++)
        if (r->threads[i].tid == tid) {
            *out = r->threads[i].track;
            return 0;
        }
    char path[64], name[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%" PRIu32 "/comm", tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(name, sizeof name, f))
            name[strcspn(name, "\n")] = '\0';
        fclose(f);
    }
    if (grow((void **)&r->threads, &r->capthreads, r->nthreads, sizeof *r->threads) ||
        pp_track_thread_id(r->s, tid, name, out) != PP_OK)
        return -1;
    r->threads[r->nthreads++] = (cupti_thread_track){tid, *out};
    return 0;
}

void cupti_recorder_add(cupti_recorder *r, const cupti_span *sp) {
    pp_span_rec rec;
    pp_span_rec_init(&rec);
    int rc = sp->where == CUPTI_ON_STREAM ? stream_track(r, sp, &rec.track)
                                          : thread_track(r, sp->tid, &rec.track);
    if (rc != 0) {
        r->lost++;
        return;
    }
    rec.name = name_of(r, sp->name);
    rec.role = sp->role;
    rec.ts_ns = sp->ts_ns;
    rec.dur_ns = sp->dur_ns;
    rec.hw_ns = sp->hw_ns;
    rec.xfer_ns = sp->xfer_ns;
    /* a full budget or a stopped session is counted by the session */
    if (pp_span(r->s, &rec) != PP_OK)
        return;
    pp_annotate_int(r->s, r->key_correlation, sp->correlation);
    if (sp->bytes)
        pp_annotate_int(r->s, r->key_bytes, (int64_t)(sp->bytes > INT64_MAX ? INT64_MAX : sp->bytes));
    if (sp->queue_ns >= 0)
        pp_annotate_int(r->s, r->key_queue, sp->queue_ns);
}

void cupti_recorder_mark_clocks(cupti_recorder *r, int64_t error_ns, int64_t drift_ns,
                                uint64_t dropped) {
    pp_str mark = pp_intern("clock alignment"), method = pp_intern("cuptiGetTimestamp");
    pp_str kmethod = pp_intern("method"), kerror = pp_intern("error_ns");
    pp_str kdrift = pp_intern("drift_ns"), kdropped = pp_intern("cupti_dropped");
    pp_str klost = pp_intern("cupti_lost");
    for (size_t i = 0; i < r->nstreams; i++) {
        if (pp_mark(r->s, r->streams[i].track, mark, r->streams[i].first_ns) != PP_OK)
            continue;
        pp_annotate_str(r->s, kmethod, method);
        pp_annotate_int(r->s, kerror, error_ns);
        pp_annotate_int(r->s, kdrift, drift_ns);
        if (dropped)
            pp_annotate_int(r->s, kdropped, (int64_t)(dropped > INT64_MAX ? INT64_MAX : dropped));
        if (r->lost)
            pp_annotate_int(r->s, klost, (int64_t)(r->lost > INT64_MAX ? INT64_MAX : r->lost));
    }
}
