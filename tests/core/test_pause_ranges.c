/* Pause and ranges (push/pop, pp_range_*, pp_region_*): a range begun while
 * the session records is recorded whole, its end included when that comes
 * while paused, so nesting stays what the program did; a range begun while
 * paused is not recorded, and when its end comes while recording the range
 * is counted dropped, never reported as an unmatched end or taken for an
 * outer range. Before, a pop while paused was ignored without unwinding the
 * stack, so the next pop ended the wrong range and the outer one vanished
 * uncounted; a begin while paused handed out an id whose end was then
 * reported as unmatched. */
#include "pipeprof/model.h"
#include "testutil.h"

static pp_session *started_session(void) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    cfg.process_name = "test";
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    return s;
}

/* The model of the stopped session s. */
static pp_model *stopped_model(pp_session *s) {
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    return m;
}

/* Index of the one event named `name` (-1: none; -2: more than one). */
static long event_named(const pp_model *m, const char *name) {
    long found = -1;
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        if (strcmp(pp_model_string(m, e.name), name) == 0)
            found = found == -1 ? (long)i : -2;
    }
    return found;
}

static pp_event event_at(const pp_model *m, long i) {
    pp_event e;
    memset(&e, 0, sizeof e);
    if (i >= 0)
        pp_model_event(m, (size_t)i, &e);
    return e;
}

static uint64_t session_dropped(pp_session *s) {
    pp_session_stats st;
    EXPECT_EQ_I64(pp_session_stats_get(s, &st), PP_OK);
    return st.dropped;
}

/* The sequence: push a, push b, pause, pop, resume, pop. The pop
 * while paused ends b (recorded: it began while recording), the last pop
 * ends a: both spans, b inside a, nothing dropped. */
static void test_pop_while_paused_ends_the_inner_range(void) {
    pp_session *s = started_session();
    pp_track t;
    EXPECT_EQ_I64(pp_track_thread(s, "main", &t), PP_OK);
    EXPECT_EQ_I64(pp_push(s, t, pp_intern("a")), PP_OK);
    EXPECT_EQ_I64(pp_push(s, t, pp_intern("b")), PP_OK);
    EXPECT_EQ_I64(pp_session_pause(s), PP_OK);
    EXPECT_EQ_I64(pp_pop(s), PP_OK);
    EXPECT_EQ_I64(pp_session_resume(s), PP_OK);
    EXPECT_EQ_I64(pp_pop(s), PP_OK);
    EXPECT_EQ_I64(pp_pop(s), PP_ESTATE); /* nothing open any more */
    EXPECT_EQ_U64(session_dropped(s), 0);
    pp_model *m = stopped_model(s);
    EXPECT_EQ_U64(pp_model_event_count(m), 2);
    pp_event a = event_at(m, event_named(m, "a")), b = event_at(m, event_named(m, "b"));
    EXPECT(event_named(m, "a") >= 0 && event_named(m, "b") >= 0);
    EXPECT(a.ts_ns <= b.ts_ns);
    EXPECT(b.ts_ns + b.dur_ns <= a.ts_ns + a.dur_ns);
    EXPECT_EQ_U64(pp_model_meta_get(m)->dropped_records, 0);
    pp_model_free(m);
    pp_session_close(s);
}

/* A range pushed while paused is not recorded; its pop after resume ends it
 * (not the outer range) and counts it dropped; the outer range is whole. */
static void test_push_while_paused_is_dropped_and_counted(void) {
    pp_session *s = started_session();
    pp_track t;
    EXPECT_EQ_I64(pp_track_thread(s, "main", &t), PP_OK);
    EXPECT_EQ_I64(pp_push(s, t, pp_intern("outer")), PP_OK);
    EXPECT_EQ_I64(pp_session_pause(s), PP_OK);
    EXPECT_EQ_I64(pp_push(s, t, pp_intern("begun paused")), PP_OK);
    EXPECT_EQ_I64(pp_push(s, t, pp_intern("all paused")), PP_OK);
    EXPECT_EQ_I64(pp_pop(s), PP_OK); /* wholly inside the pause: ignored, as any paused call */
    EXPECT_EQ_I64(pp_session_resume(s), PP_OK);
    EXPECT_EQ_I64(pp_pop(s), PP_OK); /* "begun paused": dropped, counted */
    EXPECT_EQ_U64(session_dropped(s), 1);
    EXPECT_EQ_I64(pp_pop(s), PP_OK); /* "outer" */
    pp_model *m = stopped_model(s);
    EXPECT_EQ_U64(pp_model_event_count(m), 1);
    EXPECT(event_named(m, "outer") >= 0);
    EXPECT_EQ_U64(pp_model_meta_get(m)->dropped_records, 1);
    pp_model_free(m);
    pp_session_close(s);
}

/* Ranges and regions by id: begun while recording and ended while paused,
 * recorded whole; begun while paused and ended while recording, counted
 * dropped and not an unmatched end. */
static void test_ranges_by_id_across_a_pause(void) {
    pp_session *s = started_session();
    uint64_t whole, region, paused_range, paused_region;
    EXPECT_EQ_I64(pp_range_start(s, pp_intern("whole"), &whole), PP_OK);
    EXPECT_EQ_I64(pp_region_begin(s, pp_intern("region"), &region), PP_OK);
    EXPECT_EQ_I64(pp_session_pause(s), PP_OK);
    EXPECT_EQ_I64(pp_range_stop(s, whole), PP_OK);
    EXPECT_EQ_I64(pp_region_end(s, region), PP_OK);
    EXPECT_EQ_I64(pp_range_start(s, pp_intern("begun paused"), &paused_range), PP_OK);
    EXPECT_EQ_I64(pp_region_begin(s, pp_intern("region begun paused"), &paused_region), PP_OK);
    EXPECT_EQ_I64(pp_session_resume(s), PP_OK);
    EXPECT_EQ_I64(pp_range_stop(s, paused_range), PP_OK);
    EXPECT_EQ_I64(pp_region_end(s, paused_region), PP_OK);
    EXPECT_EQ_U64(session_dropped(s), 2);
    pp_model *m = stopped_model(s);
    EXPECT_EQ_U64(pp_model_meta_get(m)->unmatched_ends, 0);
    EXPECT_EQ_U64(pp_model_meta_get(m)->dropped_records, 2);
    EXPECT(event_named(m, "whole") >= 0);
    EXPECT(event_named(m, "region") >= 0);
    EXPECT_EQ_I64(event_named(m, "begun paused"), -1);
    EXPECT_EQ_I64(event_named(m, "region begun paused"), -1);
    EXPECT_EQ_U64(pp_model_event_count(m), 2);
    pp_model_free(m);
    pp_session_close(s);
}

int main(void) {
    RUN(test_pop_while_paused_ends_the_inner_range);
    RUN(test_push_while_paused_is_dropped_and_counted);
    RUN(test_ranges_by_id_across_a_pause);
    return pp_test_finish();
}
