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
 * export) has no stage in its spans' own fields: then the stage times of
 * the report are all there is, and the model says so (`timed` = 0). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif_impl.h"

char *wi_strdupf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

static int cmp_i64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

int wi_error(pp_error *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A simulated device is named "NPU (simulated)" in reports; "NPU" finds it
 * too, as a user (or a sweep's table) names it. */
int wi_device_index(const pp_whatif_costs *c, const char *name) {
    for (size_t d = 0; d < c->ndevices; d++)
        if (strcmp(c->devices[d], name) == 0)
            return (int)d;
    size_t n = strlen(name);
    for (size_t d = 0; d < c->ndevices; d++)
        if (strncmp(c->devices[d], name, n) == 0 && strcmp(c->devices[d] + n, " (simulated)") == 0)
            return (int)d;
    return -1;
}

int wi_stage_index(const pp_whatif_costs *c, const char *name) {
    for (size_t s = 0; s < c->nstages; s++)
        if (strcmp(c->stages[s].name, name) == 0)
            return (int)s;
    return -1;
}

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

static int note_add(pp_whatif_costs *c, char *text) {
    char **grown = text ? realloc(c->notes, (c->nnotes + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(text);
        return PP_ENOMEM;
    }
    c->notes = grown;
    c->notes[c->nnotes++] = text;
    return PP_OK;
}

/* One (stage, batch) cell as the pass finds it. */
typedef struct cell {
    int64_t span_start, span_end;   /* the stage spans' hull (server time) */
    int64_t any_start, any_end;     /* every labeled item's hull */
    int64_t partition, merge;
    int64_t part_start[PP_WHATIF_MAX_PARTS], part_end[PP_WHATIF_MAX_PARTS];
    uint32_t part_execs[PP_WHATIF_MAX_PARTS];
    int64_t part_hw[PP_WHATIF_MAX_PARTS];     /* sum of hw_ns; -1 once one is unknown */
    int64_t part_fixed[PP_WHATIF_MAX_PARTS];  /* sum of submit + completion */
    uint32_t span_track;            /* the stage span's track (+1; 0 none) */
} cell;

/* What the build works with besides the result. */
typedef struct build {
    const pp_report *r;
    const pp_model *m;
    pp_event_columns ev;
    pp_whatif_costs *c;
    size_t nrows;
    int64_t *row_batch;             /* the complete batches, ascending */
    cell *cells;                    /* stage s, row j at [s * nrows + j] */
    uint32_t *string_stage;         /* model string id -> stage + 1 (0: none) */
    uint32_t *track_device;         /* model track -> report device + 1 (0: none) */
    int8_t (*part_of)[PP_WHATIF_MAX_DEVICES]; /* stage -> device -> part, -1 */
    int have_items[PP_WHATIF_MAX_STAGES];
    uint32_t span_tracks[PP_WHATIF_MAX_STAGES]; /* distinct stage-span tracks: 0, 1 or 2 (many) */
    uint32_t first_track[PP_WHATIF_MAX_STAGES];
    const pp_annotation *ann;       /* the model's annotations, by event */
    size_t nann, ann_at;
    uint32_t submit_key, completion_key;
} build;

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
                if (hw == 0 || (int64_t)hw > ev->dur_ns[i] || cl->part_hw[p] < 0)
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

static int64_t cell_start(const cell *cl) {
    return cl->span_end >= cl->span_start ? cl->span_start : cl->any_start;
}
static int64_t cell_end(const cell *cl) {
    return cl->span_end >= cl->span_start ? cl->span_end : cl->any_end;
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

/* Servers: the most of the stage's batches whose server times overlap (one
 * thread's spans never do); hand-off: each batch's start less the latest
 * of its upstream end, this stage's previous end and, the queue after it
 * being full, the start of the batch whose taking made room (a stage
 * blocked handing a batch on has not been idle), where that is >= 0. */
static int stage_timing(build *b, uint32_t s) {
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
            if (down && j >= depth + 1 && b->row_batch[j - 1 - depth] == b->row_batch[j] - 1 - (int64_t)depth) {
                int64_t room = cell_start(&down[j - 1 - depth]);
                ready = room > ready ? room : ready;
            }
        }
        int64_t gap = cell_start(&cs[j]) - ready;
        st->handoff_ns[j] = ready != INT64_MIN && gap >= 0 ? gap : 0;
    }
    st->nhandoff = n;
    return PP_OK;
}

/* The recorded queue depth (pipeprof's runtime writes a "queue_depth"
 * counter), else the most batches seen finished upstream and not yet
 * started: a lower bound on the queue. */
static void queue_depth(build *b) {
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
static int device_units(build *b) {
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
static int groups_find(pp_whatif_costs *c) {
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

/* Without labeled spans (patterns alone): each stage one part of the
 * report's stage time, one server, no hand-off, no queue limit. */
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
    return note_add(b->c, wi_strdupf("no span names its stage and batch in its own fields (the "
                                     "stages are labeled by patterns): per-batch start times are "
                                     "unknown, so hand-off delays, servers and queues are not "
                                     "modeled; each stage is its report stage time"));
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

/* The throughput the replay is compared with: the batches over their own
 * span, first start to last end, as the simulation counts it; the window's
 * idle before the first and after the last (a process starting, a trace
 * left running) is no time of the pipeline's. Untimed: the report's. */
static int measured_throughput(build *b) {
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
        return note_add(b->c, wi_strdupf("the window holds %.3f ms before the first batch and "
                                         "%.3f ms after the last, outside the throughput the "
                                         "replay is compared with (%.1f/s over the batches' span, "
                                         "%.1f/s over the window)",
                                         (double)(first - w->start_ns) / 1e6,
                                         (double)(w->end_ns - last) / 1e6, f->throughput_per_s,
                                         cy->throughput_measured));
    return PP_OK;
}

static void measured_figures(build *b) {
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
    for (size_t k = 0; k < ns * b->nrows; k++) {
        cell *cl = &b->cells[k];
        memset(cl, 0, sizeof *cl);
        cl->span_start = cl->any_start = 1, cl->span_end = cl->any_end = 0; /* empty */
        for (size_t p = 0; p < PP_WHATIF_MAX_PARTS; p++)
            cl->part_start[p] = 1, cl->part_end[p] = 0;
        /* part_hw, part_fixed: 0 from the memset */
    }
    return PP_OK;
}

static int notes_write(pp_whatif_costs *c) {
    int rc = PP_OK;
    if (c->timed && c->queue_depth_inferred)
        rc = note_add(c, wi_strdupf("queue depth %u inferred: the most batches seen waiting "
                                    "between two stages (no queue_depth recorded; a lower bound)",
                                    c->queue_depth));
    for (size_t s = 0; rc == PP_OK && s < c->nstages; s++)
        if (c->timed && c->stages[s].servers_inferred)
            rc = note_add(c, wi_strdupf("%s: %u server%s inferred from its batches seen "
                                        "overlapping",
                                        c->stages[s].name, c->stages[s].servers,
                                        c->stages[s].servers == 1 ? "" : "s"));
    for (size_t g = 0; rc == PP_OK && g < c->ngroups; g++)
        rc = note_add(c, wi_strdupf("%s is shared by %u stages: each one's wait for it (wall "
                                    "beyond its own work) scales with the others' work on it, "
                                    "to first order",
                                    c->groups[g].device, c->groups[g].nstages));
    return rc;
}

int pp_whatif_costs_from_report(const pp_report *r, const pp_model *m, pp_whatif_costs **out,
                                pp_error *err) {
    *out = NULL;
    size_t ns = 0, nd = 0;
    pp_report_stages(r, &ns);
    pp_report_devices(r, &nd);
    if (ns > PP_WHATIF_MAX_STAGES || nd > PP_WHATIF_MAX_DEVICES)
        return wi_error(err, PP_EINVAL,
                            "whatif: %zu stages and %zu devices; the model takes at most %d of each",
                            ns, nd, PP_WHATIF_MAX_STAGES);
    build b = {.r = r, .m = m};
    b.c = calloc(1, sizeof *b.c);
    int rc = b.c ? setup(&b) : PP_ENOMEM;
    if (rc == PP_OK && b.nrows == 0)
        rc = wi_error(err, PP_EINVAL,
                          "whatif: the trace has no complete batch (one with every stage) "
                          "inside the window to model");
    if (rc == PP_OK) {
        cells_fill(&b);
        b.c->timed = 1;
        for (size_t s = 0; s < ns; s++)
            b.c->timed &= b.have_items[s];
    }
    if (rc == PP_OK && b.c->timed) {
        for (uint32_t s = 0; rc == PP_OK && s < ns; s++)
            rc = stage_rows(&b, s);
        if (rc == PP_OK) /* before the hand-offs, which a full queue delays */
            queue_depth(&b);
        for (uint32_t s = 0; rc == PP_OK && s < ns; s++)
            rc = stage_timing(&b, s);
        if (rc == PP_OK) {
            part_shares(&b);
            rc = device_units(&b);
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
        rc = groups_find(b.c);
    if (rc == PP_OK)
        rc = notes_write(b.c);
    if (rc == PP_OK) {
        measured_figures(&b);
        rc = measured_throughput(&b);
    }
    free(b.row_batch), free(b.cells), free(b.string_stage), free(b.track_device), free(b.part_of);
    if (rc != PP_OK) {
        pp_whatif_costs_free(b.c);
        return rc == PP_ENOMEM ? wi_error(err, rc, "whatif: out of memory") : rc;
    }
    *out = b.c;
    return PP_OK;
}
