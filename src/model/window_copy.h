/* window_copy.h — the events of a model that fall in a time window, copied
 * into another model with the same strings and tracks (not public): what
 * `pipeprof convert --from --to` keeps (io/convert.c), whole or a chunk at a
 * time. */
#ifndef PP_MODEL_WINDOW_COPY_H
#define PP_MODEL_WINDOW_COPY_H

#include <stdint.h>

#include "pipeprof/model.h"

/* An event overlaps [from, to) when it starts before `to` and ends after
 * `from`; one of no duration (an instant, counter sample, flow step) when
 * from <= ts < to. */
static inline int pp_in_window(int64_t ts, int64_t dur, int64_t from, int64_t to) {
    return ts < to && (ts + dur > from || (dur == 0 && ts >= from));
}

/* A new model with the strings, tracks, threads and meta of `src` (ids
 * unchanged) and no events. 0 or PP_ENOMEM. */
int pp_model_copy_head(const pp_model *src, pp_model **out);

/* Appends the events of `src` that overlap [from, to), in order, and their
 * annotations to `dst`, whose strings and tracks are those of `src` (a
 * pp_model_copy_head of it, or of the model `src` is a chunk of). 0 or
 * PP_ENOMEM. */
int pp_model_append_window(pp_model *dst, const pp_model *src, int64_t from, int64_t to);

#endif
