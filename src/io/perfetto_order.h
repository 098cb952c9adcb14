/* perfetto_order.h — the order in which the Perfetto writer emits a model's
 * events, so that its file is in time order and slices nest as on their
 * track: events by start time, at one start the longer span first (a parent
 * opens before the child that starts with it), then model order; and the
 * slice ends waiting to be written, soonest first (of two ends at one time,
 * the later-begun slice ends first). */
#ifndef PP_IO_PERFETTO_ORDER_H
#define PP_IO_PERFETTO_ORDER_H

#include "pipeprof/model.h"

/* One event in emitting order, with its annotations. */
typedef struct pf_event_ref {
    uint64_t start;     /* ts_ns - the earliest ts_ns */
    uint64_t longer;    /* the longest dur_ns - dur_ns */
    uint64_t ann_first; /* index of its first annotation */
    uint32_t event;     /* model event index */
    uint32_t ann_count;
} pf_event_ref;

/* The model's events in emitting order (pp_model_event_count entries, caller
 * frees). PP_ENOMEM, or PP_EINVAL for more than 2^32 - 1 events or
 * annotations of one event. Linear when the model is in order already, else
 * a radix sort. */
int pf_order_events(const pp_model *m, pf_event_ref **out);

typedef struct pf_end {
    int64_t end_ns;
    uint64_t begun;     /* how many slices began before this one */
    uint64_t uuid;      /* its track */
} pf_end;

/* A min-heap of slice ends; zero-initialized is empty. */
typedef struct pf_ends {
    pf_end *heap;
    size_t count, cap;
    uint64_t begun;
} pf_ends;

/* 0 or PP_ENOMEM. */
int pf_ends_push(pf_ends *h, int64_t end_ns, uint64_t uuid);
/* Whether an end at or before `ts` is waiting. */
static inline int pf_ends_due(const pf_ends *h, int64_t ts) {
    return h->count && h->heap[0].end_ns <= ts;
}
/* Removes and returns the soonest end (the heap is not empty). */
pf_end pf_ends_pop(pf_ends *h);
void pf_ends_free(pf_ends *h);

#endif
