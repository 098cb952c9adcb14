/* event_store.h — the model's event columns: their memory, the width of
 * each slot, the side table of the values too wide for theirs (model.c
 * keeps one store for its events; pp_model_sort_by_time fills a second).
 * Not public: pipeprof/model.h is the API. */
#ifndef PP_MODEL_EVENT_STORE_H
#define PP_MODEL_EVENT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "model/columns.h"
#include "model/event_slots.h"
#include "pipeprof/model.h"

#define PP_EVENT_COLUMNS 13 /* the columns of pp_event_slots */

typedef struct pp_event_store {
    size_t count, cap;
    size_t bytes[PP_EVENT_COLUMNS]; /* each column's allocation, in the order of
                                     * pp_event_slots (after a failed growth some
                                     * columns are larger than cap) */
    pp_event_slots col; /* the columns, from event 0 */
    pp_wide_sink wide;  /* the values too wide for their slots (model/columns.h) */
    size_t npages;      /* page bases: one a page of PP_TS_PAGE events */
    int narrowed;       /* by pp_event_store_narrow: col's slots are as wide as `shift` says */
    uint8_t shift[PP_WIDE_COLUMNS]; /* log2 of a slot's bytes, by pp_wide_sink column */
} pp_event_store;

/* An empty store, its slots at the widths of pp_event_slots. */
void pp_event_store_init(pp_event_store *e);
void pp_event_store_free(pp_event_store *e);
/* Grows every column to `cap` events exactly, the new slots zero (the
 * sparse columns rely on it: event_slots.h). 0, or PP_ENOMEM: then nothing
 * is lost, the columns already grown stay valid at their new size. */
int pp_event_store_reserve(pp_event_store *e, size_t cap);
/* Room for events [count, count + n): at least doubling, so that n appends
 * of one event cost O(n) copies. 0, PP_ENOMEM, or PP_EINVAL for a narrowed
 * store, which takes no more events. */
int pp_event_store_make_room(pp_event_store *e, size_t n);
/* Zeroes slots [from, to) of the sparse columns, which must read zero past
 * the last event (event_slots.h). */
void pp_event_store_clear_sparse(pp_event_store *e, size_t from, size_t to);
/* The store's events as a column view (model/columns.h), and event i. */
void pp_event_store_cols(const pp_event_store *e, pp_cols *out);
void pp_event_store_event(const pp_event_store *e, size_t i, pp_event *out);
/* pp_model_narrow's work (model/columns.h): the narrow columns and the name
 * column as narrow as their values allow, in place (model/narrow.h). */
void pp_event_store_narrow(pp_event_store *e);

#endif
