/* Raw records as model events, annotations and tracks (record_event.h). */
#include "model/record_event.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock_id.h"

void pp_event_from_record(const pp_record *r, pp_event *e) {
    pp_event_init(e);
    e->ts_ns = r->ts_ns;
    e->name = r->name;
    e->track = r->track;
    switch (r->kind) {
    case PP_REC_SPAN:
        e->kind = PP_EV_SPAN;
        e->dur_ns = r->dur_ns;
        e->batch = r->batch;
        e->hw_ns = r->hw_ns;
        e->xfer_ns = r->xfer_ns;
        e->stage = r->stage;
        e->role = r->role;
        break;
    case PP_REC_INSTANT:
        e->kind = PP_EV_INSTANT;
        break;
    case PP_REC_COUNTER:
        e->kind = PP_EV_COUNTER;
        e->value = r->u.value;
        break;
    default: /* PP_REC_FLOW */
        e->kind = PP_EV_FLOW;
        e->id = r->u.id;
        e->phase = r->phase;
        break;
    }
}

void pp_annotation_from_record(const pp_record *r, uint64_t event, pp_annotation *a) {
    *a = (pp_annotation){.event = event, .key = r->name};
    if (r->kind == PP_REC_ARG_INT) {
        a->type = PP_VALUE_INT;
        a->v.i = r->u.ival;
    } else if (r->kind == PP_REC_ARG_DOUBLE) {
        a->type = PP_VALUE_DOUBLE;
        a->v.d = r->u.value;
    } else {
        a->type = PP_VALUE_STR;
        a->v.s = r->stage;
    }
}

void pp_track_info_from_def(const pp_track_def *d, pp_track_info *t) {
    pp_track_info_init(t);
    t->kind = d->kind;
    t->flags = d->flags;
    t->stream = d->stream;
    t->tid = d->tid;
}

int pp_name_map_get(pp_name_map *nm, pp_model *m, pp_str id, uint32_t *out) {
    *out = 0;
    if (id == 0)
        return PP_OK;
    if (id >= nm->cap) {
        size_t cap = nm->cap ? nm->cap : 256;
        while (cap <= id)
            cap *= 2;
        uint32_t *p = realloc(nm->ids, cap * sizeof *p);
        if (!p)
            return PP_ENOMEM;
        memset(p + nm->cap, 0, (cap - nm->cap) * sizeof *p);
        nm->ids = p;
        nm->cap = cap;
    }
    if (!nm->ids[id]) {
        const char *text = pp_str_text(id);
        if (pp_model_intern(m, text, strlen(text), &nm->ids[id]) != PP_OK)
            return PP_ENOMEM;
    }
    *out = nm->ids[id];
    return PP_OK;
}

void pp_name_map_free(pp_name_map *nm) {
    free(nm->ids);
    nm->ids = NULL;
    nm->cap = 0;
}

int pp_model_meta_set_clock(pp_model *m) {
    char host[256], boot_id[64];
    pp_clock_identity(host, sizeof host, boot_id, sizeof boot_id);
    pp_model_meta *meta = pp_model_meta_mut(m);
    if (pp_model_intern(m, PP_CLOCK_NAME, strlen(PP_CLOCK_NAME), &meta->clock) != PP_OK ||
        pp_model_intern(m, host, strlen(host), &meta->host) != PP_OK ||
        pp_model_intern(m, boot_id, strlen(boot_id), &meta->boot_id) != PP_OK)
        return PP_ENOMEM;
    return PP_OK;
}
