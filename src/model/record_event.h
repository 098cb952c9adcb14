/* record_event.h — what one raw record of a session becomes in a model,
 * shared by the model builder (from_session.c) and the flight recorder
 * (capture/pptrace_stream.c), so that a trace means the same whichever of
 * them wrote it. String ids and tracks stay the session's: the caller maps
 * them to its model's. Not public. */
#ifndef PP_MODEL_RECORD_EVENT_H
#define PP_MODEL_RECORD_EVENT_H

#include "core/record.h"
#include "pipeprof/model.h"

/* A SPAN, INSTANT, COUNTER or FLOW record as an event; name, stage and track
 * are left as the record's session ids. */
void pp_event_from_record(const pp_record *r, pp_event *e);
/* An ARG_* record as an annotation of model event `event`; key, and a
 * string value (v.s), are left as session ids. */
void pp_annotation_from_record(const pp_record *r, uint64_t event, pp_annotation *a);
/* A session track as a model track: kind, flags, stream and tid; name,
 * device, process, pid and sort_index are the caller's to set. */
void pp_track_info_from_def(const pp_track_def *d, pp_track_info *t);

/* Sets the meta's clock, host and boot id to this machine's
 * (core/clock_id.h): a session's timestamps are on its clock. PP_ENOMEM. */
int pp_model_meta_set_clock(pp_model *m);

/* Session string ids (pp_str) to a model's ids, each interned into the
 * model on first use. Zero-initialize; pp_name_map_free releases it. */
typedef struct pp_name_map {
    uint32_t *ids; /* pp_str -> model id, 0 = not yet mapped */
    size_t cap;
} pp_name_map;

/* Sets *out to the model's id of `id` (0 for 0); PP_ENOMEM leaves *out 0. */
int pp_name_map_get(pp_name_map *nm, pp_model *m, pp_str id, uint32_t *out);
void pp_name_map_free(pp_name_map *nm);

#endif
