/* costs.c — the description of a pipeline's costs, built from an analyzed
 * trace (docs/whatif.md, "The model").
 *
 * The report gives the stages in order, the devices, the complete batches
 * and the measured figures; the model gives each labeled span's times. One
 * pass over the model's events puts every span that names a report stage
 * and a complete batch and lies inside W into its (stage, batch) cell: an
 * exec widens its device's part, a partition or merge adds its time, a
 * stage span (or any other labeled span) widens the cell's server time.
 * From the cells come the per-batch rows the simulation resamples, and from
 * consecutive cells the hand-off delays, the servers and the queue depth.
 * A trace whose stages only the user's patterns label (a torch.profiler
 * export) has no stage in its spans' own fields: then the cells come from
 * the report's stage instances instead (pp_stage_time: each one's time,
 * first event start, last event end and track), and the model says so in
 * a note. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/costs_build.h"

void pp_whatif_costs_free(pp_whatif_costs *c) {
    if (!c)
        return;
    for (size_t s = 0; s < c->nstages; s++) {
        pp_whatif_stage *st = &c->stages[s];
        free(st->name);
        free(st->partition_ns), free(st->merge_ns), free(st->overhead_ns), free(st->handoff_ns);
        for (size_t p = 0; p < st->nparts; p++)
            free(st->parts[p].device), free(st->parts[p].wall_ns), free(st->parts[p].fixed_ns),
                free(st->parts[p].work_ns);
        free(st->parts);
    }
    free(c->stages);
    for (size_t d = 0; d < c->ndevices; d++)
        free(c->devices[d]);
    free(c->devices);
    free(c->units);
    for (size_t g = 0; g < c->ngroups; g++)
        free(c->groups[g].device);
    free(c->groups);
    for (size_t i = 0; i < c->nnotes; i++)
        free(c->notes[i]);
    free(c->notes);
    free(c);
}

static void cell_clear(cell *cl) {
    memset(cl, 0, sizeof *cl);
    cl->span_start = cl->any_start = 1, cl->span_end = cl->any_end = 0; /* empty */
    for (size_t p = 0; p < PP_WHATIF_MAX_PARTS; p++)
        cl->part_start[p] = 1, cl->part_end[p] = 0;
    /* part_hw, part_fixed: 0 from the memset */
}

static size_t row_of(const build *b, int64_t batch) {
    size_t lo = 0, hi = b->nrows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->row_batch[mid] < batch)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->nrows && b->row_batch[lo] == batch ? lo : SIZE_MAX;
}

static void widen(int64_t *lo, int64_t *hi, int64_t s, int64_t e) {
    if (*hi < *lo) {
        *lo = s, *hi = e;
        return;
    }
    *lo = s < *lo ? s : *lo;
    *hi = e > *hi ? e : *hi;
}

/* The part of stage s on device d (report index), made on first sight. */
static int part_index(build *b, uint32_t s, uint32_t d) {
    if (b->part_of[s][d] >= 0)
        return b->part_of[s][d];
    pp_whatif_stage *st = &b->c->stages[s];
    if (st->nparts == PP_WHATIF_MAX_PARTS)
        return -1;
    b->part_of[s][d] = (int8_t)st->nparts;
    return (int)st->nparts++;
}

/* submit_ns + completion_ns of exec event i (0 where its backend reports
 * none): the annotations are read with a cursor, the events coming in
 * order. */
static int64_t exec_fixed(build *b, size_t i) {
    while (b->ann_at < b->nann && b->ann[b->ann_at].event < i)
        b->ann_at++;
    int64_t sum = 0;
    for (size_t k = b->ann_at; k < b->nann && b->ann[k].event == i; k++) {
        const pp_annotation *a = &b->ann[k];
        if (a->key != b->submit_key && a->key != b->completion_key)
            continue;
        sum += a->type == PP_VALUE_INT ? a->v.i : a->type == PP_VALUE_DOUBLE ? (int64_t)a->v.d : 0;
    }
    return sum > 0 ? sum : 0;
}

/* Whether device d's hardware times are each request's own: a running
 * mean (OpenVINO's CPU plugin), times above wall or a foreign trace's
 * kernel duration say nothing of how much of one request's wall is its
 * work, so its whole wall counts as work there (a speed-up then shortens
 * all of it, not a mean's share of it). */
static int hw_per_run(const build *b, uint32_t d) {
    size_t n;
    const pp_device_stats *ds = pp_report_devices(b->r, &n);
    return d < n && (ds[d].hw_quality & (PP_HW_RUNNING_MEAN | PP_HW_ABOVE_WALL)) == 0;
}

/* The pass over the model's events. */
static void cells_fill(build *b) {
    const pp_window *w = pp_report_window(b->r);
    const pp_event_columns *ev = &b->ev;
    for (size_t i = 0; i < ev->count; i++) {
        uint8_t kind = ev->kind[i], role = ev->role[i];
        if ((kind != PP_EV_SPAN && kind != PP_EV_RANGE) || role == PP_ROLE_OP || ev->stage[i] == 0 ||
            ev->batch[i] < 0 || ev->stage[i] >= pp_model_string_count(b->m))
            continue;
        uint32_t s1 = b->string_stage[ev->stage[i]];
        int64_t start = ev->ts_ns[i], end = start + ev->dur_ns[i];
        if (s1 == 0 || start < w->start_ns || end > w->end_ns)
            continue;
        size_t j = row_of(b, ev->batch[i]);
        if (j == SIZE_MAX)
            continue;
        uint32_t s = s1 - 1, track = ev->track[i];
        cell *cl = &b->cells[s * b->nrows + j];
        b->have_items[s] = 1;
        widen(&cl->any_start, &cl->any_end, start, end);
        if (role == PP_ROLE_EXEC) {
            uint32_t d1 = track < pp_model_track_count(b->m) ? b->track_device[track] : 0;
            int p = d1 ? part_index(b, s, d1 - 1) : -1;
            if (p >= 0) {
                widen(&cl->part_start[p], &cl->part_end[p], start, end);
                cl->part_execs[p]++;
                uint64_t hw = ev->hw_ns[i];
                if (hw == 0 || (int64_t)hw > ev->dur_ns[i] || cl->part_hw[p] < 0 ||
                    !hw_per_run(b, d1 - 1))
                    cl->part_hw[p] = -1;
                else
                    cl->part_hw[p] += (int64_t)hw;
                cl->part_fixed[p] += exec_fixed(b, i);
            }
        } else if (role == PP_ROLE_PARTITION) {
            cl->partition += end - start;
        } else if (role == PP_ROLE_MERGE) {
            cl->merge += end - start;
        } else {
            widen(&cl->span_start, &cl->span_end, start, end);
            cl->span_track = track + 1;
            if (b->span_tracks[s] == 0)
                b->span_tracks[s] = 1, b->first_track[s] = track;
            else if (b->first_track[s] != track)
                b->span_tracks[s] = 2;
        }
    }
}

/* A stage with no exec in a cell is host work: its span is its one part, on
 * the device of the span's track (the report's "CPU (host)"). */
static int host_part(build *b, uint32_t s, cell *cl) {
    uint32_t track = cl->span_track ? cl->span_track - 1 : UINT32_MAX;
    uint32_t d1 = track < pp_model_track_count(b->m) ? b->track_device[track] : 0;
    int p = d1 ? part_index(b, s, d1 - 1) : -1;
    if (p >= 0) {
        cl->part_start[p] = cl->span_start, cl->part_end[p] = cl->span_end;
        cl->part_execs[p] = 1;
        cl->part_hw[p] = -1; /* host work: its span is all there is */
    }
    return p;
}

/* Rows of stage s from its cells. */
static int stage_rows(build *b, uint32_t s) {
    pp_whatif_stage *st = &b->c->stages[s];
    size_t n = b->nrows;
    st->nrows = n;
    st->partition_ns = calloc(n, sizeof *st->partition_ns);
    st->merge_ns = calloc(n, sizeof *st->merge_ns);
    st->overhead_ns = calloc(n, sizeof *st->overhead_ns);
    if (!st->partition_ns || !st->merge_ns || !st->overhead_ns)
        return PP_ENOMEM;
    for (size_t j = 0; j < n; j++) {
        cell *cl = &b->cells[s * n + j];
        int any = 0;
        for (size_t p = 0; p < st->nparts; p++)
            any |= cl->part_end[p] >= cl->part_start[p];
        if (!any && cl->span_end >= cl->span_start)
            host_part(b, s, cl);
    }
    st->parts = calloc(st->nparts ? st->nparts : 1, sizeof *st->parts);
    if (!st->parts)
        return PP_ENOMEM;
    for (size_t p = 0; p < st->nparts; p++) {
        if (!(st->parts[p].wall_ns = malloc(n * sizeof(int64_t))) ||
            !(st->parts[p].fixed_ns = malloc(n * sizeof(int64_t))) ||
            !(st->parts[p].work_ns = malloc(n * sizeof(int64_t))))
            return PP_ENOMEM;
    }
    for (uint32_t d = 0; d < PP_WHATIF_MAX_DEVICES; d++) {
        int p = b->part_of[s][d];
        if (p >= 0 && !(st->parts[p].device = wi_strdupf("%s", b->c->devices[d])))
            return PP_ENOMEM;
    }
    uint64_t execs[PP_WHATIF_MAX_PARTS] = {0}, present[PP_WHATIF_MAX_PARTS] = {0};
    for (size_t j = 0; j < n; j++) {
        const cell *cl = &b->cells[s * n + j];
        int64_t slowest = 0;
        for (size_t p = 0; p < st->nparts; p++) {
            int in = cl->part_end[p] >= cl->part_start[p];
            int64_t wall = in ? cl->part_end[p] - cl->part_start[p] : -1;
            st->parts[p].wall_ns[j] = wall;
            slowest = wall > slowest ? wall : slowest;
            execs[p] += cl->part_execs[p];
            present[p] += (uint64_t)in;
        }
        st->partition_ns[j] = cl->partition;
        st->merge_ns[j] = cl->merge;
        int64_t formula = cl->partition + slowest + cl->merge;
        int64_t server = cell_end(cl) - cell_start(cl);
        st->overhead_ns[j] = server > formula ? server - formula : 0;
    }
    for (size_t p = 0; p < st->nparts; p++)
        st->parts[p].requests =
            present[p] ? (uint32_t)((execs[p] + present[p] / 2) / present[p]) : 1;
    return PP_OK;
}

/* Each part's wall split into fixed, work and wait (pp_whatif_part), once
 * the devices' units are known. */
static void parts_split(build *b, uint32_t s) {
    pp_whatif_stage *st = &b->c->stages[s];
    size_t n = b->nrows;
    for (size_t p = 0; p < st->nparts; p++) {
        pp_whatif_part *pt = &st->parts[p];
        int d = wi_device_index(b->c, pt->device);
        uint32_t u = d >= 0 && b->c->units[d] ? b->c->units[d] : 1;
        for (size_t j = 0; j < n; j++) {
            const cell *cl = &b->cells[s * n + j];
            int64_t wall = pt->wall_ns[j];
            uint32_t execs = cl->part_execs[p] ? cl->part_execs[p] : 1;
            int64_t fixed = wall < 0 ? 0 : cl->part_fixed[p] / execs;
            fixed = fixed > wall ? (wall > 0 ? wall : 0) : fixed;
            int64_t work = wall - fixed;
            if (wall >= 0 && cl->part_hw[p] >= 0) {
                /* execs rounds of requests, u at a time, each hw / execs */
                int64_t busy = (int64_t)((double)cl->part_hw[p] * (double)((execs + u - 1) / u) /
                                         (double)execs);
                work = busy < work ? busy : work;
            }
            pt->fixed_ns[j] = fixed;
            pt->work_ns[j] = wall < 0 ? 0 : work;
        }
    }
}

/* Without labeled spans (patterns alone), the cells from the report's stage
 * instances: each one's first event .. last event is its server time and
 * its hull; its stage time is the wall of its one part, on the device of
 * its track, from its start (the rest of its hold becomes the stage's
 * overhead, as for a labeled span beyond its execs). */
static void cells_from_instances(build *b) {
    const pp_window *w = pp_report_window(b->r);
    size_t nt = 0;
    const pp_stage_time *t = pp_report_stage_times(b->r, &nt);
    for (size_t i = 0; i < nt; i++) {
        size_t j = row_of(b, t[i].batch);
        uint32_t s = t[i].stage, track = t[i].track;
        if (j == SIZE_MAX || s >= b->c->nstages || t[i].start_ns < w->start_ns ||
            t[i].end_ns > w->end_ns || t[i].end_ns < t[i].start_ns)
            continue;
        uint32_t d1 = track < pp_model_track_count(b->m) ? b->track_device[track] : 0;
        int p = d1 ? part_index(b, s, d1 - 1) : -1;
        if (p < 0)
            continue;
        cell *cl = &b->cells[s * b->nrows + j];
        b->have_items[s] = 1;
        cl->span_start = cl->any_start = t[i].start_ns;
        cl->span_end = cl->any_end = t[i].end_ns;
        cl->span_track = track + 1;
        int64_t wall = t[i].time_ns < t[i].end_ns - t[i].start_ns ? t[i].time_ns
                                                                  : t[i].end_ns - t[i].start_ns;
        cl->part_start[p] = t[i].start_ns, cl->part_end[p] = t[i].start_ns + wall;
        cl->part_execs[p] = 1;
        cl->part_hw[p] = -1; /* no hardware time: the wall is all there is */
        if (b->span_tracks[s] == 0)
            b->span_tracks[s] = 1, b->first_track[s] = track;
        else if (b->first_track[s] != track)
            b->span_tracks[s] = 2;
    }
}

/* No span names its stage and batch in its own fields (for some stage):
 * the cells come from the report's stage instances instead, from scratch
 * (a partly labeled trace's cells are not mixed with them), and say so. */
static int cells_by_instances(build *b) {
    size_t ns = b->c->nstages;
    for (size_t k = 0; k < ns * b->nrows; k++)
        cell_clear(&b->cells[k]);
    memset(b->have_items, 0, sizeof b->have_items);
    memset(b->span_tracks, 0, sizeof b->span_tracks);
    memset(b->part_of, -1, (ns ? ns : 1) * sizeof *b->part_of);
    for (size_t s = 0; s < ns; s++)
        b->c->stages[s].nparts = 0;
    cells_from_instances(b);
    b->c->timed = 1;
    for (size_t s = 0; s < ns; s++)
        b->c->timed &= b->have_items[s];
    if (!b->c->timed)
        return PP_OK;
    wi_shared_threads(b);
    return wi_note_add(b->c, wi_strdupf("no span names its stage and batch in its own fields (the "
                                        "stages are labeled by patterns): each stage instance is "
                                        "placed by its first and last event, its stage time is "
                                        "its one part's wall and the rest of its hold its "
                                        "overhead; hand-off delays, servers and the queue depth "
                                        "come from those instances (inferred)"));
}

/* Without labeled spans or placed instances (a stage none of whose
 * instances has a track of a device): each stage one part of the report's
 * stage time, one server, no hand-off, no queue limit. */
static int untimed_rows(build *b) {
    size_t nt = 0;
    const pp_stage_time *t = pp_report_stage_times(b->r, &nt);
    for (size_t s = 0; s < b->c->nstages; s++) {
        pp_whatif_stage *st = &b->c->stages[s];
        st->nrows = b->nrows;
        st->nparts = 1;
        st->servers = 1;
        st->servers_inferred = 1;
        st->partition_ns = calloc(b->nrows, sizeof(int64_t));
        st->merge_ns = calloc(b->nrows, sizeof(int64_t));
        st->overhead_ns = calloc(b->nrows, sizeof(int64_t));
        st->handoff_ns = calloc(b->nrows, sizeof(int64_t));
        st->nhandoff = b->nrows;
        st->parts = calloc(1, sizeof *st->parts);
        if (!st->partition_ns || !st->merge_ns || !st->overhead_ns || !st->handoff_ns ||
            !st->parts || !(st->parts[0].wall_ns = malloc(b->nrows * sizeof(int64_t))) ||
            !(st->parts[0].fixed_ns = calloc(b->nrows, sizeof(int64_t))) ||
            !(st->parts[0].work_ns = malloc(b->nrows * sizeof(int64_t))) ||
            !(st->parts[0].device = wi_strdupf("(stage %s)", st->name)))
            return PP_ENOMEM;
        st->parts[0].share = 1;
        st->parts[0].requests = 1;
        for (size_t j = 0; j < b->nrows; j++)
            st->parts[0].wall_ns[j] = st->parts[0].work_ns[j] = 0;
    }
    for (size_t i = 0; i < nt; i++) {
        size_t j = row_of(b, t[i].batch);
        if (j != SIZE_MAX && t[i].stage < b->c->nstages)
            b->c->stages[t[i].stage].parts[0].wall_ns[j] =
                b->c->stages[t[i].stage].parts[0].work_ns[j] = t[i].time_ns;
    }
    b->c->queue_depth = 64;
    b->c->queue_depth_inferred = 1;
    return wi_note_add(b->c, wi_strdupf("no span names its stage and batch in its own fields (the "
                                     "stages are labeled by patterns) and a stage has no instance "
                                     "on a device's track: per-batch start times are unknown, so "
                                     "hand-off delays, servers and queues are not modeled; each "
                                     "stage is its report stage time"));
}

/* The shares of data-parallel parts: the report's recorded split, else
 * even. */
static void part_shares(build *b) {
    size_t ndp = 0;
    const pp_dp_stats *dp = pp_report_dp(b->r, &ndp);
    for (size_t s = 0; s < b->c->nstages; s++) {
        pp_whatif_stage *st = &b->c->stages[s];
        for (size_t p = 0; p < st->nparts; p++)
            st->parts[p].share = 1.0 / (double)st->nparts;
    }
    for (size_t i = 0; i < ndp; i++) {
        if (dp[i].stage >= b->c->nstages)
            continue;
        pp_whatif_stage *st = &b->c->stages[dp[i].stage];
        for (size_t k = 0; k < dp[i].ndevices; k++) {
            const pp_dp_device *pd = &dp[i].devices[k];
            if (pd->device >= b->c->ndevices || pd->track != UINT32_MAX || !(pd->share > 0))
                continue;
            for (size_t p = 0; p < st->nparts; p++) /* the costs' devices are the report's */
                if (strcmp(st->parts[p].device, b->c->devices[pd->device]) == 0)
                    st->parts[p].share = pd->share;
        }
    }
}

static int setup(build *b) {
    size_t ns = 0, nd = 0, nt = 0, nb = 0;
    const pp_stage_stats *st = pp_report_stages(b->r, &ns);
    const pp_device_stats *dev = pp_report_devices(b->r, &nd);
    const pp_track_stats *tr = pp_report_tracks(b->r, &nt);
    const pp_batch_stats *bs = pp_report_batches(b->r, &nb);
    pp_whatif_costs *c = b->c;
    c->stages = calloc(ns ? ns : 1, sizeof *c->stages);
    c->devices = calloc(nd ? nd : 1, sizeof *c->devices);
    b->row_batch = malloc((nb ? nb : 1) * sizeof *b->row_batch);
    b->string_stage = calloc(pp_model_string_count(b->m) + 1, sizeof *b->string_stage);
    b->track_device = calloc(pp_model_track_count(b->m) + 1, sizeof *b->track_device);
    b->part_of = malloc((ns ? ns : 1) * sizeof *b->part_of);
    if (!c->stages || !c->devices || !b->row_batch || !b->string_stage || !b->track_device ||
        !b->part_of || pp_model_columns(b->m, &b->ev) != PP_OK)
        return PP_ENOMEM;
    b->ann = pp_model_annotations(b->m, &b->nann);
    b->submit_key = pp_model_find_string(b->m, "submit_ns");
    b->completion_key = pp_model_find_string(b->m, "completion_ns");
    if (!b->submit_key && !b->completion_key)
        b->nann = 0; /* no backend split its walls: nothing to look up */
    memset(b->part_of, -1, (ns ? ns : 1) * sizeof *b->part_of);
    for (size_t s = 0; s < ns; s++) {
        if (!(c->stages[s].name = wi_strdupf("%s", st[s].name)))
            return PP_ENOMEM;
        c->nstages++;
        c->stages[s].data_parallel = st[s].data_parallel;
        c->stages[s].host = st[s].exec_less;
        uint32_t id = pp_model_find_string(b->m, st[s].name);
        if (id)
            b->string_stage[id] = (uint32_t)s + 1;
    }
    for (size_t d = 0; d < nd; d++) {
        /* simulated devices are labeled so in every output */
        if (!(c->devices[d] = wi_strdupf("%s%s", dev[d].name, dev[d].simulated ? " (simulated)" : "")))
            return PP_ENOMEM;
        c->ndevices++;
    }
    for (size_t t = 0; t < nt; t++)
        if (tr[t].track < pp_model_track_count(b->m))
            b->track_device[tr[t].track] = tr[t].device + 1;
    for (size_t i = 0; i < nb; i++)
        if (bs[i].complete)
            b->row_batch[b->nrows++] = bs[i].batch;
    c->batches = b->nrows;
    b->cells = malloc((ns ? ns : 1) * (b->nrows ? b->nrows : 1) * sizeof *b->cells);
    if (!b->cells)
        return PP_ENOMEM;
    for (size_t k = 0; k < ns * b->nrows; k++)
        cell_clear(&b->cells[k]);
    return PP_OK;
}

int pp_whatif_costs_from_report(const pp_report *r, const pp_model *m, pp_whatif_costs **out,
                                pp_error *err) {
    *out = NULL;
    size_t ns = 0, nd = 0;
    pp_report_stages(r, &ns);
    pp_report_devices(r, &nd);
    if (ns > PP_WHATIF_MAX_STAGES || nd > PP_WHATIF_MAX_DEVICES)
        return wi_error(err, PP_EINVAL,
                            "%zu stages and %zu devices; the model takes at most %d of each",
                            ns, nd, PP_WHATIF_MAX_STAGES);
    build b = {.r = r, .m = m};
    b.c = calloc(1, sizeof *b.c);
    int rc = b.c ? setup(&b) : PP_ENOMEM;
    if (rc == PP_OK && b.nrows == 0)
        rc = wi_error(err, PP_EINVAL,
                          "the trace has no complete batch (one with every stage) "
                          "inside the window to model");
    if (rc == PP_OK) {
        cells_fill(&b);
        b.c->timed = 1;
        for (size_t s = 0; s < ns; s++)
            b.c->timed &= b.have_items[s];
        if (b.c->timed) /* stages one thread runs in a loop (a serial Python program) */
            wi_shared_threads(&b);
    }
    if (rc == PP_OK && !b.c->timed)
        rc = cells_by_instances(&b);
    if (rc == PP_OK && b.c->timed) {
        for (uint32_t s = 0; rc == PP_OK && s < ns; s++)
            rc = stage_rows(&b, s);
        if (rc == PP_OK) /* before the hand-offs, which a full queue delays */
            wi_queue_depth(&b);
        for (uint32_t s = 0; rc == PP_OK && s < ns; s++)
            rc = wi_stage_timing(&b, s);
        if (rc == PP_OK) {
            part_shares(&b);
            rc = wi_device_units(&b);
        }
        for (uint32_t s = 0; rc == PP_OK && s < ns; s++)
            parts_split(&b, s);
    } else if (rc == PP_OK) {
        rc = untimed_rows(&b);
        if (rc == PP_OK && !(b.c->units = calloc(nd ? nd : 1, sizeof *b.c->units)))
            rc = PP_ENOMEM;
        for (size_t d = 0; rc == PP_OK && d < nd; d++)
            b.c->units[d] = 1;
    }
    if (rc == PP_OK)
        rc = pp_whatif_costs_complete(b.c);
    if (rc == PP_OK)
        rc = wi_notes_write(b.c);
    if (rc == PP_OK) {
        wi_measured_figures(&b);
        rc = wi_measured_throughput(&b);
    }
    free(b.row_batch), free(b.cells), free(b.string_stage), free(b.track_device), free(b.part_of);
    if (rc != PP_OK) {
        pp_whatif_costs_free(b.c);
        return rc == PP_ENOMEM ? wi_error(err, rc, "whatif: out of memory") : rc;
    }
    *out = b.c;
    return PP_OK;
}
