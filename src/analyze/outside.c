/* outside.c — the time of W outside every stage's execs, partitions and
 * merges, and the stage that most often starts right after such a gap (the
 * throughput finding, findings.c).
 *
 * The intervals are read in (start, reference) order: execs by their index
 * in r->execs, then partitions and merges by theirs in r->host, so that an
 * exec comes first on a tie. Rather than sorting them all (32 bytes an
 * interval with the sort's scratch), each model track's intervals are
 * listed by reference (4 bytes an interval), and the tracks' lists, which
 * are in time order as a track records them, are merged through a heap of
 * one head a track. A list out of time order is sorted by itself first, in
 * scratch the size of that list. */
#include <stdlib.h>

#include "analyze/report.h"

/* Reference ref: an exec (ref < nexecs) or a host span (ref - nexecs). */
static size_t event_of(const pp_report *r, size_t ref) {
    return ref < r->nexecs ? r->execs[ref].event : r->host[ref - r->nexecs].event;
}

static uint32_t stage_of(const pp_report *r, size_t ref) {
    return ref < r->nexecs ? r->execs[ref].stage : an_host_stage(&r->host[ref - r->nexecs]);
}

/* 1 for a stage-labeled interval inside W: an exec, a partition or a merge. */
static int counted(const pp_report *r, size_t ref) {
    if (ref < r->nexecs)
        return an_exec_inside(r, &r->execs[ref]) && r->execs[ref].stage != AN_NONE;
    const an_host *h = &r->host[ref - r->nexecs];
    return an_host_inside(r, h) && an_host_stage(h) != AN_NONE && an_host_role(h) != PP_ROLE_STAGE;
}

/* The head of one track's list in the merge: its start and reference, and
 * where it and the list's end are in refs. */
typedef struct head {
    int64_t start;
    uint32_t ref, at, end;
} head;

static int head_before(head a, head b) {
    return a.start < b.start || (a.start == b.start && a.ref < b.ref);
}

static void sift_down(head *h, size_t n, size_t i) {
    for (;;) {
        size_t least = i, l = 2 * i + 1, rt = l + 1;
        if (l < n && head_before(h[l], h[least]))
            least = l;
        if (rt < n && head_before(h[rt], h[least]))
            least = rt;
        if (least == i)
            return;
        head t = h[i];
        h[i] = h[least], h[least] = t;
        i = least;
    }
}

/* Puts the references refs[0..n) of one track in (start, reference) order
 * when they are not already (they come in reference order). */
static int list_order(pp_report *r, uint32_t *refs, size_t n) {
    size_t i = 1;
    while (i < n && an_start(r, event_of(r, refs[i - 1])) <= an_start(r, event_of(r, refs[i])))
        i++;
    if (i >= n)
        return PP_OK;
    an_kv *kv = an_buf_get(&r->sort_tmp, 2 * n * sizeof *kv);
    if (!kv)
        return PP_ENOMEM;
    for (size_t k = 0; k < n; k++)
        kv[k] = (an_kv){an_key_i64(an_start(r, event_of(r, refs[k]))), refs[k]};
    an_kv_sort(kv, n, kv + n); /* stable: reference order on ties */
    for (size_t k = 0; k < n; k++)
        refs[k] = (uint32_t)kv[k].val;
    return PP_OK;
}

/* Lists each track's intervals by reference: at[t] .. at[t+1] are track t's
 * in refs. */
static uint32_t *track_lists(pp_report *r, size_t ntracks, size_t *at) {
    size_t nref = r->nexecs + r->nhost;
    for (size_t ref = 0; ref < nref; ref++)
        if (counted(r, ref))
            at[pp_cols_track(&r->c, event_of(r, ref)) + 2]++;
    for (size_t t = 0; t < ntracks; t++)
        at[t + 2] += at[t + 1];
    uint32_t *refs = an_alloc(at[ntracks + 1] ? at[ntracks + 1] : 1, sizeof *refs);
    if (!refs)
        return NULL;
    for (size_t ref = 0; ref < nref; ref++) /* at[t+1] is track t's cursor, then its end */
        if (counted(r, ref))
            refs[at[pp_cols_track(&r->c, event_of(r, ref)) + 1]++] = (uint32_t)ref;
    return refs;
}

int an_outside_stages(pp_report *r, int64_t *outside, uint32_t *before) {
    size_t ntracks = pp_model_track_count(r->m);
    size_t *at = calloc(ntracks + 2, sizeof *at);
    int64_t *per_stage = calloc(r->nstages + 1, sizeof *per_stage);
    head *heap = malloc((ntracks ? ntracks : 1) * sizeof *heap);
    uint32_t *refs = at && per_stage && heap ? track_lists(r, ntracks, at) : NULL;
    int rc = refs ? PP_OK : PP_ENOMEM;
    size_t nheap = 0;
    for (size_t t = 0; rc == PP_OK && t < ntracks; t++) {
        rc = list_order(r, refs + at[t], at[t + 1] - at[t]);
        if (rc == PP_OK && at[t + 1] > at[t])
            heap[nheap++] = (head){an_start(r, event_of(r, refs[at[t]])), refs[at[t]],
                                   (uint32_t)at[t], (uint32_t)at[t + 1]};
    }
    for (size_t i = nheap / 2; rc == PP_OK && i-- > 0;)
        sift_down(heap, nheap, i);
    int64_t w = r->window.start_ns, gaps = 0;
    while (rc == PP_OK && nheap > 0) {
        head h = heap[0];
        size_t event = event_of(r, h.ref);
        if (h.start > w) {
            gaps += h.start - w;
            per_stage[stage_of(r, h.ref)] += h.start - w;
        }
        w = an_end(r, event) > w ? an_end(r, event) : w;
        uint32_t next = h.at + 1;
        if (next < h.end)
            heap[0] = (head){an_start(r, event_of(r, refs[next])), refs[next], next, h.end};
        else
            heap[0] = heap[--nheap];
        sift_down(heap, nheap, 0);
    }
    if (rc == PP_OK) {
        gaps += r->window.end_ns > w ? r->window.end_ns - w : 0;
        *outside = gaps;
        *before = 0;
        for (uint32_t s = 1; s < r->nstages; s++)
            if (per_stage[s] > per_stage[*before])
                *before = s;
    }
    free(at), free(per_stage), free(heap), free(refs);
    return rc;
}
