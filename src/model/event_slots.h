/* event_slots.h — appending a whole block of events or annotations at once,
 * for readers that decode a block column by column (io/pptrace_read.c).
 * Not public: pp_model_add_event and pp_model_add_annotation are the API.
 *
 * Why: appending one event at a time copies it through a pp_event and checks
 * the capacity of every column per event; a reader of a columnar format can
 * instead decode each column straight into the model's column and check the
 * block's rows in one pass. A reader reserves n slots past the last event,
 * writes them, and commits them: the commit applies the same rules as
 * pp_model_add_event (the one place they are written) and appends the rows
 * up to the first that breaks one.
 *
 * The sparse columns (stage, phase, hw_ns, xfer_ns, id, value: zero for
 * every event in many traces) read zero in every slot past the last event,
 * and a writer stores a value there only when it is not zero
 * (pp_slot_put_*), so that a column that is zero throughout is never
 * written and costs no memory (model/column_mem.h). */
#ifndef PP_MODEL_EVENT_SLOTS_H
#define PP_MODEL_EVENT_SLOTS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pipeprof/model.h"

/* Writable columns from some slot on: the model's own columns (from event
 * 0, model.c), or those it hands a reader, from the first slot past its
 * last event; the column types are those of pp_event_columns. */
typedef struct pp_event_slots {
    int64_t *ts_ns, *dur_ns, *batch;
    uint64_t *hw_ns, *xfer_ns, *id;
    double *value;
    uint32_t *name, *stage, *track;
    uint8_t *kind, *role, *phase;
} pp_event_slots;

/* The slots from slot k of `s` on. */
static inline void pp_event_slots_at(const pp_event_slots *s, size_t k, pp_event_slots *out) {
    *out = (pp_event_slots){s->ts_ns + k, s->dur_ns + k, s->batch + k, s->hw_ns + k,
                            s->xfer_ns + k, s->id + k, s->value + k, s->name + k,
                            s->stage + k, s->track + k, s->kind + k, s->role + k,
                            s->phase + k};
}

/* Stores v in slot i of a sparse column (which reads zero) unless it is 0. */
static inline void pp_slot_put_u64(uint64_t *col, size_t i, uint64_t v) {
    if (v)
        col[i] = v;
}

static inline void pp_slot_put_u32(uint32_t *col, size_t i, uint32_t v) {
    if (v)
        col[i] = v;
}

static inline void pp_slot_put_u8(uint8_t *col, size_t i, uint8_t v) {
    if (v)
        col[i] = v;
}

/* The same for value: +0.0 (all bits zero) is what the slot holds. */
static inline void pp_slot_put_f64(double *col, size_t i, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (bits)
        col[i] = v;
}

/* Makes room for n more events and points *out at them. 0 or PP_ENOMEM.
 * The slots stay valid until the next append to the model. */
int pp_model_events_reserve(pp_model *m, size_t n, pp_event_slots *out);
/* Appends the first n reserved slots up to the first one that
 * pp_model_add_event would refuse; returns how many it appended. When it
 * refuses one, that event goes to *refused (unless NULL), for a message,
 * and the sparse columns of the slots not appended are cleared. */
size_t pp_model_events_commit(pp_model *m, size_t n, pp_event *refused);
/* Clears the sparse columns of the n reserved slots past the last event,
 * written and then not committed, so that they read zero again. */
void pp_model_events_unreserve(pp_model *m, size_t n);
/* Slot i as an event. */
void pp_event_slots_get(const pp_event_slots *s, size_t i, pp_event *out);
/* Writes event `ev` into slot i, whose sparse columns read zero. */
void pp_event_slots_put(const pp_event_slots *s, size_t i, const pp_event *ev);

/* The same for annotations: room for n more, then append those that
 * pp_model_add_annotation would accept, up to the first it would refuse. */
int pp_model_annotations_reserve(pp_model *m, size_t n, pp_annotation **out);
size_t pp_model_annotations_commit(pp_model *m, size_t n);

#endif
