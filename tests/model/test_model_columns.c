/* The model's event columns as they grow (src/model/column_mem.h) and as
 * a reader fills them a block at a time (src/model/event_slots.h): values
 * survive growth from heap to mapped pages, and the sparse columns (stage,
 * phase, hw_ns, xfer_ns, id, value), written only where a value is nonzero,
 * still read zero wherever an event's value is zero, whatever the slot
 * held before (a cleared model, a refused block); values too wide for the
 * 32-bit columns (model/columns.h) read back whole. */
#include <math.h>

#include "model/ann_table.h"
#include "model/event_slots.h"
#include "pipeprof/model.h"
#include "testutil.h"

static pp_model *model_with_track(void) {
    pp_model *m = NULL;
    pp_track_info t;
    pp_track_info_init(&t);
    uint32_t name;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    EXPECT_EQ_I64(pp_model_intern(m, "span", 4, &name), PP_OK);
    EXPECT_EQ_I64(pp_model_add_track(m, &t, NULL), PP_OK);
    return m;
}

/* Event i of the growth test: every field a function of i, the sparse ones
 * nonzero on every third event only, and on every 1000th event a start 10
 * s from its neighbours' and a duration, batch, hw and xfer too wide for
 * the model's 32-bit slots (model/columns.h). */
static void nth_event(size_t i, pp_event *e) {
    int wide = i % 1000 == 999;
    pp_event_init(e);
    e->ts_ns = (int64_t)i * 10 + (wide ? (int64_t)10000000000 : 0);
    e->dur_ns = wide ? ((int64_t)1 << 40) + (int64_t)i : (int64_t)(i % 7);
    e->batch = wide ? -((int64_t)1 << 35) - (int64_t)i : (int64_t)i / 10;
    e->hw_ns = wide ? UINT64_MAX - i : i % 3 == 0 ? i + 1 : 0;
    e->xfer_ns = wide ? (uint64_t)UINT32_MAX + i : i % 3 == 0 ? i + 2 : 0;
    e->id = i % 3 == 0 ? i + 3 : 0;
    e->value = i % 3 == 0 ? (double)i + 0.5 : 0.0;
    e->name = 1;
    e->kind = PP_EV_SPAN;
    e->role = (uint8_t)(i % 5);
}

/* 1.1M events take the columns past 1 MiB, where they move from the heap
 * to mapped pages, and then through more doublings of those pages: every
 * field of every event reads back as appended, the 1100 wide values too,
 * through pp_model_event and through pp_model_columns' 64-bit copies. */
static void test_columns_keep_every_value_as_they_grow(void) {
    pp_model *m = model_with_track();
    const size_t n = 1100000;
    pp_event e, back;
    for (size_t i = 0; i < n; i++) {
        nth_event(i, &e);
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    }
    EXPECT_EQ_U64(pp_model_event_count(m), n);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        nth_event(i, &e);
        pp_model_event(m, i, &back);
        wrong += back.ts_ns != e.ts_ns || back.dur_ns != e.dur_ns || back.batch != e.batch ||
                 back.hw_ns != e.hw_ns || back.xfer_ns != e.xfer_ns || back.id != e.id ||
                 back.value != e.value || back.name != e.name || back.role != e.role;
    }
    EXPECT_EQ_U64(wrong, 0);
    pp_event_columns c;
    EXPECT_EQ_I64(pp_model_columns(m, &c), PP_OK);
    EXPECT_EQ_U64(c.count, n);
    for (size_t i = 0; i < n; i++) {
        nth_event(i, &e);
        wrong += c.ts_ns[i] != e.ts_ns || c.dur_ns[i] != e.dur_ns || c.batch[i] != e.batch ||
                 c.hw_ns[i] != e.hw_ns || c.xfer_ns[i] != e.xfer_ns || c.id[i] != e.id;
    }
    EXPECT_EQ_U64(wrong, 0);
    pp_model_free(m);
}

/* pp_model_columns' 64-bit copies follow the model: after an event is
 * appended (and after a sort moves a wide value), a second call shows it. */
static void test_columns_view_follows_changes(void) {
    pp_model *m = model_with_track();
    pp_event e;
    pp_event_init(&e);
    e.name = 1, e.ts_ns = 50, e.dur_ns = 3;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_event_columns c;
    EXPECT_EQ_I64(pp_model_columns(m, &c), PP_OK);
    EXPECT_EQ_U64(c.count, 1);
    EXPECT_EQ_I64(c.dur_ns[0], 3);
    e.ts_ns = 10, e.dur_ns = (int64_t)1 << 33, e.batch = (int64_t)1 << 40;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    EXPECT_EQ_I64(pp_model_sort_by_time(m), PP_OK);
    EXPECT_EQ_I64(pp_model_columns(m, &c), PP_OK);
    EXPECT_EQ_U64(c.count, 2);
    EXPECT_EQ_I64(c.ts_ns[0], 10);
    EXPECT_EQ_I64(c.dur_ns[0], (int64_t)1 << 33);
    EXPECT_EQ_I64(c.batch[0], (int64_t)1 << 40);
    EXPECT_EQ_I64(c.dur_ns[1], 3);
    EXPECT_EQ_I64(c.batch[1], -1);
    pp_model_free(m);
}

/* Appends n events with a name and nothing else: every sparse field 0. */
static void append_plain(pp_model *m, int n) {
    for (int i = 0; i < n; i++) {
        pp_event e;
        pp_event_init(&e);
        e.name = 1;
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    }
}

/* pp_model_annotations' 24-byte copy follows the model: an annotation
 * appended after a first call, and a key, type and value of every kind,
 * read back as appended. */
static void test_annotations_view_follows_changes(void) {
    pp_model *m = model_with_track();
    append_plain(m, 2);
    pp_annotation a = {.event = 0, .key = 1, .type = PP_VALUE_DOUBLE, .v.d = -0.25};
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    size_t n;
    const pp_annotation *got = pp_model_annotations(m, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT(got && got[0].v.d == -0.25 && got[0].type == PP_VALUE_DOUBLE);
    a = (pp_annotation){.event = 1, .key = 1, .type = PP_VALUE_INT, .v.i = INT64_MIN};
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    a = (pp_annotation){.event = 1, .key = 1, .type = PP_VALUE_STR, .v.s = 1};
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    a.type = 3; /* no such type: refused, as before the packing */
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_EINVAL);
    got = pp_model_annotations(m, &n);
    EXPECT_EQ_U64(n, 3);
    EXPECT(got && got[1].event == 1 && got[1].key == 1 && got[1].v.i == INT64_MIN);
    EXPECT(got && got[2].type == PP_VALUE_STR && got[2].v.s == 1);
    pp_model_free(m);
}

/* Events [from, to) read zero in every sparse column. */
static void expect_sparse_zero(const pp_model *m, size_t from, size_t to) {
    for (size_t i = from; i < to; i++) {
        pp_event back;
        pp_model_event(m, i, &back);
        EXPECT_EQ_U64(back.hw_ns + back.xfer_ns + back.id + back.stage + back.phase, 0);
        EXPECT(back.value == 0.0 && !signbit(back.value));
    }
}

/* A model reused after pp_model_clear_events: an event without stage, phase,
 * hw, xfer, id or value reads 0 there although the cleared event in its
 * slot had them. */
static void test_sparse_fields_read_zero_after_clear(void) {
    pp_model *m = model_with_track();
    pp_event e, back;
    pp_event_init(&e);
    e.name = 1;
    e.hw_ns = 5, e.xfer_ns = 6, e.id = 7, e.value = -0.0; /* -0.0: bits not all zero */
    e.stage = 1, e.kind = PP_EV_FLOW, e.phase = PP_FLOW_END;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_model_event(m, 0, &back);
    EXPECT(back.value == 0.0 && signbit(back.value));
    pp_model_clear_events(m);
    pp_event_init(&e);
    e.name = 1;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_model_event(m, 0, &back);
    EXPECT_EQ_U64(back.hw_ns, 0);
    EXPECT_EQ_U64(back.xfer_ns, 0);
    EXPECT_EQ_U64(back.id, 0);
    EXPECT_EQ_U64(back.stage, 0);
    EXPECT_EQ_U64(back.phase, 0);
    EXPECT(back.value == 0.0 && !signbit(back.value));
    pp_model_free(m);
}

/* A block of three where the second event's track does not exist: the
 * commit appends the first only, and the slots it did not append read zero
 * in the sparse columns when events are appended there later. */
static void test_commit_stops_at_the_first_refused_event(void) {
    pp_model *m = model_with_track();
    pp_event_slots s;
    EXPECT_EQ_I64(pp_model_events_reserve(m, 3, &s), PP_OK);
    for (size_t i = 0; i < 3; i++) {
        pp_event e;
        pp_event_init(&e);
        e.ts_ns = (int64_t)i, e.dur_ns = 1;
        e.hw_ns = i == 2 ? UINT64_MAX : 10 + i; /* event 2's too wide for its slot */
        e.xfer_ns = 20 + i, e.id = 30 + i, e.value = 1.5;
        e.name = 1, e.stage = 1, e.track = i == 1 ? 9 : 0;
        e.kind = PP_EV_FLOW, e.role = PP_ROLE_USER, e.phase = PP_FLOW_END;
        EXPECT_EQ_I64(pp_event_slots_put(&s, i, &e), 0);
    }
    pp_event e, back;
    EXPECT_EQ_U64(pp_model_events_commit(m, 3, &e), 1);
    EXPECT_EQ_U64(pp_model_event_count(m), 1);
    EXPECT_EQ_U64(e.track, 9); /* the refused one, whole, for the reader's message */
    EXPECT_EQ_U64(e.stage, 1);
    EXPECT_EQ_U64(e.hw_ns, 11);
    pp_model_event(m, 0, &back);
    EXPECT_EQ_U64(back.hw_ns, 10);
    EXPECT(back.value == 1.5);
    append_plain(m, 2); /* event 2 among them: its wide hw went with the refusal */
    expect_sparse_zero(m, 1, 3);
    pp_model_free(m);
}

/* Slots a reader wrote and then did not commit (the .pptrace reader's
 * workers decoded blocks past where a shrinking file was cut): once
 * unreserved, events appended there read zero in the sparse columns. */
static void test_unreserved_slots_read_zero(void) {
    pp_model *m = model_with_track();
    pp_event_slots s;
    EXPECT_EQ_I64(pp_model_events_reserve(m, 4, &s), PP_OK);
    pp_event_slots later;
    pp_event_slots_at(&s, 2, &later);
    for (size_t i = 0; i < 2; i++) { /* a block decoded ahead into slots 2 and 3 */
        pp_event e;
        pp_event_init(&e);
        e.hw_ns = i ? UINT64_MAX : 7, e.xfer_ns = 8, e.id = 9, e.value = 2.5;
        e.stage = 1, e.phase = PP_FLOW_END;
        EXPECT_EQ_I64(pp_event_slots_put(&later, i, &e), 0);
    }
    pp_model_events_unreserve(m, 4);
    append_plain(m, 4);
    expect_sparse_zero(m, 0, 4);
    pp_model_free(m);
}

/* Annotations appended as a block: those before an out-of-order one are
 * appended, it and those after it are not. */
static void test_annotation_commit_stops_at_the_first_refused(void) {
    pp_model *m = model_with_track();
    append_plain(m, 3);
    pp_ann *a;
    EXPECT_EQ_I64(pp_model_annotations_reserve(m, 3, &a), PP_OK);
    const pp_annotation wide[3] = {{.event = 1, .key = 1, .type = PP_VALUE_INT, .v.i = 4},
                                   {.event = 0, .key = 1, .type = PP_VALUE_INT, .v.i = 5},
                                   {.event = 2, .key = 1, .type = PP_VALUE_INT, .v.i = 6}};
    for (int k = 0; k < 3; k++)
        EXPECT(pp_ann_pack(&wide[k], &a[k]));
    EXPECT_EQ_U64(pp_model_annotations_commit(m, 3), 1);
    size_t n;
    const pp_annotation *got = pp_model_annotations(m, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_EQ_I64(got[0].v.i, 4);
    pp_model_free(m);
}

/* A model of `n` plain events whose event i has annotation key 2 + i % 3
 * (interned "a", "b", "c") with value i; its keys in keys[3]. */
static pp_model *annotated(size_t n, uint32_t keys[3]) {
    pp_model *m = model_with_track();
    append_plain(m, (int)n);
    for (int k = 0; k < 3; k++)
        EXPECT_EQ_I64(pp_model_intern(m, (const char[]){(char)('a' + k), 0}, 1, &keys[k]), PP_OK);
    for (size_t i = 0; i < n; i++) {
        pp_annotation a = {.event = i, .key = keys[i % 3], .type = PP_VALUE_INT, .v.i = (int64_t)i};
        EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    }
    return m;
}

/* The annotations of key keys[k] read back in order, values k, k + 3, ... */
static void expect_only_key(const pp_model *m, size_t n, const uint32_t keys[3], size_t k) {
    size_t got;
    const pp_ann *a = pp_model_anns(m, &got);
    EXPECT_EQ_U64(got, (n - k + 2) / 3);
    for (size_t j = 0; j < got; j++)
        EXPECT(a[j].event == k + 3 * j && pp_ann_key(&a[j]) == keys[k] &&
               a[j].v.i == (int64_t)(k + 3 * j));
}

/* pp_model_anns_drop and pp_model_anns_keep keep the annotations of the
 * keys they are told to, in order, from a table of mapped pages (300000
 * annotations, 4.8 MB) into mapped pages and into the heap, and from the
 * heap; a key 0 names none; the model takes annotations after them, and
 * keeping none empties the table. */
static void test_annotations_keep_one_key(void) {
    uint32_t keys[3];
    const size_t sizes[] = {300000, 90000, 300}; /* mapped to mapped, to the heap; heap */
    for (size_t s = 0; s < 3; s++) {
        size_t n = sizes[s];
        pp_model *m = annotated(n, keys);
        const uint32_t drop[] = {keys[0], 0, keys[2]}, none = 0;
        pp_model_anns_drop(m, drop, 3);
        expect_only_key(m, n, keys, 1);
        pp_model_anns_keep(m, &keys[1], 1); /* every one kept: the same */
        expect_only_key(m, n, keys, 1);
        pp_model_anns_drop(m, &none, 1);
        expect_only_key(m, n, keys, 1);
        pp_annotation more = {.event = n - 1, .key = keys[0], .type = PP_VALUE_INT, .v.i = -1};
        EXPECT_EQ_I64(pp_model_add_annotation(m, &more), PP_OK);
        size_t got;
        const pp_annotation *all = pp_model_annotations(m, &got);
        EXPECT(all && got == (n + 1) / 3 + 1 && all[got - 1].v.i == -1);
        pp_model_anns_keep(m, NULL, 0);
        pp_model_anns(m, &got);
        EXPECT_EQ_U64(got, 0);
        pp_model_free(m);
    }
}

int main(void) {
    RUN(test_columns_keep_every_value_as_they_grow);
    RUN(test_columns_view_follows_changes);
    RUN(test_annotations_view_follows_changes);
    RUN(test_sparse_fields_read_zero_after_clear);
    RUN(test_commit_stops_at_the_first_refused_event);
    RUN(test_unreserved_slots_read_zero);
    RUN(test_annotation_commit_stops_at_the_first_refused);
    RUN(test_annotations_keep_one_key);
    return pp_test_finish();
}
