/* The trace model: what it accepts, what it refuses, and that sorting keeps
 * every event's annotations with it. */
#include <stdlib.h>

#include "pipeprof/model.h"
#include "testutil.h"

static uint32_t str(pp_model *m, const char *text) {
    uint32_t id = 0;
    EXPECT_EQ_I64(pp_model_intern(m, text, strlen(text), &id), PP_OK);
    return id;
}

/* Same text, same id; id 0 is the empty string; unknown ids read as "". */
static void test_strings_are_interned(void) {
    pp_model *m;
    pp_model_create(&m);
    uint32_t a = str(m, "GPU.0"), b = str(m, "NPU");
    EXPECT(a != 0 && b != 0 && a != b);
    EXPECT_EQ_U64(str(m, "GPU.0"), a);
    EXPECT_EQ_U64(str(m, ""), 0);
    EXPECT_EQ_U64(pp_model_find_string(m, "NPU"), b);
    EXPECT_EQ_U64(pp_model_find_string(m, "absent"), 0);
    EXPECT_STR(pp_model_string(m, a), "GPU.0");
    EXPECT_STR(pp_model_string(m, 9999), "");
    uint32_t id;
    EXPECT_EQ_I64(pp_model_intern(m, "a\0b", 3, &id), PP_EINVAL);
    /* many strings force the table to grow; every id keeps its text */
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "name %d", i);
        str(m, buf);
    }
    EXPECT_EQ_U64(pp_model_string_count(m), 5000 + 3);
    EXPECT_STR(pp_model_string(m, pp_model_find_string(m, "name 4321")), "name 4321");
    pp_model_free(m);
    pp_model_free(NULL);
}

/* Events that point at missing tracks or strings, or have a negative
 * duration, are refused: a reader can rely on the model being consistent. */
static void test_inconsistent_events_are_refused(void) {
    pp_model *m;
    pp_model_create(&m);
    pp_track_info t;
    pp_track_info_init(&t);
    EXPECT_EQ_I64(t.stream, -1);
    t.name = 42;
    EXPECT_EQ_I64(pp_model_add_track(m, &t, NULL), PP_EINVAL);
    t.name = str(m, "main");
    uint32_t ti = 99;
    EXPECT_EQ_I64(pp_model_add_track(m, &t, &ti), PP_OK);
    EXPECT_EQ_U64(ti, 0);
    pp_event e;
    pp_event_init(&e);
    EXPECT_EQ_I64(e.batch, -1);
    e.track = 1;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_EINVAL);
    e.track = 0;
    e.dur_ns = -1;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_EINVAL);
    e.ts_ns = INT64_MAX - 10;
    e.dur_ns = 11; /* would end past INT64_MAX */
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_EINVAL);
    e.ts_ns = 0;
    e.dur_ns = 0;
    e.kind = 6;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_EINVAL);
    e.kind = PP_EV_SPAN;
    e.stage = 77;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_EINVAL);
    e.stage = 0;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_annotation a = {.event = 1, .key = t.name};
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_EINVAL); /* no event 1 */
    a.event = 0;
    a.type = PP_VALUE_STR;
    a.v.s = 500;
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_EINVAL); /* no string 500 */
    EXPECT_EQ_U64(pp_model_event_count(m), 1);
    pp_model_free(m);
}

/* Sorting by time is stable and carries annotations to the new positions. */
static void test_sort_carries_annotations(void) {
    pp_model *m;
    pp_model_create(&m);
    pp_track_info t;
    pp_track_info_init(&t);
    t.name = str(m, "main");
    pp_model_add_track(m, &t, NULL);
    int64_t ts[] = {30, 10, 20, 10};
    uint32_t key = str(m, "order");
    for (int i = 0; i < 4; i++) {
        pp_event e;
        pp_event_init(&e);
        e.ts_ns = ts[i];
        e.batch = i;
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
        pp_annotation a = {.event = (uint64_t)i, .key = key, .type = PP_VALUE_INT, .v.i = i};
        EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
        a.v.i = 100 + i;
        EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    }
    EXPECT_EQ_I64(pp_model_sort_by_time(m), PP_OK);
    int64_t want_batch[] = {1, 3, 2, 0}; /* ts 10 (first), 10 (second), 20, 30 */
    for (size_t i = 0; i < 4; i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        EXPECT_EQ_I64(e.batch, want_batch[i]);
        size_t first, n, total;
        pp_model_annotations_of(m, i, &first, &n);
        const pp_annotation *anns = pp_model_annotations(m, &total);
        EXPECT_EQ_U64(n, 2);
        EXPECT_EQ_I64(anns[first].v.i, want_batch[i]);
        EXPECT_EQ_I64(anns[first + 1].v.i, 100 + want_batch[i]);
    }
    pp_event_columns c;
    pp_model_columns(m, &c);
    EXPECT_EQ_U64(c.count, 4);
    EXPECT_EQ_I64(c.ts_ns[3], 30);
    pp_model_free(m);
}

int main(void) {
    RUN(test_strings_are_interned);
    RUN(test_inconsistent_events_are_refused);
    RUN(test_sort_carries_annotations);
    return pp_test_finish();
}
