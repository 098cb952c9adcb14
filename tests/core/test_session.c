/* The recording core, seen through the model a session produces. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "pipeprof/model.h"
#include "testutil.h"

static pp_session *open_session(uint64_t max_records, pp_overflow overflow) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    cfg.max_records = max_records;
    cfg.overflow = overflow;
    cfg.process_name = "test";
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    return s;
}

static pp_model *model_of(pp_session *s) {
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    return m;
}

/* Calls out of order are refused with PP_ESTATE and change nothing. */
static void test_lifecycle_order_is_enforced(void) {
    pp_session *s = open_session(0, PP_OVERFLOW_DROP);
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_session_pause(s), PP_ESTATE);
    EXPECT_EQ_I64(pp_session_resume(s), PP_ESTATE);
    EXPECT_EQ_I64(pp_session_stop(s, &err), PP_ESTATE);
    EXPECT_CONTAINS(err.msg, "not recording");
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_ESTATE);
    EXPECT_EQ_I64(pp_session_resume(s), PP_ESTATE);
    EXPECT_EQ_I64(pp_session_pause(s), PP_OK);
    EXPECT_EQ_I64(pp_session_pause(s), PP_ESTATE);
    EXPECT_EQ_I64(pp_session_resume(s), PP_OK);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_ESTATE);
    EXPECT_EQ_I64(pp_session_start(s), PP_ESTATE);
    pp_session_close(s);
    pp_session_close(NULL);
}

/* Bad configs are refused before anything is allocated. */
static void test_open_rejects_bad_config(void) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    cfg.level = 3;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_EINVAL);
    cfg.level = -1;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_EINVAL);
    cfg.level = 1;
    cfg.overflow = (pp_overflow)7;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_EINVAL);
    EXPECT(s == NULL);
}

/* Recording before start or after stop is an error; while paused it is
 * silently ignored; a NULL session is always a no-op. */
static void test_recording_respects_state(void) {
    pp_session *s = open_session(0, PP_OVERFLOW_DROP);
    pp_track t;
    EXPECT_EQ_I64(pp_track_thread(s, "main", &t), PP_OK);
    EXPECT_EQ_I64(pp_mark(s, t, pp_intern("early"), 1), PP_ESTATE);
    pp_session_start(s);
    EXPECT_EQ_I64(pp_mark(s, t, pp_intern("kept"), 2), PP_OK);
    pp_session_pause(s);
    EXPECT_EQ_I64(pp_mark(s, t, pp_intern("paused"), 3), PP_OK);
    pp_session_resume(s);
    EXPECT_EQ_I64(pp_mark(s, t, pp_intern("kept too"), 4), PP_OK);
    pp_session_stop(s, NULL);
    EXPECT_EQ_I64(pp_mark(s, t, pp_intern("late"), 5), PP_ESTATE);
    EXPECT_EQ_I64(pp_mark(NULL, t, pp_intern("nowhere"), 6), PP_OK);
    pp_model *m = model_of(s);
    EXPECT_EQ_U64(pp_model_event_count(m), 2);
    pp_event e;
    pp_model_event(m, 0, &e);
    EXPECT_STR(pp_model_string(m, e.name), "kept");
    pp_model_event(m, 1, &e);
    EXPECT_STR(pp_model_string(m, e.name), "kept too");
    pp_model_free(m);
    pp_session_close(s);
}

/* Every field of a span, mark, counter and flow reaches the model; tracks
 * keep their kind, names, stream and simulated flag. */
static void test_every_field_reaches_the_model(void) {
    pp_session *s = open_session(0, PP_OVERFLOW_DROP);
    pp_track host, npu0, npu1, again;
    pp_session_start(s);
    EXPECT_EQ_I64(pp_track_thread(s, "stage thread", &host), PP_OK);
    EXPECT_EQ_I64(pp_track_device(s, "NPU", 0, "req 0", PP_TRACK_SIMULATED, &npu0), PP_OK);
    EXPECT_EQ_I64(pp_track_device(s, "NPU", 1, NULL, PP_TRACK_SIMULATED, &npu1), PP_OK);
    EXPECT_EQ_I64(pp_track_device(s, "NPU", 0, "ignored", PP_TRACK_SIMULATED, &again), PP_OK);
    EXPECT_EQ_I64(again, npu0);
    EXPECT_EQ_I64(pp_track_device(s, "", 0, NULL, 0, &again), PP_EINVAL);
    EXPECT_EQ_I64(pp_track_device(s, "GPU", -1, NULL, 0, &again), PP_EINVAL);

    pp_span_rec r;
    pp_span_rec_init(&r);
    EXPECT_EQ_I64(r.batch, -1);
    EXPECT_EQ_I64(r.role, PP_ROLE_USER);
    r.track = npu1;
    r.name = pp_intern("infer");
    r.stage = pp_intern("Embedding");
    r.role = PP_ROLE_EXEC;
    r.ts_ns = 1000;
    r.dur_ns = 2500;
    r.batch = 7;
    r.hw_ns = 2000;
    r.xfer_ns = 300;
    EXPECT_EQ_I64(pp_span(s, &r), PP_OK);
    EXPECT_EQ_I64(pp_annotate_int(s, pp_intern("slot"), -3), PP_OK);
    EXPECT_EQ_I64(pp_annotate_double(s, pp_intern("ratio"), 0.25), PP_OK);
    EXPECT_EQ_I64(pp_annotate_str(s, pp_intern("precision"), pp_intern("FP16")), PP_OK);
    r.dur_ns = -1;
    EXPECT_EQ_I64(pp_span(s, &r), PP_EINVAL);
    r.ts_ns = INT64_MAX - 5;
    r.dur_ns = 6; /* ends past the largest time */
    EXPECT_EQ_I64(pp_span(s, &r), PP_EINVAL);
    EXPECT_EQ_I64(pp_counter(s, host, pp_intern("queue depth"), 4000, 2.5), PP_OK);
    EXPECT_EQ_I64(pp_flow(s, host, pp_intern("batch"), 5000, 8, PP_FLOW_STEP), PP_OK);
    EXPECT_EQ_I64(pp_flow(s, host, pp_intern("batch"), 5000, 8, (pp_flow_phase)9), PP_EINVAL);
    EXPECT_EQ_I64(pp_mark(s, host, pp_intern("tick"), 6000), PP_OK);
    pp_session_stop(s, NULL);

    pp_model *m = model_of(s);
    EXPECT_EQ_U64(pp_model_event_count(m), 4);
    pp_event e;
    pp_model_event(m, 0, &e);
    EXPECT_EQ_I64(e.kind, PP_EV_SPAN);
    EXPECT_EQ_I64(e.ts_ns, 1000);
    EXPECT_EQ_I64(e.dur_ns, 2500);
    EXPECT_EQ_I64(e.batch, 7);
    EXPECT_EQ_U64(e.hw_ns, 2000);
    EXPECT_EQ_U64(e.xfer_ns, 300);
    EXPECT_EQ_I64(e.role, PP_ROLE_EXEC);
    EXPECT_STR(pp_model_string(m, e.name), "infer");
    EXPECT_STR(pp_model_string(m, e.stage), "Embedding");
    const pp_track_info *ti = pp_model_track(m, e.track);
    EXPECT_EQ_I64(ti->kind, PP_TRACK_KIND_DEVICE);
    EXPECT_STR(pp_model_string(m, ti->device), "NPU");
    EXPECT_STR(pp_model_string(m, ti->process), "NPU");
    EXPECT_STR(pp_model_string(m, ti->name), "stream 1");
    EXPECT_EQ_I64(ti->stream, 1);
    EXPECT_EQ_U64(ti->flags, PP_TRACK_SIMULATED);

    size_t first, n;
    pp_model_annotations_of(m, 0, &first, &n);
    EXPECT_EQ_U64(n, 3);
    size_t total;
    const pp_annotation *a = pp_model_annotations(m, &total);
    EXPECT_EQ_U64(total, 3);
    EXPECT_STR(pp_model_string(m, a[first].key), "slot");
    EXPECT_EQ_I64(a[first].v.i, -3);
    EXPECT_NEAR(a[first + 1].v.d, 0.25, 0);
    EXPECT_EQ_I64(a[first + 2].type, PP_VALUE_STR);
    EXPECT_STR(pp_model_string(m, a[first + 2].v.s), "FP16");

    pp_model_event(m, 1, &e);
    EXPECT_EQ_I64(e.kind, PP_EV_COUNTER);
    EXPECT_NEAR(e.value, 2.5, 0);
    ti = pp_model_track(m, e.track);
    EXPECT_EQ_I64(ti->kind, PP_TRACK_KIND_THREAD);
    EXPECT_STR(pp_model_string(m, ti->name), "stage thread");
    EXPECT_STR(pp_model_string(m, ti->process), "test");
    pp_model_event(m, 2, &e);
    EXPECT_EQ_I64(e.kind, PP_EV_FLOW);
    EXPECT_EQ_U64(e.id, 8);
    EXPECT_EQ_I64(e.phase, PP_FLOW_STEP);
    pp_model_event(m, 3, &e);
    EXPECT_EQ_I64(e.kind, PP_EV_INSTANT);
    EXPECT_STR(pp_model_string(m, pp_model_meta_get(m)->process_name), "test");
    EXPECT_EQ_I64(pp_model_meta_get(m)->level, 1);
    pp_model_free(m);
    pp_session_close(s);
}

/* push/pop nest on the calling thread; a pop with nothing open is refused. */
static void test_push_pop_nest(void) {
    pp_session *s = open_session(0, PP_OVERFLOW_DROP);
    pp_track t;
    pp_session_start(s);
    pp_track_thread(s, NULL, &t);
    EXPECT_EQ_I64(pp_pop(s), PP_ESTATE);
    EXPECT_EQ_I64(pp_push(s, t, pp_intern("outer")), PP_OK);
    EXPECT_EQ_I64(pp_push(s, t, pp_intern("inner")), PP_OK);
    EXPECT_EQ_I64(pp_pop(s), PP_OK);
    EXPECT_EQ_I64(pp_pop(s), PP_OK);
    for (int i = 0; i < 64; i++)
        pp_push(s, t, pp_intern("deep"));
    EXPECT_EQ_I64(pp_push(s, t, pp_intern("too deep")), PP_EFULL);
    pp_session_stop(s, NULL);
    pp_model *m = model_of(s);
    EXPECT_EQ_U64(pp_model_event_count(m), 2);
    pp_event inner, outer;
    pp_model_event(m, 0, &outer);
    pp_model_event(m, 1, &inner);
    EXPECT_STR(pp_model_string(m, outer.name), "outer");
    EXPECT_STR(pp_model_string(m, inner.name), "inner");
    EXPECT(outer.ts_ns <= inner.ts_ns);
    EXPECT(inner.ts_ns + inner.dur_ns <= outer.ts_ns + outer.dur_ns);
    EXPECT_EQ_U64(pp_model_meta_get(m)->dropped_records, 1);
    pp_model_free(m);
    pp_session_close(s);
}

typedef struct {
    pp_session *s;
    uint64_t id;
} range_arg;

static void *stop_range(void *p) {
    range_arg *a = p;
    EXPECT_EQ_I64(pp_range_stop(a->s, a->id), PP_OK);
    return NULL;
}

/* A range started on one thread and stopped on another becomes one span on
 * an async track; overlapping ranges get different tracks; regions go to the
 * regions track; a range never stopped is counted, not invented. */
static void test_ranges_cross_threads(void) {
    pp_session *s = open_session(0, PP_OVERFLOW_DROP);
    pp_session_start(s);
    range_arg a = {.s = s}, b = {.s = s};
    uint64_t never, region;
    EXPECT_EQ_I64(pp_region_begin(s, pp_intern("warm up"), &region), PP_OK);
    EXPECT_EQ_I64(pp_range_start(s, pp_intern("request A"), &a.id), PP_OK);
    EXPECT_EQ_I64(pp_range_start(s, pp_intern("request B"), &b.id), PP_OK);
    EXPECT_EQ_I64(pp_range_start(s, pp_intern("lost"), &never), PP_OK);
    EXPECT(a.id != b.id && a.id != 0);
    pthread_t th;
    pthread_create(&th, NULL, stop_range, &a);
    pthread_join(th, NULL);
    pthread_create(&th, NULL, stop_range, &b);
    pthread_join(th, NULL);
    EXPECT_EQ_I64(pp_region_end(s, region), PP_OK);
    pp_session_stop(s, NULL);
    pp_model *m = model_of(s);
    EXPECT_EQ_U64(pp_model_event_count(m), 3);
    uint32_t tracks[3];
    int kinds[3];
    for (int i = 0; i < 3; i++) {
        pp_event e;
        pp_model_event(m, (size_t)i, &e);
        tracks[i] = e.track;
        kinds[i] = e.kind;
        EXPECT(e.dur_ns >= 0);
    }
    EXPECT_EQ_I64(kinds[0], PP_EV_REGION);
    EXPECT_EQ_I64(pp_model_track(m, tracks[0])->kind, PP_TRACK_KIND_REGIONS);
    EXPECT_EQ_I64(kinds[1], PP_EV_RANGE);
    EXPECT_EQ_I64(kinds[2], PP_EV_RANGE);
    EXPECT_EQ_I64(pp_model_track(m, tracks[1])->kind, PP_TRACK_KIND_ASYNC);
    EXPECT(tracks[1] != tracks[2]); /* A and B overlap */
    EXPECT_EQ_U64(pp_model_meta_get(m)->unmatched_ends, 1);
    pp_model_free(m);
    pp_session_close(s);
}

/* Under the ring policy the newest records survive and the overwritten ones
 * are counted as dropped. */
static void test_ring_keeps_newest(void) {
    pp_session *s = open_session(256, PP_OVERFLOW_RING);
    pp_track t;
    pp_session_start(s);
    pp_track_thread(s, "main", &t);
    for (int i = 0; i < 1000; i++)
        EXPECT_EQ_I64(pp_mark(s, t, pp_intern("m"), i), PP_OK);
    pp_session_stop(s, NULL);
    pp_session_stats st;
    pp_session_stats_get(s, &st);
    EXPECT_EQ_U64(st.recorded + st.dropped, 1000);
    EXPECT(st.recorded <= 256 && st.recorded >= 256 - 64);
    pp_model *m = model_of(s);
    pp_event last;
    pp_model_event(m, pp_model_event_count(m) - 1, &last);
    EXPECT_EQ_I64(last.ts_ns, 999);
    pp_event first;
    pp_model_event(m, 0, &first);
    EXPECT_EQ_I64(first.ts_ns, (int64_t)st.dropped);
    pp_model_free(m);
    pp_session_close(s);
}

/* Interned ids are stable and shared: the same text gives the same id. */
static void test_intern_is_stable(void) {
    pp_str a = pp_intern("GraphPrep");
    EXPECT(a != 0);
    EXPECT_EQ_U64(pp_intern("GraphPrep"), a);
    EXPECT_EQ_U64(pp_intern(""), 0);
    EXPECT_EQ_U64(pp_intern(NULL), 0);
    EXPECT_STR(pp_str_text(a), "GraphPrep");
    EXPECT_STR(pp_str_text(0), "");
    EXPECT_STR(pp_str_text(0xFFFFFFu), "");
}

/* pp_strerror names every status. */
static void test_strerror_names_codes(void) {
    EXPECT_STR(pp_strerror(PP_OK), "success");
    EXPECT_CONTAINS(pp_strerror(PP_EFULL), "dropped");
    EXPECT_CONTAINS(pp_strerror(PP_ESTATE), "out of order");
    EXPECT_STR(pp_strerror(-999), "unknown error");
}

/* A tool that learns of a thread's work on another thread (CUPTI's API
 * records) finds that thread's own track by its id; an unseen thread gets
 * a track of its own, named by its id unless a name is given. */
static void test_thread_track_by_id(void) {
    pp_session *s = open_session(0, PP_OVERFLOW_DROP);
    pp_track mine, by_id, other, named;
    EXPECT_EQ_I64(pp_track_thread(s, "main", &mine), PP_OK);
    EXPECT_EQ_I64(pp_track_thread_id(s, gettid(), NULL, &by_id), PP_OK);
    EXPECT_EQ_U64(by_id, mine);
    EXPECT_EQ_I64(pp_track_thread_id(s, 999999, NULL, &other), PP_OK);
    EXPECT(other != mine);
    EXPECT_EQ_I64(pp_track_thread_id(s, 999998, "worker", &named), PP_OK);
    EXPECT_EQ_I64(pp_track_thread_id(NULL, 1, NULL, &named), PP_EINVAL);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    EXPECT_EQ_I64(pp_mark(s, other, pp_intern("seen"), pp_now()), PP_OK);
    EXPECT_EQ_I64(pp_mark(s, named, pp_intern("seen"), pp_now()), PP_OK);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_model *m = model_of(s);
    const pp_track_info *t = pp_model_track(m, other);
    EXPECT_STR(pp_model_string(m, t->name), "thread 999999");
    EXPECT_EQ_I64(t->tid, 999999);
    EXPECT_STR(pp_model_string(m, pp_model_track(m, named)->name), "worker");
    pp_model_free(m);
    pp_session_close(s);
}

int main(void) {
    RUN(test_lifecycle_order_is_enforced);
    RUN(test_open_rejects_bad_config);
    RUN(test_recording_respects_state);
    RUN(test_every_field_reaches_the_model);
    RUN(test_push_pop_nest);
    RUN(test_ranges_cross_threads);
    RUN(test_ring_keeps_newest);
    RUN(test_intern_is_stable);
    RUN(test_strerror_names_codes);
    RUN(test_thread_track_by_id);
    return pp_test_finish();
}
