/* pp_model_narrow (src/model/columns.h): every event reads back the same
 * after its columns are narrowed, each column to the fewest bytes a slot
 * that leave at most one event in 64 in its side table; a value at every
 * width's edge, a batch delta at the edge of a byte, an escape of before
 * and a column no event writes read back whole; a narrowed model takes no
 * more events. */
#include "model/columns.h"
#include "model/event_slots.h"
#include "pipeprof/model.h"
#include "testutil.h"

#define N 6400 /* 100 events of each 6400 may escape 1 byte (one in 64) */

static pp_model *model_with_names(uint32_t nnames) {
    pp_model *m = NULL;
    pp_track_info t;
    pp_track_info_init(&t);
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    for (uint32_t k = 0; k < nnames; k++) {
        char text[16];
        int len = snprintf(text, sizeof text, "n%u", k);
        uint32_t id;
        EXPECT_EQ_I64(pp_model_intern(m, text, (size_t)len, &id), PP_OK);
    }
    for (int k = 0; k < 300; k++) /* track ids past one byte */
        EXPECT_EQ_I64(pp_model_add_track(m, &t, NULL), PP_OK);
    return m;
}

/* Event i: `big` of every N events (at i % 64 == 0) carry values past one
 * byte (at every width's edge) and, but for a page's first, a batch past
 * 16 bits from its page's; the rest small ones, batches in deltas from
 * their page's first at the edge of a byte. */
static void nth_event(size_t i, size_t big, pp_event *e) {
    static const uint64_t edge[] = {255, 256, 65534, 65535, 65536, UINT32_MAX - 1, UINT32_MAX,
                                    (uint64_t)1 << 40};
    int wide = i % 64 == 0 && i / 64 < big;
    uint64_t v = wide ? edge[(i / 64) % 8] : i % 200;
    pp_event_init(e);
    e->ts_ns = (int64_t)i * 100;
    e->dur_ns = (int64_t)v;
    e->hw_ns = i % 2 ? v : 0;
    e->xfer_ns = 0; /* never written: stays so */
    e->track = wide ? 299 : (uint32_t)(i % 7);
    e->name = wide ? 5000 + (uint32_t)(i % 3) : (uint32_t)(i % 50);
    e->stage = e->name;
    size_t page = i - i % PP_TS_PAGE;
    int64_t delta = (int64_t)(i % PP_TS_PAGE) - 128; /* -128 .. 127 from the first of the page */
    e->batch = i % 5 == 4 && i != page ? -1 : (int64_t)page * 10 + 1000 + (i == page ? 0 : delta);
    if (wide && i != page) /* past a 16-bit delta: in the side table before and after */
        e->batch = ((int64_t)1 << 40) + (int64_t)i;
    e->kind = PP_EV_SPAN;
}

static int same_event(const pp_event *a, const pp_event *b) {
    return a->ts_ns == b->ts_ns && a->dur_ns == b->dur_ns && a->batch == b->batch &&
           a->hw_ns == b->hw_ns && a->xfer_ns == b->xfer_ns && a->name == b->name &&
           a->stage == b->stage && a->track == b->track && a->kind == b->kind;
}

/* A model of N events of which `big` carry wide values, narrowed: every
 * event reads back as appended, through pp_model_event and pp_model_cols;
 * *shift gets the columns' widths (dur, hw, xfer, name, stage, track,
 * batch). */
static void narrow_and_check(size_t big, unsigned shift[7]) {
    pp_model *m = model_with_names(5003);
    pp_event e, back;
    for (size_t i = 0; i < N; i++) {
        nth_event(i, big, &e);
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    }
    pp_model_narrow(m);
    size_t wrong = 0;
    pp_cols c;
    pp_model_cols(m, &c);
    for (size_t i = 0; i < N; i++) {
        nth_event(i, big, &e);
        pp_model_event(m, i, &back);
        wrong += !same_event(&e, &back) || pp_cols_ts(&c, i) != e.ts_ns ||
                 pp_cols_dur(&c, i) != e.dur_ns || pp_cols_batch(&c, i) != e.batch ||
                 pp_cols_name(&c, i) != e.name || pp_cols_track(&c, i) != e.track;
    }
    EXPECT_EQ_U64(wrong, 0);
    const pp_ncol *col[7] = {&c.dur, &c.hw, &c.xfer, &c.name, &c.stage, &c.track, &c.batch};
    for (int k = 0; k < 7; k++)
        shift[k] = col[k]->shift;
    pp_model_free(m);
}

/* One event in 64 past a byte: every column a byte a slot (a batch delta
 * of +127, the last of each page, takes the side table: a slot holds it
 * as 128; with the 3 wide batches a page, exactly one event in 64), the
 * wide values in the side tables. */
static void test_narrowed_as_far_as_one_in_64_escapes(void) {
    unsigned s[7];
    narrow_and_check(N / 64, s);
    EXPECT_EQ_U64(s[0], 0); /* dur */
    EXPECT_EQ_U64(s[1], 0); /* hw */
    EXPECT_EQ_U64(s[2], 0); /* xfer: zero throughout */
    EXPECT_EQ_U64(s[3], 0); /* name */
    EXPECT_EQ_U64(s[4], 0); /* stage */
    EXPECT_EQ_U64(s[5], 0); /* track */
    EXPECT_EQ_U64(s[6], 0); /* batch: one escape a page of 256 */
}

/* With no wide values the same, and nothing in a side table to read. */
static void test_narrowed_without_escapes(void) {
    unsigned s[7];
    narrow_and_check(0, s);
    for (int k = 0; k < 7; k++)
        EXPECT_EQ_U64(s[k], 0);
}

/* More than one in 64 past a byte: those columns keep 2 or 4 bytes (a
 * value past 2 bytes keeps dur at 4 when there are as many of them). */
static void test_wider_where_more_escape(void) {
    unsigned s[7];
    pp_model *m = model_with_names(3);
    pp_event e;
    for (size_t i = 0; i < N; i++) {
        pp_event_init(&e);
        e.ts_ns = (int64_t)i;
        e.dur_ns = i % 16 == 0 ? (int64_t)1 << 20 : i % 8 == 0 ? 1000 : 3;
        e.track = i % 2 ? 299 : 0;
        e.name = 2;
        e.batch = i % 2 ? (int64_t)i : -1; /* a page spans 256 batches: 2 bytes */
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    }
    pp_model_narrow(m);
    pp_cols c;
    pp_model_cols(m, &c);
    s[0] = c.dur.shift, s[1] = c.track.shift, s[2] = c.batch.shift, s[3] = c.name.shift;
    EXPECT_EQ_U64(s[0], 2);
    EXPECT_EQ_U64(s[1], 1);
    EXPECT_EQ_U64(s[2], 1);
    EXPECT_EQ_U64(s[3], 0);
    size_t wrong = 0;
    for (size_t i = 0; i < N; i++)
        wrong += pp_cols_dur(&c, i) != (i % 16 == 0 ? (int64_t)1 << 20 : i % 8 == 0 ? 1000 : 3) ||
                 pp_cols_track(&c, i) != (i % 2 ? 299u : 0u) ||
                 pp_cols_batch(&c, i) != (i % 2 ? (int64_t)i : -1);
    EXPECT_EQ_U64(wrong, 0);
    pp_model_free(m);
}

/* A narrowed model refuses new events, a sort and the 64-bit columns, and
 * still gives its events and annotations; an empty one narrows too. */
static void test_narrowed_model_is_read_only(void) {
    pp_model *m = model_with_names(3);
    pp_event e;
    pp_event_init(&e);
    e.ts_ns = 5;
    e.dur_ns = 7;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    e.ts_ns = 1;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_annotation a = {.event = 1, .key = 1, .type = PP_VALUE_INT, .v.i = 42};
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    pp_model_narrow(m);
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_EINVAL);
    pp_event_slots slots;
    EXPECT_EQ_I64(pp_model_events_reserve(m, 1, &slots), PP_EINVAL);
    EXPECT_EQ_I64(pp_model_sort_by_time(m), PP_EINVAL);
    pp_event_columns cols;
    EXPECT_EQ_I64(pp_model_columns(m, &cols), PP_EINVAL);
    EXPECT_EQ_U64(pp_model_event_count(m), 2);
    pp_event back;
    pp_model_event(m, 1, &back);
    EXPECT(back.ts_ns == 1 && back.dur_ns == 7);
    size_t n;
    const pp_annotation *all = pp_model_annotations(m, &n);
    EXPECT(n == 1 && all[0].v.i == 42);
    pp_model_free(m);
    pp_model *empty = model_with_names(1);
    pp_model_narrow(empty);
    EXPECT_EQ_U64(pp_model_event_count(empty), 0);
    pp_model_free(empty);
}

int main(void) {
    RUN(test_narrowed_as_far_as_one_in_64_escapes);
    RUN(test_narrowed_without_escapes);
    RUN(test_wider_where_more_escape);
    RUN(test_narrowed_model_is_read_only);
    return pp_test_finish();
}
