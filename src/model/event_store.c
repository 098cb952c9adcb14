/* event_store.c — the model's event columns (event_store.h): growing them,
 * writing and reading a slot, and narrowing them for a last reader. */
#include "model/event_store.h"

#include <stdlib.h>
#include <string.h>

#include "model/column_mem.h"
#include "model/narrow.h"

/* The slot widths of pp_event_slots: every column until pp_event_store_narrow. */
static const uint8_t slot_shift[PP_WIDE_COLUMNS] = {
    [PP_WIDE_DUR] = 2, [PP_WIDE_BATCH] = 1, [PP_WIDE_HW] = 2,   [PP_WIDE_XFER] = 2,
    [PP_WIDE_TRACK] = 1, [PP_WIDE_STAGE] = 1, [PP_WIDE_TS] = 2, [PP_WIDE_NAME] = 2};

void pp_event_store_init(pp_event_store *e) {
    *e = (pp_event_store){0};
    memcpy(e->shift, slot_shift, sizeof slot_shift);
}

void pp_event_store_free(pp_event_store *e) {
    const pp_event_slots *c = &e->col;
    void *cols[PP_EVENT_COLUMNS] = {c->ts32, c->dur32, c->hw32, c->xfer32,  c->batch16,
                                    c->id,   c->value, c->name, c->stage16, c->track16,
                                    c->kind, c->role,  c->phase};
    for (size_t k = 0; k < PP_EVENT_COLUMNS; k++)
        pp_column_free(cols[k], e->bytes[k]);
    free(c->pages);
    pp_wide_free(&e->wide);
}

int pp_event_store_reserve(pp_event_store *e, size_t cap) {
    size_t npages = (cap + PP_TS_PAGE - 1) >> PP_TS_PAGE_SHIFT;
    if (npages > e->npages) {
        pp_page_bases *pages = realloc(e->col.pages, npages * sizeof *pages);
        if (!pages)
            return PP_ENOMEM;
        for (size_t p = e->npages; p < npages; p++) {
            atomic_init(&pages[p].ts, PP_BASE_UNSET);
            atomic_init(&pages[p].batch, PP_BASE_UNSET);
        }
        e->col.pages = pages;
        e->npages = npages;
    }
    int k = 0;
#define GROW(c)                                                                       \
    do {                                                                              \
        if (e->bytes[k] < cap * sizeof *e->col.c) {                                   \
            void *p_ = pp_column_grow(e->col.c, e->bytes[k], cap * sizeof *e->col.c); \
            if (!p_)                                                                  \
                return PP_ENOMEM;                                                     \
            e->col.c = p_;                                                            \
            e->bytes[k] = cap * sizeof *e->col.c;                                     \
        }                                                                             \
        k++;                                                                          \
    } while (0)
    GROW(ts32); GROW(dur32); GROW(hw32); GROW(xfer32); GROW(batch16); GROW(id);
    GROW(value); GROW(name); GROW(stage16); GROW(track16); GROW(kind); GROW(role); GROW(phase);
#undef GROW
    e->col.wide = &e->wide;
    e->cap = cap;
    return PP_OK;
}

int pp_event_store_make_room(pp_event_store *e, size_t n) {
    if (e->narrowed)
        return PP_EINVAL;
    if (n <= e->cap - e->count && e->cap) /* slots point into columns, even for n = 0 */
        return PP_OK;
    if (n > SIZE_MAX / 2 / sizeof *e->col.id - e->count) /* the widest column's bytes */
        return PP_ENOMEM;
    size_t cap = e->cap ? e->cap * 2 : 1024;
    return pp_event_store_reserve(e, cap > e->count + n ? cap : e->count + n);
}

void pp_event_store_clear_sparse(pp_event_store *e, size_t from, size_t to) {
    size_t n = to - from;
    const uint8_t *w = e->shift; /* pp_event_store_narrow may have narrowed them */
    memset((char *)e->col.batch16 + (from << w[PP_WIDE_BATCH]), 0, n << w[PP_WIDE_BATCH]);
    memset((char *)e->col.stage16 + (from << w[PP_WIDE_STAGE]), 0, n << w[PP_WIDE_STAGE]);
    memset(e->col.phase + from, 0, n * sizeof *e->col.phase);
    memset((char *)e->col.hw32 + (from << w[PP_WIDE_HW]), 0, n << w[PP_WIDE_HW]);
    memset((char *)e->col.xfer32 + (from << w[PP_WIDE_XFER]), 0, n << w[PP_WIDE_XFER]);
    memset(e->col.id + from, 0, n * sizeof *e->col.id);
    memset(e->col.value + from, 0, n * sizeof *e->col.value);
}

int pp_event_slots_put(const pp_event_slots *s, size_t i, const pp_event *ev) {
    int rc = pp_slot_put_ts(s, i, ev->ts_ns) | pp_slot_put_dur(s, i, ev->dur_ns) |
             pp_slot_put_batch(s, i, ev->batch) |
             pp_slot_put_sparse32(s, s->hw32, PP_WIDE_HW, i, ev->hw_ns) |
             pp_slot_put_sparse32(s, s->xfer32, PP_WIDE_XFER, i, ev->xfer_ns) |
             pp_slot_put_track(s, i, ev->track) | pp_slot_put_stage(s, i, ev->stage);
    pp_slot_put_u64(s->id, i, ev->id);
    pp_slot_put_f64(s->value, i, ev->value);
    s->name[i] = ev->name;
    s->kind[i] = ev->kind;
    s->role[i] = ev->role;
    pp_slot_put_u8(s->phase, i, ev->phase);
    return rc;
}

/* The slots as a read-only view, their widths `shift`: index i is slot i,
 * event base + i. */
static void cols_of(const pp_event_slots *s, size_t count, const uint8_t *shift, pp_cols *out) {
    *out = (pp_cols){.count = count, .base = s->base, .ts32 = s->ts32, .pages = s->pages,
                     .dur = pp_ncol_make(s->dur32, shift[PP_WIDE_DUR], 0),
                     .hw = pp_ncol_make(s->hw32, shift[PP_WIDE_HW], 0),
                     .xfer = pp_ncol_make(s->xfer32, shift[PP_WIDE_XFER], 0),
                     .batch = pp_ncol_make(s->batch16, shift[PP_WIDE_BATCH], 1),
                     .name = pp_ncol_make(s->name, shift[PP_WIDE_NAME], 0),
                     .stage = pp_ncol_make(s->stage16, shift[PP_WIDE_STAGE], 0),
                     .track = pp_ncol_make(s->track16, shift[PP_WIDE_TRACK], 0),
                     .id = s->id, .value = s->value, .kind = s->kind, .role = s->role,
                     .phase = s->phase, .wide = s->wide};
}

/* Event i of a column view. */
static void event_of(const pp_cols *c, size_t i, pp_event *out) {
    *out = (pp_event){pp_cols_ts(c, i),    pp_cols_dur(c, i),   pp_cols_batch(c, i),
                      pp_cols_hw(c, i),    pp_cols_xfer(c, i),  c->id[i],
                      c->value[i],         pp_cols_name(c, i),  pp_cols_stage(c, i),
                      pp_cols_track(c, i), c->kind[i],          c->role[i],
                      c->phase[i]};
}

void pp_event_slots_get(const pp_event_slots *s, size_t i, pp_event *out) {
    pp_cols c;
    cols_of(s, i + 1, slot_shift, &c);
    event_of(&c, i, out);
}

void pp_event_store_cols(const pp_event_store *e, pp_cols *out) {
    cols_of(&e->col, e->count, e->shift, out);
}

void pp_event_store_event(const pp_event_store *e, size_t i, pp_event *out) {
    pp_cols c;
    pp_event_store_cols(e, &c);
    event_of(&c, i, out);
}

void pp_event_store_narrow(pp_event_store *e) {
    e->narrowed = 1;
    pp_narrow_col c[] = {
#define COLUMN(field, w) \
    {e->col.field, 0, e->shift[w], w == PP_WIDE_BATCH, &e->wide.col[w], e->col.pages}
        COLUMN(dur32, PP_WIDE_DUR),       COLUMN(hw32, PP_WIDE_HW),
        COLUMN(xfer32, PP_WIDE_XFER),     COLUMN(name, PP_WIDE_NAME),
        COLUMN(batch16, PP_WIDE_BATCH),   COLUMN(stage16, PP_WIDE_STAGE),
        COLUMN(track16, PP_WIDE_TRACK),
#undef COLUMN
    };
    /* each column's allocation is in e->bytes, in the order of GROW */
    const size_t at[] = {1, 2, 3, 7, 4, 8, 9};
    const int wide[] = {PP_WIDE_DUR,   PP_WIDE_HW,    PP_WIDE_XFER, PP_WIDE_NAME,
                        PP_WIDE_BATCH, PP_WIDE_STAGE, PP_WIDE_TRACK};
    for (size_t k = 0; k < 7; k++)
        c[k].bytes = e->bytes[at[k]];
    pp_columns_narrow(c, 7, e->count);
    for (size_t k = 0; k < 7; k++) {
        e->bytes[at[k]] = c[k].bytes;
        e->shift[wide[k]] = (uint8_t)c[k].shift;
    }
    e->col.dur32 = c[0].p, e->col.hw32 = c[1].p, e->col.xfer32 = c[2].p, e->col.name = c[3].p;
    e->col.batch16 = c[4].p, e->col.stage16 = c[5].p, e->col.track16 = c[6].p;
}
