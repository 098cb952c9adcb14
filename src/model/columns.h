/* columns.h — the model's event columns as the library itself reads them.
 * Not public: pp_model_columns (pipeprof/model.h) is the API.
 *
 * Why narrow: at 100M events every byte an event is 100 MB, and the
 * columns are most of what a reader, writer or analysis holds. So dur_ns,
 * hw_ns and xfer_ns are stored in 32 bits (a duration or a hardware time
 * up to 4.29 s), the track and stage ids in 16 bits (65534 tracks, a stage
 * name among the first 65534 strings), ts_ns in 32 bits from a base that
 * each page of PP_TS_PAGE events shares (within 2.1 s of it), and batch in
 * 16 bits from a base of its page too (within 32766 batches of it; no batch,
 * -1, is a zero slot, so that a trace without batches never writes the
 * column): nearly every event of every trace. A value that does not fit
 * is stored as the column's escape (PP_WIDE_U32, PP_WIDE_I32, PP_WIDE_I16,
 * PP_WIDE_U16) in its slot and in full in a side table of (event, value)
 * pairs sorted by event, which a reader searches only when it meets the
 * escape. 26 bytes an event fewer than 64-bit times and batches and 32-bit
 * ids; docs/analysis.md ("Memory") has the figures. The name id stays 32
 * bits: a trace of many kernels has more than 65534 names, and most of its
 * events would then take the side table.
 *
 * A page's bases are the start and the batch (other than -1) of the first
 * of its events written, whoever writes it: the .pptrace reader's workers
 * fill the pages of a block each, and a page may straddle two blocks, so a
 * base is set by a compare-and-swap and never changes after (pp_page_base,
 * model/event_slots.h).
 *
 * An owner that reads a model for the last time may narrow it further
 * (pp_model_narrow): to 1 or 2 bytes a slot where the values of a trace
 * allow, the name column too.
 *
 * Read a narrow column through its accessor (pp_cols_ts, pp_cols_dur,
 * pp_cols_batch, pp_cols_hw, pp_cols_xfer, pp_cols_track, pp_cols_stage,
 * pp_cols_name), never through its array alone: their width is the
 * view's (pp_ncol), and an escape is read from the side table. */
#ifndef PP_MODEL_COLUMNS_H
#define PP_MODEL_COLUMNS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeprof/model.h"

/* The escapes: a slot holding one has its value in the side table. */
#define PP_WIDE_U32 UINT32_MAX
#define PP_WIDE_I32 INT32_MIN
#define PP_WIDE_I16 INT16_MIN
#define PP_WIDE_U16 UINT16_MAX

/* Events a page's bases serve: event i's are pages[i >> PP_TS_PAGE_SHIFT]. */
#define PP_TS_PAGE_SHIFT 8
#define PP_TS_PAGE ((size_t)1 << PP_TS_PAGE_SHIFT)
/* A base not yet set. No start is INT64_MIN (the model refuses it), and a
 * batch of INT64_MIN is kept in the side table, never as a base. */
#define PP_BASE_UNSET INT64_MIN
/* A batch slot holds 0 for no batch (-1), d + 1 for a batch d >= 0 above
 * its page's base, d for one d < 0 below it. */
#define PP_BATCH_DELTA_MAX 32766

/* The bases of one page of events: its first start and its first batch
 * other than -1 written (PP_BASE_UNSET until then). */
typedef struct pp_page_bases {
    _Atomic int64_t ts, batch;
} pp_page_bases;

/* The narrow columns, in the order of a pp_wide_sink's tables. */
enum { PP_WIDE_DUR, PP_WIDE_BATCH, PP_WIDE_HW, PP_WIDE_XFER, PP_WIDE_TRACK, PP_WIDE_STAGE,
       PP_WIDE_TS, PP_WIDE_NAME, PP_WIDE_COLUMNS };

/* One escaped value: event index and the value's 64 bits. */
typedef struct pp_wide {
    size_t at;
    uint64_t v;
} pp_wide;

/* The escaped values of one column, sorted by event. */
typedef struct pp_wide_col {
    pp_wide *e;
    size_t n, cap;
} pp_wide_col;

typedef struct pp_wide_sink {
    pp_wide_col col[PP_WIDE_COLUMNS];
} pp_wide_sink;

/* Appends (at, v) to column c of the sink (at above every index there).
 * 0 or PP_ENOMEM. */
int pp_wide_append(pp_wide_sink *s, int c, size_t at, uint64_t v);
/* The value escaped at event `at` (0 when there is none: never for an
 * escape the model wrote). */
uint64_t pp_wide_get(const pp_wide_col *w, size_t at);
/* Drops the entries at or after event `from`, keeping the memory. */
void pp_wide_cut(pp_wide_sink *s, size_t from);
void pp_wide_free(pp_wide_sink *s);

/* A narrow column as a reader sees it: slots 1 << shift bytes wide, of
 * unsigned values or, for batch, of signed deltas; a slot holding
 * `escape` (all ones, the most negative delta; for the name column at 32
 * bits UINT32_MAX, which no string id is) has its value in the side
 * table. Written at the widths of pp_event_slots; pp_model_narrow may
 * narrow a model's columns further. */
typedef struct pp_ncol {
    const void *p;
    uint32_t shift, escape;
} pp_ncol;

static inline pp_ncol pp_ncol_make(const void *p, unsigned shift, int is_signed) {
    uint32_t all_ones = UINT32_MAX >> (32 - (8u << shift));
    return (pp_ncol){p, shift, is_signed ? ~(all_ones >> 1) : all_ones};
}

static inline uint32_t pp_ncol_u(pp_ncol c, size_t i) {
    return c.shift == 0 ? ((const uint8_t *)c.p)[i]
         : c.shift == 1 ? ((const uint16_t *)c.p)[i]
                        : ((const uint32_t *)c.p)[i];
}

static inline int32_t pp_ncol_i(pp_ncol c, size_t i) {
    return c.shift == 0 ? ((const int8_t *)c.p)[i] : ((const int16_t *)c.p)[i];
}

/* Read-only column view of every event; index i is event base + i (base
 * is 0 but in a view of a reader's reserved slots: model.c). */
typedef struct pp_cols {
    size_t count, base;
    const int32_t *ts32;
    const pp_page_bases *pages;
    pp_ncol dur, hw, xfer, batch, name, stage, track;
    const uint64_t *id;
    const double *value;
    const uint8_t *kind, *role, *phase;
    const pp_wide_sink *wide;
} pp_cols;

void pp_model_cols(const pp_model *m, pp_cols *out);

static inline int64_t pp_cols_ts(const pp_cols *c, size_t i) {
    int32_t v = c->ts32[i];
    size_t k = c->base + i;
    if (v == PP_WIDE_I32)
        return (int64_t)pp_wide_get(&c->wide->col[PP_WIDE_TS], k);
    return atomic_load_explicit(&c->pages[k >> PP_TS_PAGE_SHIFT].ts, memory_order_relaxed) + v;
}

static inline int64_t pp_cols_dur(const pp_cols *c, size_t i) {
    uint32_t v = pp_ncol_u(c->dur, i);
    return v != c->dur.escape
               ? (int64_t)v
               : (int64_t)pp_wide_get(&c->wide->col[PP_WIDE_DUR], c->base + i);
}

/* ts + dur: the end of event i (never past INT64_MAX: pp_model_add_event). */
static inline int64_t pp_cols_end(const pp_cols *c, size_t i) {
    return pp_cols_ts(c, i) + pp_cols_dur(c, i);
}

/* The batch that a slot holding v (neither 0 nor the escape) encodes for
 * event k, from its page's base. */
static inline int64_t pp_batch_of_slot(const pp_page_bases *pages, size_t k, int32_t v) {
    int64_t b = atomic_load_explicit(&pages[k >> PP_TS_PAGE_SHIFT].batch, memory_order_relaxed);
    return b + (v > 0 ? v - 1 : v); /* the delta first: base + delta is the batch written */
}

static inline int64_t pp_cols_batch(const pp_cols *c, size_t i) {
    int32_t v = pp_ncol_i(c->batch, i);
    size_t k = c->base + i;
    if (v == 0)
        return -1;
    if (v == (int32_t)c->batch.escape)
        return (int64_t)pp_wide_get(&c->wide->col[PP_WIDE_BATCH], k);
    return pp_batch_of_slot(c->pages, k, v);
}

static inline uint64_t pp_cols_hw(const pp_cols *c, size_t i) {
    uint32_t v = pp_ncol_u(c->hw, i);
    return v != c->hw.escape ? v : pp_wide_get(&c->wide->col[PP_WIDE_HW], c->base + i);
}

static inline uint64_t pp_cols_xfer(const pp_cols *c, size_t i) {
    uint32_t v = pp_ncol_u(c->xfer, i);
    return v != c->xfer.escape ? v : pp_wide_get(&c->wide->col[PP_WIDE_XFER], c->base + i);
}

static inline uint32_t pp_cols_track(const pp_cols *c, size_t i) {
    uint32_t v = pp_ncol_u(c->track, i);
    return v != c->track.escape
               ? v
               : (uint32_t)pp_wide_get(&c->wide->col[PP_WIDE_TRACK], c->base + i);
}

static inline uint32_t pp_cols_stage(const pp_cols *c, size_t i) {
    uint32_t v = pp_ncol_u(c->stage, i);
    return v != c->stage.escape
               ? v
               : (uint32_t)pp_wide_get(&c->wide->col[PP_WIDE_STAGE], c->base + i);
}

static inline uint32_t pp_cols_name(const pp_cols *c, size_t i) {
    uint32_t v = pp_ncol_u(c->name, i);
    return v != c->name.escape
               ? v
               : (uint32_t)pp_wide_get(&c->wide->col[PP_WIDE_NAME], c->base + i);
}

/* Narrows the model's narrow columns and its name column further, in
 * place, each to the fewest bytes a slot (1, 2 or 4) that leave at most
 * one event in 64 escaped to the side table, and gives the memory freed
 * back: for an owner about to read the model for the last time
 * (pp_report_build_owned), since a narrowed model takes no more events
 * (pp_model_add_event, pp_model_events_reserve and pp_model_sort_by_time
 * return PP_EINVAL, and pp_model_columns too). Readers see the same
 * values. A column whose side table cannot grow stays as it is. */
void pp_model_narrow(pp_model *m);

#endif
