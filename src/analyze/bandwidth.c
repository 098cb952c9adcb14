/* bandwidth.c — bytes moved per device, track and stage, over busy time and
 * over transfer time (docs/architecture.md §4, docs/analysis.md "Bandwidth").
 *
 * An exec carries bytes in its annotations: bytes_in (read: its input
 * tensors) and bytes_out (written: its outputs), as pipeprof's executors
 * record them, or `bytes`, the size of a foreign trace's copy (Kineto's
 * memcpy and memset), whose direction comes from its name: a device-to-host
 * copy and a memset write, a device-to-device copy reads and writes, any
 * other copy (host-to-device) reads. Like every per-exec figure, the bytes
 * are those of the execs lying entirely inside W; the busy times are the
 * ones the device step clipped to W, and a stage's busy time is the union of
 * its execs' intervals clipped to W (two devices moving data at once count
 * once, as they do for a device's streams). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

void an_format_bytes(uint64_t bytes, char *buf, size_t len) {
    if (bytes < 1000)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else if (bytes < 1000000)
        snprintf(buf, len, "%.2f kB", (double)bytes / 1e3);
    else if (bytes < 1000000000)
        snprintf(buf, len, "%.2f MB", (double)bytes / 1e6);
    else
        snprintf(buf, len, "%.2f GB", (double)bytes / 1e9);
}

typedef struct byte_keys {
    uint32_t in, out, bytes;
} byte_keys;

static uint64_t sat_add_u64(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A copy's direction, from the name Kineto gives it ("Memcpy DtoH
 * (Device -> Pageable)", "Memset (Device)"). */
static void copy_bytes(const char *name, uint64_t n, uint64_t *in, uint64_t *out) {
    int writes = strstr(name, "DtoH") || strstr(name, "Memset") || strstr(name, "memset");
    int both = strstr(name, "DtoD") != NULL || strstr(name, "PtoP") != NULL;
    *in = both || !writes ? n : 0;
    *out = both || writes ? n : 0;
}

/* The bytes exec `x` read and wrote; 0 and 0 when it carries none. *at is a
 * cursor into the annotation table (sorted by event): the execs come in
 * event order (real ones, then host ones), so it moves forward, and only
 * the step back to the first host exec searches. */
static void exec_bytes(const pp_report *r, const an_exec *x, const byte_keys *k, size_t *at,
                       uint64_t *in, uint64_t *out) {
    size_t na, n;
    const pp_ann *a = pp_model_anns(r->m, &na);
    uint64_t copied = 0;
    *in = *out = 0;
    if (*at > 0 && a[*at - 1].event >= x->event) /* went back: search */
        pp_model_annotations_of(r->m, x->event, at, &n);
    while (*at < na && a[*at].event < x->event)
        (*at)++;
    for (size_t j = *at; j < na && a[j].event == x->event; j++) {
        if (pp_ann_type(&a[j]) != PP_VALUE_INT || a[j].v.i <= 0 || pp_ann_key(&a[j]) == 0)
            continue;
        if (pp_ann_key(&a[j]) == k->in)
            *in = (uint64_t)a[j].v.i;
        else if (pp_ann_key(&a[j]) == k->out)
            *out = (uint64_t)a[j].v.i;
        else if (pp_ann_key(&a[j]) == k->bytes)
            copied = (uint64_t)a[j].v.i;
    }
    if (*in == 0 && *out == 0 && copied > 0)
        copy_bytes(pp_model_string(r->m, pp_cols_name(&r->c, x->event)), copied, in, out);
}

static void add_exec(pp_bandwidth *b, uint64_t in, uint64_t out, int64_t xfer) {
    b->execs++;
    b->read_bytes = sat_add_u64(b->read_bytes, in);
    b->write_bytes = sat_add_u64(b->write_bytes, out);
    b->xfer_ns = an_sat_add(b->xfer_ns, xfer);
}

/* The rates of b over its busy time and transfer time. */
static void rates(pp_bandwidth *b, int64_t busy_ns) {
    double moved = (double)b->read_bytes + (double)b->write_bytes;
    b->busy_ns = busy_ns;
    if (busy_ns > 0) { /* bytes per ns = GB/s with GB = 10^9 */
        b->read_gbps = (double)b->read_bytes / (double)busy_ns;
        b->write_gbps = (double)b->write_bytes / (double)busy_ns;
        b->total_gbps = moved / (double)busy_ns;
    }
    b->xfer_gbps = b->xfer_ns > 0 ? moved / (double)b->xfer_ns : 0.0;
}

/* Busy time of each stage that moved bytes: the union of its execs'
 * intervals clipped to W, the execs grouped by stage with a counting sort. */
static int stage_busy(pp_report *r, int64_t *busy) {
    size_t ns = r->nstages;
    size_t *at = calloc(ns + 1, sizeof *at);
    an_span *spans = an_buf_get(&r->spans, (r->nexecs ? r->nexecs : 1) * sizeof *spans);
    if (!at || !spans) {
        free(at);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < r->nexecs; i++)
        if (r->execs[i].stage != AN_NONE)
            at[r->execs[i].stage + 1]++;
    for (size_t s = 0; s < ns; s++)
        at[s + 1] += at[s];
    size_t *next = malloc((ns ? ns : 1) * sizeof *next);
    if (!next) {
        free(at);
        return PP_ENOMEM;
    }
    memcpy(next, at, ns * sizeof *next);
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (x->stage != AN_NONE)
            spans[next[x->stage]++] = (an_span){an_start(r, x->event), an_end(r, x->event)};
    }
    int rc = PP_OK;
    for (size_t s = 0; rc == PP_OK && s < ns; s++) {
        size_t merged;
        busy[s] = 0;
        if (r->stages[s].bandwidth.execs > 0)
            rc = an_intervals_merge(r, spans + at[s], at[s + 1] - at[s], r->window.start_ns,
                                    r->window.end_ns, &merged, &busy[s]);
    }
    free(next);
    free(at);
    return rc;
}

int an_bandwidth_sums(pp_report *r, pp_error *err) {
    byte_keys k = {pp_model_find_string(r->m, "bytes_in"), pp_model_find_string(r->m, "bytes_out"),
                   pp_model_find_string(r->m, "bytes")};
    if (k.in == 0 && k.out == 0 && k.bytes == 0)
        return PP_OK; /* nothing in the trace carries bytes */
    size_t ntracks = pp_model_track_count(r->m);
    uint32_t *row_of = malloc((ntracks ? ntracks : 1) * sizeof *row_of);
    r->bw_sums = calloc(r->ndevices + r->ntracks + r->nstages + 1, sizeof *r->bw_sums);
    if (!row_of || !r->bw_sums) {
        free(row_of);
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    }
    pp_bandwidth *dev = r->bw_sums, *trk = dev + r->ndevices, *stg = trk + r->ntracks;
    memset(row_of, 0xff, (ntracks ? ntracks : 1) * sizeof *row_of);
    for (size_t t = 0; t < r->ntracks; t++)
        row_of[r->tracks[t].track] = (uint32_t)t;
    size_t at = 0;
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        uint64_t in, out;
        if (!an_exec_inside(r, x))
            continue;
        exec_bytes(r, x, &k, &at, &in, &out);
        if (in == 0 && out == 0)
            continue;
        int64_t xfer = an_exec_is_host(r, x) ? 0 : an_hw_of(pp_cols_xfer(&r->c, x->event));
        add_exec(&dev[an_exec_device(r, x)], in, out, xfer);
        if (row_of[an_exec_track(r, x)] != AN_NONE)
            add_exec(&trk[row_of[an_exec_track(r, x)]], in, out, xfer);
        if (x->stage != AN_NONE)
            add_exec(&stg[x->stage], in, out, xfer);
    }
    free(row_of);
    return PP_OK;
}

int an_bandwidth_rates(pp_report *r, pp_error *err) {
    if (!r->bw_sums)
        return PP_OK;
    const pp_bandwidth *dev = r->bw_sums, *trk = dev + r->ndevices, *stg = trk + r->ntracks;
    for (size_t d = 0; d < r->ndevices; d++)
        r->devices[d].bandwidth = dev[d];
    for (size_t t = 0; t < r->ntracks; t++)
        r->tracks[t].bandwidth = trk[t];
    for (size_t s = 0; s < r->nstages; s++)
        r->stages[s].bandwidth = stg[s];
    free(r->bw_sums);
    r->bw_sums = NULL;
    int64_t *busy = malloc((r->nstages ? r->nstages : 1) * sizeof *busy);
    int rc = busy ? stage_busy(r, busy) : PP_ENOMEM;
    if (rc != PP_OK) {
        free(busy);
        return pp_set_error(err, rc, "out of memory");
    }
    for (size_t d = 0; d < r->ndevices; d++)
        rates(&r->devices[d].bandwidth, r->devices[d].busy_ns);
    for (size_t t = 0; t < r->ntracks; t++)
        rates(&r->tracks[t].bandwidth, r->tracks[t].busy_ns);
    for (size_t s = 0; s < r->nstages; s++)
        rates(&r->stages[s].bandwidth, busy[s]);
    free(busy);
    return PP_OK;
}
