/* costs_timing.c — what a description of costs takes from the timing of
 * consecutive batches and stages: each stage's servers and hand-off
 * delays, the queue depth, each device's units, the devices stages share,
 * the measured figures the replay is compared with, and the notes on what
 * was inferred (docs/whatif.md, "The model"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/costs_build.h"

static int cmp_i64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

int wi_note_add(pp_whatif_costs *c, char *text) {
    char **grown = text ? realloc(c->notes, (c->nnotes + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(text);
        return PP_ENOMEM;
    }
    c->notes = grown;
    c->notes[c->nnotes++] = text;
    return PP_OK;
}

/* Servers: the most of the stage's batches whose server times overlap (one
 * thread's spans never do); hand-off: each batch's start less the latest
 * of its upstream end, this stage's previous end and, the queue after it
 * being full, the start of the batch whose taking made room (a stage
 * blocked handing a batch on has not been idle), where that is >= 0. */
int wi_stage_timing(build *b, uint32_t s) {
    pp_whatif_stage *st = &b->c->stages[s];
    size_t n = b->nrows;
    const cell *cs = &b->cells[s * n], *up = s > 0 ? &b->cells[(s - 1) * n] : NULL;
    const cell *down = s + 1 < b->c->nstages ? &b->cells[(s + 1) * n] : NULL;
    size_t depth = b->c->queue_depth ? b->c->queue_depth : 1;
    uint32_t most = 1;
    for (size_t j = 0; j < n; j++) {
        uint32_t at_once = 1;
        for (size_t k = j; k-- > 0 && at_once < 64;)
            at_once += cell_end(&cs[k]) > cell_start(&cs[j]);
        most = at_once > most ? at_once : most;
    }
    st->servers = most;
    /* one thread runs every batch of the stage: one server, as recorded */
    st->servers_inferred = !(b->span_tracks[s] == 1 && most == 1);
    st->handoff_ns = malloc(n * sizeof *st->handoff_ns);
    if (!st->handoff_ns)
        return PP_ENOMEM;
    for (size_t j = 0; j < n; j++) {
        int64_t ready = INT64_MIN;
        if (up)
            ready = cell_end(&up[j]);
        if (j > 0 && most == 1 && b->row_batch[j] == b->row_batch[j - 1] + 1) {
            int64_t prev = cell_end(&cs[j - 1]);
            ready = prev > ready ? prev : ready;
            if (st->waits_for) { /* its thread was busy with a later stage's batch before */
                int64_t later = cell_end(&b->cells[(st->waits_for - 1) * n + j - 1]);
                ready = later > ready ? later : ready;
            }
            if (down && j >= depth + 1 &&
                b->row_batch[j - 1 - depth] == b->row_batch[j] - 1 - (int64_t)depth) {
                int64_t room = cell_start(&down[j - 1 - depth]);
                ready = room > ready ? room : ready;
            }
        }
        /* none before the first stage's first batch (nothing to wait for) */
        int64_t gap = ready == INT64_MIN ? 0 : cell_start(&cs[j]) - ready;
        st->handoff_ns[j] = gap >= 0 ? gap : 0;
    }
    st->nhandoff = n;
    return PP_OK;
}

/* For a pattern-labeled trace (costs.c): each stage's waits_for, the last
 * later stage whose instances are all on the one track of this stage's
 * and whose end of each batch came before this stage's start of the next
 * (a thread running both in a loop). */
void wi_shared_threads(build *b) {
    size_t n = b->nrows;
    for (uint32_t s = 0; s < b->c->nstages; s++) {
        if (b->span_tracks[s] != 1)
            continue;
        for (uint32_t d = (uint32_t)b->c->nstages; d-- > s + 1;) {
            if (b->span_tracks[d] != 1 || b->first_track[d] != b->first_track[s])
                continue;
            const cell *cs = &b->cells[s * n], *cd = &b->cells[d * n];
            size_t pairs = 0, before = 0;
            for (size_t j = 1; j < n; j++) {
                if (b->row_batch[j] != b->row_batch[j - 1] + 1 || cs[j].span_end < cs[j].span_start ||
                    cd[j - 1].span_end < cd[j - 1].span_start)
                    continue;
                pairs++;
                before += cell_end(&cd[j - 1]) <= cell_start(&cs[j]);
            }
            if (pairs > 0 && before == pairs) {
                b->c->stages[s].waits_for = d + 1;
                break;
            }
        }
    }
}

/* The recorded queue depth (pipeprof's runtime writes a "queue_depth"
 * counter), else the most batches seen finished upstream and not yet
 * started: a lower bound on the queue. */
void wi_queue_depth(build *b) {
    const pp_event_columns *ev = &b->ev;
    uint32_t key = pp_model_find_string(b->m, "queue_depth");
    for (size_t i = 0; key && i < ev->count; i++) {
        if (ev->kind[i] == PP_EV_COUNTER && ev->name[i] == key && ev->value[i] >= 1) {
            b->c->queue_depth = (uint32_t)ev->value[i];
            b->c->queue_depth_inferred = 0;
            return;
        }
    }
    uint32_t most = 1;
    size_t n = b->nrows;
    for (size_t s = 1; s < b->c->nstages; s++) {
        const cell *cs = &b->cells[s * n], *up = &b->cells[(s - 1) * n];
        for (size_t j = 0; j < n; j++) {
            uint32_t waiting = 0;
            for (size_t k = j; k < n && waiting < 64 && cell_end(&up[k]) <= cell_start(&cs[j]); k++)
                waiting++;
            most = waiting > most ? waiting : most;
        }
    }
    b->c->queue_depth = most;
    b->c->queue_depth_inferred = 1;
}

/* The most execs of each device seen computing at once: their device
 * intervals (hw_ns from the end back, where known; else the wall) swept in
 * time order. */
int wi_device_units(build *b) {
    pp_whatif_costs *c = b->c;
    c->units = calloc(c->ndevices ? c->ndevices : 1, sizeof *c->units);
    if (!c->units)
        return PP_ENOMEM;
    const pp_window *w = pp_report_window(b->r);
    const pp_event_columns *ev = &b->ev;
    for (size_t d = 0; d < c->ndevices; d++) {
        size_t n = 0, cap = 0;
        int64_t *t = NULL; /* starts as 2x, ends as 2x + 1: an end sorts before a start at one time */
        for (size_t i = 0; i < ev->count; i++) {
            if (ev->kind[i] != PP_EV_SPAN || ev->role[i] != PP_ROLE_EXEC ||
                ev->track[i] >= pp_model_track_count(b->m) ||
                b->track_device[ev->track[i]] != d + 1)
                continue;
            int64_t end = ev->ts_ns[i] + ev->dur_ns[i];
            if (ev->ts_ns[i] < w->start_ns || end > w->end_ns)
                continue;
            int64_t hw = ev->hw_ns[i] > 0 && (int64_t)ev->hw_ns[i] <= ev->dur_ns[i]
                             ? (int64_t)ev->hw_ns[i] : ev->dur_ns[i];
            if (n + 2 > cap) {
                cap = cap ? 2 * cap : 256;
                int64_t *grown = realloc(t, cap * sizeof *t);
                if (!grown) {
                    free(t);
                    return PP_ENOMEM;
                }
                t = grown;
            }
            t[n++] = (end - hw) * 2 + 1;
            t[n++] = end * 2;
        }
        if (n > 0)
            qsort(t, n, sizeof *t, cmp_i64);
        uint32_t on = 0, most = 1;
        for (size_t k = 0; k < n; k++) {
            if (t[k] & 1)
                on++, most = on > most ? on : most;
            else if (on > 0)
                on--;
        }
        c->units[d] = most;
        free(t);
    }
    return PP_OK;
}

/* Devices used by the parts of two or more stages. */
int pp_whatif_costs_complete(pp_whatif_costs *c) {
    for (size_t d = 0; d < c->ndevices; d++) {
        pp_whatif_group g = {0};
        for (size_t s = 0; s < c->nstages; s++)
            for (size_t p = 0; p < c->stages[s].nparts; p++)
                if (strcmp(c->stages[s].parts[p].device, c->devices[d]) == 0) {
                    g.stages[g.nstages++] = (uint32_t)s;
                    break;
                }
        if (g.nstages < 2)
            continue;
        pp_whatif_group *grown = realloc(c->groups, (c->ngroups + 1) * sizeof *grown);
        if (!grown || !(g.device = wi_strdupf("%s", c->devices[d]))) {
            if (grown)
                c->groups = grown;
            return PP_ENOMEM;
        }
        c->groups = grown;
        c->groups[c->ngroups++] = g;
    }
    return PP_OK;
}

/* The throughput the replay is compared with: the batches over their own
 * span, first start to last end, as the simulation counts it; the window's
 * idle before the first and after the last (a process starting, a trace
 * left running) is no time of the pipeline's. Untimed: the report's. */
int wi_measured_throughput(build *b) {
    const pp_cycle_stats *cy = pp_report_cycles(b->r);
    pp_whatif_figures *f = &b->c->measured;
    f->throughput_per_s = cy->throughput_measured;
    if (!b->c->timed)
        return PP_OK;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t k = 0; k < b->c->nstages * b->nrows; k++) {
        int64_t s = cell_start(&b->cells[k]), e = cell_end(&b->cells[k]);
        first = s < first ? s : first;
        last = e > last ? e : last;
    }
    if (last <= first)
        return PP_OK;
    f->throughput_per_s = (double)b->nrows * 1e9 / (double)(last - first);
    const pp_window *w = pp_report_window(b->r);
    int64_t idle = (first - w->start_ns) + (w->end_ns - last);
    if (idle * 10 > w->end_ns - w->start_ns)
        return wi_note_add(b->c, wi_strdupf("the window holds %.3f ms before the first batch and "
                                         "%.3f ms after the last, outside the throughput the "
                                         "replay is compared with (%.1f/s over the batches' span, "
                                         "%.1f/s over the window)",
                                         (double)(first - w->start_ns) / 1e6,
                                         (double)(w->end_ns - last) / 1e6, f->throughput_per_s,
                                         cy->throughput_measured));
    return PP_OK;
}

void wi_measured_figures(build *b) {
    const pp_cycle_stats *cy = pp_report_cycles(b->r);
    pp_whatif_figures *f = &b->c->measured;
    f->cycle_mean_ns = (double)cy->cycle_complete.mean;
    f->cycle_p95_ns = (double)cy->cycle_complete.p95;
    f->e2e_p50_ns = (double)cy->e2e.p50;
    f->e2e_p95_ns = (double)cy->e2e.p95;
    size_t nd = 0, ns = 0;
    const pp_device_stats *dev = pp_report_devices(b->r, &nd);
    const pp_stage_stats *st = pp_report_stages(b->r, &ns);
    for (size_t d = 0; d < nd && d < PP_WHATIF_MAX_DEVICES; d++)
        f->busy[d] = dev[d].wall_util;
    for (size_t s = 0; s < ns && s < PP_WHATIF_MAX_STAGES; s++)
        f->bottleneck[s] = cy->batches ? (double)st[s].bottleneck_count / (double)cy->batches : 0;
}

int wi_notes_write(pp_whatif_costs *c) {
    int rc = PP_OK;
    if (c->timed && c->queue_depth_inferred)
        rc = wi_note_add(c, wi_strdupf("queue depth %u inferred: the most batches seen waiting "
                                    "between two stages (no queue_depth recorded; a lower bound)",
                                    c->queue_depth));
    for (size_t s = 0; rc == PP_OK && s < c->nstages; s++)
        if (c->timed && c->stages[s].servers_inferred)
            rc = wi_note_add(c, wi_strdupf("%s: %u server%s inferred from its batches seen "
                                        "overlapping",
                                        c->stages[s].name, c->stages[s].servers,
                                        c->stages[s].servers == 1 ? "" : "s"));
    for (size_t g = 0; rc == PP_OK && g < c->ngroups; g++)
        rc = wi_note_add(c, wi_strdupf("%s is shared by %u stages: each one's wait for it (wall "
                                    "beyond its own work) scales with the others' work on it, "
                                    "to first order",
                                    c->groups[g].device, c->groups[g].nstages));
    return rc;
}
