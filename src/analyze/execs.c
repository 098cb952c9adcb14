/* execs.c — the exec view every metric reads, and the stage order.
 *
 * One an_exec per span of role exec, with its device (a device track's device
 * name, else the track's process name) and its stage as a report stage index.
 * Stages are then ordered by first appearance in time over execs and over the
 * partition, merge and stage spans of the whole trace: that order is
 * "upstream". (Not inside W only: a window that starts in the middle of a
 * batch would put its downstream stages first.) Stages with nothing inside
 * W are left out of the report. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

static uint32_t device_of_track(pp_report *r, uint32_t track) {
    if (r->track_device[track] != AN_NONE)
        return r->track_device[track];
    const pp_track_info *t = pp_model_track(r->m, track);
    const char *name = pp_model_string(r->m, t->device ? t->device : t->process);
    uint32_t d = 0;
    while (d < r->ndevices && strcmp(r->devices[d].name, name) != 0)
        d++;
    if (d == r->ndevices) {
        pp_device_stats *grown = realloc(r->devices, (d + 1) * sizeof *grown);
        if (!grown)
            return AN_NONE;
        r->devices = grown;
        memset(&grown[d], 0, sizeof grown[d]);
        grown[d].name = an_strdupf("%s", name);
        if (!grown[d].name)
            return AN_NONE;
        r->ndevices++;
    }
    if (t->flags & PP_TRACK_SIMULATED)
        r->devices[d].simulated = 1;
    r->track_device[track] = d;
    return d;
}

/* Stage index of model string `id` (AN_NONE for 0 or no memory). */
static uint32_t stage_of(pp_report *r, uint32_t id) {
    if (id == 0)
        return AN_NONE;
    if (r->stage_of_string[id] == AN_NONE) {
        const char *s = pp_model_string(r->m, id);
        r->stage_of_string[id] = an_stage_intern(r, s, strlen(s));
    }
    return r->stage_of_string[id];
}

static int is_exec(const pp_event_columns *c, size_t i) {
    return c->kind[i] == PP_EV_SPAN && c->role[i] == PP_ROLE_EXEC;
}

int an_execs_collect(pp_report *r, pp_error *err) {
    const pp_event_columns *c = &r->c;
    size_t ntracks = pp_model_track_count(r->m), nstrings = pp_model_string_count(r->m);
    r->track_device = malloc((ntracks ? ntracks : 1) * sizeof *r->track_device);
    r->stage_of_string = malloc((nstrings ? nstrings : 1) * sizeof *r->stage_of_string);
    if (!r->track_device || !r->stage_of_string)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    memset(r->track_device, 0xff, (ntracks ? ntracks : 1) * sizeof *r->track_device);
    memset(r->stage_of_string, 0xff, (nstrings ? nstrings : 1) * sizeof *r->stage_of_string);
    size_t n = 0;
    for (size_t i = 0; i < c->count; i++)
        n += is_exec(c, i);
    if (n == 0)
        return pp_set_error(err, PP_EINVAL,
                            "the trace has no execs (spans of role exec, or GPU kernels and "
                            "memcpys of a PyTorch-profiler trace): nothing to analyze");
    r->execs = an_alloc(n, sizeof *r->execs);
    if (!r->execs)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->count; i++) {
        if (!is_exec(c, i))
            continue;
        an_exec *x = &r->execs[r->nexecs++];
        x->start = c->ts_ns[i];
        x->end = c->ts_ns[i] + c->dur_ns[i];
        x->batch = c->batch[i];
        x->event = i;
        x->track = c->track[i];
        x->inside = (uint8_t)an_inside(r, c->ts_ns[i], c->dur_ns[i]);
        x->device = device_of_track(r, c->track[i]);
        x->stage = stage_of(r, c->stage[i]);
        if (x->device == AN_NONE || (c->stage[i] != 0 && x->stage == AN_NONE))
            return pp_set_error(err, PP_ENOMEM, "out of memory");
    }
    return PP_OK;
}

static int is_host_stage_span(const pp_event_columns *c, size_t i) {
    return c->kind[i] == PP_EV_SPAN && c->stage[i] != 0 &&
           (c->role[i] == PP_ROLE_PARTITION || c->role[i] == PP_ROLE_MERGE ||
            c->role[i] == PP_ROLE_STAGE);
}

/* Renumbers stages by first appearance: rank[old] = new index, AN_NONE for a
 * stage with nothing inside W (dropped). */
static int stage_renumber(pp_report *r) {
    const uint8_t *inside = r->stage_inside;
    size_t n = r->nstages;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    uint32_t *rank = malloc((n ? n : 1) * sizeof *rank);
    char **names = malloc((n ? n : 1) * sizeof *names);
    int64_t *first = malloc((n ? n : 1) * sizeof *first);
    if (!order || !rank || !names || !first) {
        free(order), free(rank), free(names), free(first);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) { /* insertion sort: stages are few */
        size_t j = i;
        while (j > 0 && r->stage_first[order[j - 1]] > r->stage_first[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint32_t)i;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        rank[order[i]] = inside[order[i]] ? (uint32_t)kept : AN_NONE;
        if (inside[order[i]]) {
            names[kept] = r->stage_names[order[i]];
            first[kept++] = r->stage_first[order[i]];
        } else {
            free(r->stage_names[order[i]]);
        }
    }
    if (kept > 0) { /* stage_names is NULL when there are no stages */
        memcpy(r->stage_names, names, kept * sizeof *names);
        memcpy(r->stage_first, first, kept * sizeof *first);
    }
    r->nstages = kept;
    for (size_t i = 0; i < r->nexecs; i++)
        if (r->execs[i].stage != AN_NONE)
            r->execs[i].stage = rank[r->execs[i].stage];
    for (size_t i = 0; i < pp_model_string_count(r->m); i++)
        if (r->stage_of_string[i] != AN_NONE)
            r->stage_of_string[i] = rank[r->stage_of_string[i]];
    free(order), free(rank), free(names), free(first);
    return PP_OK;
}

/* Widens the range of batch numbers of the labeled things (for the batch
 * map of the stage step, which then needs no pass of its own). */
static void labeled_batch(pp_report *r, int64_t batch) {
    if (batch < 0)
        return;
    r->label_lo = r->nlabeled == 0 || batch < r->label_lo ? batch : r->label_lo;
    r->label_hi = r->nlabeled == 0 || batch > r->label_hi ? batch : r->label_hi;
    r->nlabeled++;
}

int an_stage_order(pp_report *r, pp_error *err) {
    const pp_event_columns *c = &r->c;
    for (size_t i = 0; i < c->count; i++) {
        if (!is_host_stage_span(c, i))
            continue;
        uint32_t s = stage_of(r, c->stage[i]);
        if (s == AN_NONE)
            return pp_set_error(err, PP_ENOMEM, "out of memory");
        if (c->ts_ns[i] < r->stage_first[s])
            r->stage_first[s] = c->ts_ns[i];
        if (an_inside(r, c->ts_ns[i], c->dur_ns[i])) {
            r->stage_inside[s] = 1;
            labeled_batch(r, c->batch[i]);
        }
    }
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (x->stage == AN_NONE)
            continue;
        if (x->start < r->stage_first[x->stage])
            r->stage_first[x->stage] = x->start;
        if (x->inside) {
            r->stage_inside[x->stage] = 1;
            labeled_batch(r, x->batch);
        }
    }
    return stage_renumber(r) == PP_OK ? PP_OK : pp_set_error(err, PP_ENOMEM, "out of memory");
}
