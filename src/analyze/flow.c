/* flow.c — what a stage waits for between its batches, and how long it
 * holds each batch (docs/analysis.md, "Hold time, hand-offs and
 * back-pressure").
 *
 * The stage step times its cells batch by batch, each batch's stages in
 * order (upstream first), and hands each cell's first and last event here
 * (an_flow_cell). Between two batches of a stage, its idle gap is split by
 * what the trace shows of its neighbours:
 *   - starved: the stage's next input was not ready yet (the upstream stage
 *     had not finished that batch);
 *   - blocked: its next input was ready, but its previous output had not
 *     been taken yet (the downstream stage had not started that batch) and
 *     the downstream stage was still busy with the batch before it:
 *     back-pressure, as through a full queue or a blocking pipe. (A serial
 *     program that hands one batch from stage to stage is not blocked:
 *     its next stage is idle until it takes the batch.)
 * The first stage has no upstream: its input counts as ready, so its idle
 * time is blocked (output not taken) or a wait for its source (the rest);
 * never a wait for upstream work. A few integers a stage, in one pass with
 * the stage step: nothing is held per batch but each stage time's first and
 * last event and its track, which the report keeps (an_stage_time gives
 * them as the instance's start_ns, end_ns and track). */
#include <stdlib.h>

#include "analyze/report.h"

int an_flow_start(pp_report *r, size_t ntimes_bound) {
    size_t ns = r->nstages ? r->nstages : 1;
    r->flow_last_b = malloc(ns * sizeof *r->flow_last_b);
    r->flow_last_start = malloc(ns * sizeof *r->flow_last_start);
    r->flow_last_end = malloc(ns * sizeof *r->flow_last_end);
    r->flow_prev_end = malloc(ns * sizeof *r->flow_prev_end);
    r->flow_blocked = calloc(ns, sizeof *r->flow_blocked);
    r->flow_starved = calloc(ns, sizeof *r->flow_starved);
    r->time_at = an_alloc(ntimes_bound ? ntimes_bound : 1, sizeof *r->time_at);
    r->time_track = an_alloc(ntimes_bound ? ntimes_bound : 1, sizeof *r->time_track);
    if (!r->flow_last_b || !r->flow_last_start || !r->flow_last_end || !r->flow_prev_end ||
        !r->flow_blocked || !r->flow_starved || !r->time_at || !r->time_track)
        return PP_ENOMEM;
    for (size_t s = 0; s < ns; s++)
        r->flow_last_b[s] = SIZE_MAX, r->flow_prev_end[s] = INT64_MIN;
    return PP_OK;
}

/* The length of [lo, hi) where hi > lo, else 0. */
static int64_t span_len(int64_t lo, int64_t hi) {
    return hi > lo ? hi - lo : 0;
}

void an_flow_cell(pp_report *r, uint32_t s, size_t b, int64_t start, int64_t end,
                  uint32_t track) {
    r->time_at[r->ntimes - 1] = (an_time_at){start, end}; /* the cell just timed */
    r->time_track[r->ntimes - 1] = track;
    size_t prev = r->flow_last_b[s];
    if (prev != SIZE_MAX && start > r->flow_last_end[s]) {
        int64_t gap_lo = r->flow_last_end[s], gap_hi = start;
        /* when its input for b was ready: the upstream stage's end of b */
        int known = s == 0 || r->flow_last_b[s - 1] == b;
        int64_t ready = s == 0 ? INT64_MIN : r->flow_last_end[s - 1];
        /* when its previous output was taken: the downstream stage's start
         * of the previous batch; never, for the last stage */
        int64_t taken = INT64_MIN;
        if (s + 1 < r->nstages && r->flow_last_b[s + 1] == prev) {
            taken = r->flow_last_start[s + 1];
            /* and only while it was busy with the batch before */
            if (r->flow_prev_end[s + 1] < taken)
                taken = r->flow_prev_end[s + 1];
        }
        if (known) {
            int64_t from = ready > gap_lo ? ready : gap_lo;
            r->flow_blocked[s] += span_len(from, taken < gap_hi ? taken : gap_hi);
            if (s > 0)
                r->flow_starved[s] += span_len(gap_lo, ready < gap_hi ? ready : gap_hi);
        }
    }
    r->flow_prev_end[s] = prev != SIZE_MAX ? r->flow_last_end[s] : INT64_MIN;
    r->flow_last_b[s] = b;
    r->flow_last_start[s] = start;
    r->flow_last_end[s] = end;
}

/* Per stage, the mean hand-off a batch (hold time - stage time) with its
 * bootstrap interval; vals[at[s] .. at[s+1]) are stage s's hold times in
 * time order, as its stage times are. */
static int handoffs(pp_report *r, const size_t *at, const int64_t *vals) {
    r->handoff = calloc(r->nstages ? r->nstages : 1, sizeof *r->handoff);
    double *v = malloc((r->ntimes ? r->ntimes : 1) * sizeof *v);
    size_t *k = calloc(r->nstages + 1, sizeof *k);
    int rc = r->handoff && v && k ? PP_OK : PP_ENOMEM;
    for (size_t i = 0; rc == PP_OK && i < r->ntimes; i++) { /* one pass, a cursor a stage */
        uint32_t s = r->times[i].stage;
        v[at[s] + k[s]] = (double)(vals[at[s] + k[s]] - r->times[i].time_ns);
        k[s]++;
    }
    for (uint32_t s = 0; rc == PP_OK && s < r->nstages; s++)
        rc = an_mean_interval(v + at[s], at[s + 1] - at[s], &r->handoff[s]);
    free(v), free(k);
    return rc;
}

int an_flow_finish(pp_report *r) {
    int rc = PP_OK;
    for (uint32_t s = 0; s < r->nstages; s++) {
        r->stages[s].blocked_ns = r->flow_blocked ? r->flow_blocked[s] : 0;
        r->stages[s].starved_ns = r->flow_starved ? r->flow_starved[s] : 0;
    }
    if (r->time_at) { /* hold times grouped by stage, as the stage times are */
        size_t *at = calloc(r->nstages + 2, sizeof *at);
        int64_t *vals = at ? malloc((r->ntimes ? r->ntimes : 1) * sizeof *vals) : NULL;
        rc = vals ? PP_OK : PP_ENOMEM;
        for (size_t i = 0; rc == PP_OK && i < r->ntimes; i++)
            at[r->times[i].stage + 2]++;
        for (size_t s = 0; rc == PP_OK && s < r->nstages; s++)
            at[s + 2] += at[s + 1];
        for (size_t i = 0; rc == PP_OK && i < r->ntimes; i++)
            vals[at[r->times[i].stage + 1]++] = r->time_at[i].end_ns - r->time_at[i].start_ns;
        rc = rc == PP_OK ? handoffs(r, at, vals) : rc;
        for (size_t s = 0; rc == PP_OK && s < r->nstages; s++)
            rc = an_summary(r, vals + at[s], at[s + 1] - at[s], &r->stages[s].hold);
        free(at), free(vals);
    }
    an_flow_free(r);
    /* the instances' starts, ends and tracks are kept (an_stage_time), at
     * the size that was filled */
    an_time_at *at = realloc(r->time_at, (r->ntimes ? r->ntimes : 1) * sizeof *at);
    uint32_t *track = realloc(r->time_track, (r->ntimes ? r->ntimes : 1) * sizeof *track);
    r->time_at = at ? at : r->time_at; /* a failed shrink keeps the larger table */
    r->time_track = track ? track : r->time_track;
    return rc;
}

void an_flow_free(pp_report *r) {
    free(r->flow_last_b), free(r->flow_last_start), free(r->flow_last_end), free(r->flow_prev_end);
    free(r->flow_blocked), free(r->flow_starved);
    r->flow_last_b = NULL, r->flow_last_start = r->flow_last_end = r->flow_prev_end = NULL;
    r->flow_blocked = r->flow_starved = NULL;
}
