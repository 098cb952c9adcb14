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
 * The sparse columns (batch, stage, phase, hw_ns, xfer_ns, id, value: no
 * batch or zero for every event in many traces) read zero in every slot
 * past the last event,
 * and a writer stores a value there only when it is not zero
 * (pp_slot_put_*), so that a column that is zero throughout is never
 * written and costs no memory (model/column_mem.h). */
#ifndef PP_MODEL_EVENT_SLOTS_H
#define PP_MODEL_EVENT_SLOTS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/ann_table.h"
#include "model/columns.h"
#include "pipeprof/model.h"

/* Writable columns from some slot on: the model's own columns (from event
 * 0, model.c), or those it hands a reader, from the first slot past its
 * last event; the column types are those of pp_cols (model/columns.h).
 * base is the event index of slot 0, and wide the side table that takes
 * the values too wide for their narrow slot (NULL: none; a writer meeting
 * such a value then gives up, as pptrace_read_ahead.c's workers do). */
typedef struct pp_event_slots {
    int32_t *ts32;
    pp_page_bases *pages; /* the store's, from event 0: not offset by pp_event_slots_at */
    uint32_t *dur32, *hw32, *xfer32;
    int16_t *batch16;
    uint64_t *id;
    double *value;
    uint32_t *name;
    uint16_t *stage16, *track16;
    uint8_t *kind, *role, *phase;
    size_t base;
    pp_wide_sink *wide;
} pp_event_slots;

/* The slots from slot k of `s` on. */
static inline void pp_event_slots_at(const pp_event_slots *s, size_t k, pp_event_slots *out) {
    *out = (pp_event_slots){s->ts32 + k, s->pages, s->dur32 + k, s->hw32 + k, s->xfer32 + k,
                            s->batch16 + k, s->id + k, s->value + k, s->name + k,
                            s->stage16 + k, s->track16 + k, s->kind + k, s->role + k,
                            s->phase + k, s->base + k, s->wide};
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

/* The narrow columns: a value that fits is stored, one that does not is
 * the escape in its slot and the value in s->wide. 0, or nonzero when it
 * could not be kept (no side table, or no memory for it). */
static inline int pp_slot_put_escaped(const pp_event_slots *s, int c, size_t i, uint64_t v) {
    return s->wide ? pp_wide_append(s->wide, c, s->base + i, v) : PP_ENOMEM;
}

/* The page base `base` holds, set to v first when it has none: the first
 * writer of a page sets it, by compare-and-swap, since the .pptrace
 * reader's workers may share a page (columns.h). PP_BASE_UNSET when v is
 * PP_BASE_UNSET and no base was set. */
static inline int64_t pp_page_base(_Atomic int64_t *base, int64_t v) {
    int64_t b = atomic_load_explicit(base, memory_order_relaxed);
    /* on a lost race the exchange leaves the winner's base in b */
    if (b == PP_BASE_UNSET && v != PP_BASE_UNSET && atomic_compare_exchange_strong(base, &b, v))
        b = v;
    return b;
}

/* ts: 32 bits from its page's base (columns.h). */
static inline int pp_slot_put_ts(const pp_event_slots *s, size_t i, int64_t v) {
    int64_t b = pp_page_base(&s->pages[(s->base + i) >> PP_TS_PAGE_SHIFT].ts, v), off;
    int fits = b != PP_BASE_UNSET && !__builtin_sub_overflow(v, b, &off) && off > INT32_MIN &&
               off <= INT32_MAX;
    s->ts32[i] = fits ? (int32_t)off : PP_WIDE_I32;
    return fits ? 0 : pp_slot_put_escaped(s, PP_WIDE_TS, i, (uint64_t)v);
}

static inline int pp_slot_put_dur(const pp_event_slots *s, size_t i, int64_t v) {
    int fits = (uint64_t)v < PP_WIDE_U32; /* a negative one does not: the model refuses it */
    s->dur32[i] = fits ? (uint32_t)v : PP_WIDE_U32;
    return fits ? 0 : pp_slot_put_escaped(s, PP_WIDE_DUR, i, (uint64_t)v);
}

/* batch: sparse (no batch, -1, is not written), 16 bits from its page's
 * base (columns.h). */
static inline int pp_slot_put_batch(const pp_event_slots *s, size_t i, int64_t v) {
    if (v == -1)
        return 0;
    int64_t b = pp_page_base(&s->pages[(s->base + i) >> PP_TS_PAGE_SHIFT].batch, v), d;
    int fits = b != PP_BASE_UNSET && !__builtin_sub_overflow(v, b, &d) &&
               d >= -PP_BATCH_DELTA_MAX - 1 && d <= PP_BATCH_DELTA_MAX;
    s->batch16[i] = fits ? (int16_t)(d >= 0 ? d + 1 : d) : PP_WIDE_I16;
    return fits ? 0 : pp_slot_put_escaped(s, PP_WIDE_BATCH, i, (uint64_t)v);
}

/* Track ids: 16 bits. */
static inline int pp_slot_put_track(const pp_event_slots *s, size_t i, uint32_t v) {
    int fits = v < PP_WIDE_U16;
    s->track16[i] = fits ? (uint16_t)v : PP_WIDE_U16;
    return fits ? 0 : pp_slot_put_escaped(s, PP_WIDE_TRACK, i, v);
}

/* Stage ids: 16 bits, sparse (a zero is not written). */
static inline int pp_slot_put_stage(const pp_event_slots *s, size_t i, uint32_t v) {
    if (v == 0)
        return 0;
    s->stage16[i] = v < PP_WIDE_U16 ? (uint16_t)v : PP_WIDE_U16;
    return v < PP_WIDE_U16 ? 0 : pp_slot_put_escaped(s, PP_WIDE_STAGE, i, v);
}

/* A sparse 32-bit column (hw_ns, xfer_ns: column c of the side table): a
 * zero is not written. */
static inline int pp_slot_put_sparse32(const pp_event_slots *s, uint32_t *col, int c, size_t i,
                                 uint64_t v) {
    if (v == 0)
        return 0;
    col[i] = v < PP_WIDE_U32 ? (uint32_t)v : PP_WIDE_U32;
    return v < PP_WIDE_U32 ? 0 : pp_slot_put_escaped(s, c, i, v);
}

/* Makes room for n more events and points *out at them (their side table
 * the model's: it takes values past the last event, which only a commit
 * keeps). 0 or PP_ENOMEM. The slots stay valid until the next append to
 * the model. */
int pp_model_events_reserve(pp_model *m, size_t n, pp_event_slots *out);
/* Appends the first n reserved slots up to the first one that
 * pp_model_add_event would refuse; returns how many it appended. When it
 * refuses one, that event goes to *refused (unless NULL), for a message,
 * and the sparse columns of the slots not appended are cleared. */
size_t pp_model_events_commit(pp_model *m, size_t n, pp_event *refused);
/* Clears the sparse columns of the n reserved slots past the last event,
 * written and then not committed, so that they read zero again, and drops
 * their wide values. */
void pp_model_events_unreserve(pp_model *m, size_t n);
/* Slot i as an event. */
void pp_event_slots_get(const pp_event_slots *s, size_t i, pp_event *out);
/* Writes event `ev` into slot i, whose sparse columns read zero. 0, or
 * nonzero when a wide value could not be kept (pp_slot_put_escaped). */
int pp_event_slots_put(const pp_event_slots *s, size_t i, const pp_event *ev);

/* The same for annotations: room for n more, then append those that
 * pp_model_add_annotation would accept, up to the first it would refuse. */
int pp_model_annotations_reserve(pp_model *m, size_t n, pp_ann **out);
size_t pp_model_annotations_commit(pp_model *m, size_t n);

#endif
