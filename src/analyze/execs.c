/* execs.c — the exec view every metric reads, and the stage order.
 *
 * One an_exec per span of role exec, with its stage as a report stage index;
 * its device is its track's (r->track_device: a device track's device name,
 * else the track's process name). The same passes count what the next
 * steps make tables of, the host spans labeled by their own fields
 * (label.c) and the op spans, and gather the op spans' annotations
 * (ops.c). Host execs are added by host_execs.c, in room made
 * here. Stages are then ordered by first
 * appearance in time over execs and over the host spans (partition, merge,
 * stage) of the whole trace: that order is
 * "upstream". (Not inside W only: a window that starts in the middle of a
 * batch would put its downstream stages first.) Stages with nothing inside
 * W are left out of the report. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

uint32_t an_device_intern(pp_report *r, const char *name, uint32_t flags) {
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
    if (flags & PP_TRACK_SIMULATED)
        r->devices[d].simulated = 1;
    if (flags & PP_TRACK_HW_MEAN)
        r->devices[d].hw_quality |= PP_HW_RUNNING_MEAN;
    return d;
}

static uint32_t device_of_track(pp_report *r, uint32_t track) {
    if (r->track_device[track] != AN_NONE)
        return r->track_device[track];
    const pp_track_info *t = pp_model_track(r->m, track);
    uint32_t d = an_device_intern(r, pp_model_string(r->m, t->device ? t->device : t->process),
                                  t->flags);
    r->track_device[track] = d;
    return d;
}

uint32_t an_stage_of_new_string(pp_report *r, uint32_t id) {
    const char *s = pp_model_string(r->m, id);
    r->stage_of_string[id] = an_stage_intern(r, s, strlen(s));
    return r->stage_of_string[id];
}

static int is_exec(const pp_cols *c, size_t i) {
    return (c->kind[i] == PP_EV_SPAN) & (c->role[i] == PP_ROLE_EXEC);
}

int an_execs_collect(pp_report *r, pp_error *err) {
    const pp_cols *c = &r->c;
    size_t ntracks = pp_model_track_count(r->m), nstrings = pp_model_string_count(r->m);
    r->track_device = malloc((ntracks ? ntracks : 1) * sizeof *r->track_device);
    r->stage_of_string = malloc((nstrings ? nstrings : 1) * sizeof *r->stage_of_string);
    if (!r->track_device || !r->stage_of_string)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    memset(r->track_device, 0xff, (ntracks ? ntracks : 1) * sizeof *r->track_device);
    memset(r->stage_of_string, 0xff, (nstrings ? nstrings : 1) * sizeof *r->stage_of_string);
    size_t n = 0, nfield = 0, nops = 0; /* one pass counts what label.c and ops.c need too */
    for (size_t i = 0; i < c->count; i++) {
        n += (size_t)is_exec(c, i);
        nfield += (size_t)(an_labeled_by_fields(c, i) | an_bracket_by_fields(c, i));
        nops += (size_t)an_is_op_span(c, i);
    }
    r->nfield_hosts = nfield;
    r->nop_spans = nops;
    /* room for the host execs too (host_execs.c: at most one per stage span
     * labeled by its fields); the pages of what is not used are never touched */
    r->exec_cap = n + nfield;
    r->execs = an_alloc(r->exec_cap, sizeof *r->execs);
    r->op = an_alloc(nops ? nops : 1, sizeof *r->op);
    if (!r->execs || !r->op)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    an_op_gatherer ops;
    an_op_gather_start(r, &ops);
    for (size_t i = 0, k = 0; i < c->count; i++) {
        if (an_is_op_span(c, i))
            an_op_gather(&ops, i, &r->op[k++]);
        if (!is_exec(c, i))
            continue;
        an_exec *x = &r->execs[r->nexecs++];
        *x = (an_exec){.event = (uint32_t)i, .stage = an_stage_of_string(r, pp_cols_stage(c, i))};
        if (device_of_track(r, pp_cols_track(c, i)) == AN_NONE || (pp_cols_stage(c, i) != 0 && x->stage == AN_NONE))
            return pp_set_error(err, PP_ENOMEM, "out of memory");
    }
    r->nreal = r->nexecs;
    return PP_OK;
}

int an_execs_grow(pp_report *r, size_t more) {
    size_t cap = r->nexecs + more;
    if (cap <= r->exec_cap)
        return PP_OK;
    an_exec *x = realloc(r->execs, (cap ? cap : 1) * sizeof *x);
    if (!x)
        return PP_ENOMEM;
    r->execs = x;
    if (r->exec_batch) {
        int64_t *b = realloc(r->exec_batch, (cap ? cap : 1) * sizeof *b);
        if (!b)
            return PP_ENOMEM;
        r->exec_batch = b;
    }
    r->exec_cap = cap;
    return PP_OK;
}

int an_exec_batch_set(pp_report *r, size_t i, int64_t batch) {
    if (!r->exec_batch) {
        if (batch == pp_cols_batch(&r->c, r->execs[i].event))
            return PP_OK;
        r->exec_batch = an_alloc(r->exec_cap, sizeof *r->exec_batch);
        if (!r->exec_batch)
            return PP_ENOMEM;
        for (size_t k = 0; k < r->nexecs; k++)
            r->exec_batch[k] = pp_cols_batch(&r->c, r->execs[k].event);
    }
    r->exec_batch[i] = batch;
    return PP_OK;
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
    int same = kept == n; /* the usual case: every stage kept, already in order */
    for (size_t i = 0; i < n; i++)
        same &= rank[i] == i;
    r->nstages = kept;
    for (size_t i = 0; !same && i < r->nexecs; i++)
        if (r->execs[i].stage != AN_NONE)
            r->execs[i].stage = rank[r->execs[i].stage];
    for (size_t i = 0; !same && i < r->nhost; i++)
        if (an_host_stage(&r->host[i]) != AN_NONE)
            an_host_set_stage(&r->host[i], rank[an_host_stage(&r->host[i])]);
    for (size_t i = 0; !same && i < pp_model_string_count(r->m); i++)
        if (r->stage_of_string[i] != AN_NONE)
            r->stage_of_string[i] = rank[r->stage_of_string[i]];
    free(order), free(rank), free(names), free(first);
    return PP_OK;
}

/* The labeled things inside W and the range of their batch numbers (for
 * the batch map of the stage step, which then needs no pass of its own). */
typedef struct batch_range {
    size_t n;
    int64_t lo, hi;
} batch_range;

static void labeled_batch(batch_range *b, int64_t batch) {
    if (batch < 0)
        return;
    if (b->n++ == 0)
        b->lo = b->hi = batch;
    b->lo = batch < b->lo ? batch : b->lo;
    b->hi = batch > b->hi ? batch : b->hi;
}

/* Keeps only the host spans later steps read: partitions, merges and batch
 * spans (stage cells, time outside stages), and the stage spans inside W
 * whose batch is not their own field's (end-to-end latency widens by
 * them); the rest have given their stage order and batch range. */
static void host_compact(pp_report *r) {
    size_t k = 0;
    for (size_t i = 0; i < r->nhost; i++) {
        const an_host *h = &r->host[i];
        if (an_host_role(h) != PP_ROLE_STAGE ||
            (an_host_inside(r, h) && h->batch != pp_cols_batch(&r->c, h->event)))
            r->host[k++] = *h;
    }
    if (k == 0) {
        free(r->host);
        r->host = NULL;
    } else {
        an_host *shrunk = realloc(r->host, k * sizeof *shrunk);
        r->host = shrunk ? shrunk : r->host; /* a failed shrink keeps the larger table */
    }
    r->nhost = k;
}

int an_stage_order(pp_report *r, pp_error *err) {
    batch_range b = {0};
    for (size_t i = 0; i < r->nhost; i++) {
        const an_host *h = &r->host[i];
        uint32_t s = an_host_stage(h);
        if (s == AN_NONE)
            continue;
        if (an_start(r, h->event) < r->stage_first[s])
            r->stage_first[s] = an_start(r, h->event);
        if (an_host_inside(r, h)) {
            r->stage_inside[s] = 1;
            labeled_batch(&b, h->batch);
        }
    }
    for (size_t i = 0; i < r->nexecs; i++) {
        const an_exec *x = &r->execs[i];
        if (x->stage == AN_NONE)
            continue;
        if (an_start(r, x->event) < r->stage_first[x->stage])
            r->stage_first[x->stage] = an_start(r, x->event);
        if (an_exec_inside(r, x)) {
            r->stage_inside[x->stage] = 1;
            labeled_batch(&b, an_exec_batch(r, x));
        }
    }
    r->nlabeled = b.n, r->label_lo = b.lo, r->label_hi = b.hi;
    if (stage_renumber(r) != PP_OK || an_batch_map_build(r) != PP_OK)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    host_compact(r);
    return PP_OK;
}
