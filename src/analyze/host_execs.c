/* host_execs.c — host work as execs, and partitions and merges attributed
 * to the stage they bracket.
 *
 * A stage instance (a host span naming a stage and a batch) with no exec of
 * its (stage, batch) anywhere is host work: graph preparation, tokenization,
 * a CPU-only stage. It becomes an exec of its own on its thread's track,
 * device "CPU (host)" of its process, so that host threads get busy time,
 * bubbles and utilization like any device stream and CPU-only traces
 * analyze fully. A stage instance around device work (a record_function
 * around kernel launches) stays a label: the device's execs are the work.
 *
 * A partition or merge span named by a pattern and not nested in a stage
 * span belongs to the stage it brackets: the stage of the first exec of its
 * batch that starts after the partition starts, and of the last exec of its
 * batch that starts before the merge starts. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

/* The batches of the real execs grouped by stage with a counting sort,
 * each stage's in ascending order for lookups: stage s's are
 * batch[at[s] .. at[s+1]) (batch >= 0 here, so it orders as unsigned).
 * Execs come in time order, so a stage's batches usually already ascend
 * and need no sort. 8 bytes an exec, and as many again only to sort. */
static uint64_t *exec_batches(pp_report *r, size_t *at) {
    size_t ns = r->nstages, n = 0;
    for (size_t i = 0; i < r->nreal; i++)
        if (r->execs[i].stage != AN_NONE && an_exec_batch(r, &r->execs[i]) >= 0)
            at[r->execs[i].stage + 1]++, n++;
    for (size_t s = 0; s < ns; s++)
        at[s + 1] += at[s];
    uint64_t *batch = an_alloc(n, sizeof *batch);
    if (!batch)
        return NULL;
    for (size_t i = 0; i < r->nreal; i++) /* at[s] is stage s's cursor, then its end */
        if (r->execs[i].stage != AN_NONE && an_exec_batch(r, &r->execs[i]) >= 0)
            batch[at[r->execs[i].stage]++] = (uint64_t)an_exec_batch(r, &r->execs[i]);
    for (size_t s = ns; s > 0; s--) /* back to starts: at[s] = end of s - 1 */
        at[s] = at[s - 1];
    at[0] = 0;
    for (size_t s = 0; s < ns; s++) {
        size_t lo = at[s], hi = at[s + 1], k = lo + 1;
        while (k < hi && batch[k - 1] <= batch[k])
            k++;
        if (k >= hi)
            continue;
        int64_t *tmp = an_buf_get(&r->sort_tmp, (hi - lo) * sizeof *tmp);
        if (!tmp) {
            free(batch);
            return NULL;
        }
        an_i64_sort((int64_t *)(batch + lo), hi - lo, tmp); /* all >= 0: signed order agrees */
    }
    return batch;
}

/* The pid of model track t, remembered for the next call: host spans come
 * in runs on one thread. */
static int64_t track_pid(const pp_report *r, uint32_t t, uint32_t *last, int64_t *pid) {
    if (t != *last)
        *last = t, *pid = pp_model_track(r->m, t)->pid;
    return *pid;
}

/* Each host exec (is_host_item) appended to the execs, on device "CPU
 * (host)" of its thread's track, or "CPU (host) pid N" when host work comes
 * from several processes (each is a device of its own). */
static int host_execs_append(pp_report *r, const uint8_t *is_host_item, int several) {
    uint32_t last = AN_NONE;
    int64_t pid = 0;
    for (size_t i = 0; i < r->nhost; i++) {
        if (!is_host_item[i])
            continue;
        const an_host *h = &r->host[i];
        uint32_t t = pp_cols_track(&r->c, h->event);
        if (r->track_device[t] == AN_NONE) {
            char name[64] = "CPU (host)";
            if (several)
                snprintf(name, sizeof name, "CPU (host) pid %lld",
                         (long long)track_pid(r, t, &last, &pid));
            r->track_device[t] = an_device_intern(r, name, 0);
            if (r->track_device[t] == AN_NONE)
                return PP_ENOMEM;
        }
        r->execs[r->nexecs++] = (an_exec){.event = h->event, .stage = an_host_stage(h)};
        int rc = an_exec_batch_set(r, r->nexecs - 1, h->batch);
        if (rc)
            return rc;
    }
    return PP_OK;
}

/* The stage spans with no exec of their (stage, batch) become host execs:
 * one pass finds them (and whether they come from several processes), a
 * second appends them. */
static int add_host_execs(pp_report *r) {
    size_t nnew = 0, ns = r->nstages;
    size_t *at = calloc(2 * ns + 2, sizeof *at), *cursor = at + ns + 1;
    uint64_t *batch = at ? exec_batches(r, at) : NULL;
    uint8_t *is_host_item = calloc(r->nhost ? r->nhost : 1, 1);
    int rc = batch && is_host_item ? PP_OK : PP_ENOMEM, several = 0;
    int64_t pid = 0, first_pid = 0;
    uint32_t last = AN_NONE;
    for (size_t s = 0; rc == PP_OK && s < ns; s++)
        cursor[s] = at[s + 1]; /* no lookup yet */
    for (size_t i = 0; rc == PP_OK && i < r->nhost; i++) {
        const an_host *h = &r->host[i];
        uint32_t s = an_host_stage(h);
        if (an_host_role(h) != PP_ROLE_STAGE || s == AN_NONE)
            continue;
        size_t lo = at[s], hi = at[s + 1], k = hi;
        if (h->batch >= 0) {
            /* spans come mostly in batch order: a few steps from the last lookup */
            k = an_lower_bound_near(batch, sizeof *batch, 0, sizeof *batch, lo, hi, cursor[s],
                                    (uint64_t)h->batch);
            cursor[s] = k;
        }
        if (k < hi && batch[k] == (uint64_t)h->batch)
            continue; /* the stage has execs of this batch */
        is_host_item[i] = 1;
        int64_t p = track_pid(r, pp_cols_track(&r->c, h->event), &last, &pid);
        several |= nnew > 0 && p != first_pid;
        first_pid = nnew++ == 0 ? p : first_pid;
    }
    free(batch), free(at);
    if (rc == PP_OK && nnew > 0) {
        rc = an_execs_grow(r, nnew);
    }
    if (rc == PP_OK && nnew > 0)
        rc = host_execs_append(r, is_host_item, several);
    free(is_host_item);
    return rc;
}

/* Execs with a batch, sorted by (batch, start): where partitions and
 * merges look up their stage. */
typedef struct by_batch {
    int64_t batch, start;
    uint32_t stage;
} by_batch;

static int cmp_by_batch(const void *a, const void *b) {
    const by_batch *x = a, *y = b;
    if (x->batch != y->batch)
        return x->batch < y->batch ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* Index of the first entry not before (batch, start). */
static size_t lower_bound(const by_batch *v, size_t n, int64_t batch, int64_t start) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].batch < batch || (v[mid].batch == batch && v[mid].start < start))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int attribute_brackets(pp_report *r) {
    size_t need = 0;
    for (size_t i = 0; i < r->nhost; i++)
        need += an_host_stage(&r->host[i]) == AN_NONE && an_host_role(&r->host[i]) != PP_ROLE_NONE;
    if (need == 0)
        return PP_OK;
    by_batch *v = malloc((r->nexecs ? r->nexecs : 1) * sizeof *v);
    if (!v)
        return PP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < r->nexecs; i++)
        if (an_exec_batch(r, &r->execs[i]) >= 0 && r->execs[i].stage != AN_NONE)
            v[n++] = (by_batch){an_exec_batch(r, &r->execs[i]), an_start(r, r->execs[i].event),
                                r->execs[i].stage};
    qsort(v, n, sizeof *v, cmp_by_batch);
    for (size_t i = 0; i < r->nhost; i++) {
        an_host *h = &r->host[i];
        uint8_t role = an_host_role(h);
        if (an_host_stage(h) != AN_NONE || role == PP_ROLE_NONE)
            continue;
        size_t k = lower_bound(v, n, h->batch, an_start(r, h->event));
        if (role == PP_ROLE_PARTITION && k < n && v[k].batch == h->batch)
            an_host_set_stage(h, v[k].stage);
        else if (role == PP_ROLE_MERGE && k > 0 && v[k - 1].batch == h->batch)
            an_host_set_stage(h, v[k - 1].stage);
    }
    free(v);
    return PP_OK;
}

int an_host_execs(pp_report *r, pp_error *err) {
    int rc = add_host_execs(r);
    if (rc == PP_OK)
        rc = attribute_brackets(r);
    if (rc != PP_OK)
        return pp_set_error(err, rc, "out of memory");
    if (r->nexecs > 0)
        return PP_OK;
    if (an_pattern_hint(r) != PP_OK)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    return pp_set_error(err, PP_EINVAL,
                        "the trace has no execs (spans of role exec, GPU kernels and memcpys of "
                        "a PyTorch-profiler trace) and no stage spans (spans naming a stage and "
                        "a batch): nothing to analyze%s%s%s",
                        r->patterns ? " (the patterns given matched nothing)" : "",
                        r->hint ? "; " : "", r->hint ? r->hint : "");
}
