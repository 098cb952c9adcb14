/* A recorded session survives session -> model -> .pptrace -> model ->
 * Chrome JSON -> model with every field intact: what a user records is what
 * every tool downstream sees, whichever file they pass around. */
#include <pthread.h>
#include <stdlib.h>

#include "pipeprof/io.h"
#include "testutil.h"

/* A late thread that finds the budget nearly spent and drops records. */
static void *mark_many(void *p) {
    pp_session *s = p;
    pp_track t;
    pp_track_thread(s, "late", &t);
    for (int i = 0; i < 200; i++)
        pp_mark(s, t, pp_intern("late mark"), 10 + i);
    return NULL;
}

/* Records one of everything, on several threads and tracks, with a budget
 * small enough that a second thread drops records. */
static pp_session *record_everything(void) {
    pp_session_config cfg;
    pp_session *s;
    pp_session_config_init(&cfg);
    cfg.process_name = "roundtrip";
    cfg.level = 2;
    cfg.max_records = 400;
    pp_session_open(&cfg, &s);
    pp_session_start(s);
    pp_track host, npu, gpu;
    pp_track_thread(s, "stage \"Prep\"\t\\ main", &host);
    pp_track_device(s, "NPU", 0, "req 0", PP_TRACK_SIMULATED, &npu);
    pp_track_device(s, "GPU.0", 3, NULL, 0, &gpu);
    uint64_t warm, range;
    pp_region_begin(s, pp_intern("warm up"), &warm);
    pp_span_rec r;
    pp_span_rec_init(&r);
    for (int b = 0; b < 50; b++) {
        r.track = b % 2 ? npu : gpu;
        r.name = pp_intern("infer");
        r.stage = pp_intern("Embedding");
        r.role = PP_ROLE_EXEC;
        r.ts_ns = 1700000000000000123LL + b * 1001;
        r.dur_ns = 999 + b;
        r.batch = b;
        r.hw_ns = b % 3 ? 900 : 0;
        r.xfer_ns = b % 3 ? 45 : 0;
        pp_span(s, &r);
        pp_annotate_int(s, pp_intern("slot"), -b);
        pp_annotate_double(s, pp_intern("ratio"), b / 3.0);
        pp_annotate_str(s, pp_intern("précision ✓"), pp_intern("FP16 \"q\""));
        pp_flow(s, host, pp_intern("batch"), r.ts_ns, (uint64_t)b + 1, (pp_flow_phase)(b % 3));
    }
    pp_region_end(s, warm);
    pp_range_start(s, pp_intern("request"), &range);
    pp_counter(s, host, pp_intern("queue"), 5, -0.125);
    pp_counter(s, host, pp_intern("queue"), 6, 1e300);
    pp_mark(s, host, pp_intern("tick"), 7);
    r.role = PP_ROLE_NONE;
    r.stage = 0;
    r.batch = -1;
    r.track = host;
    pp_span(s, &r);
    pthread_t th;
    pthread_create(&th, NULL, mark_many, s);
    pthread_join(th, NULL);
    pp_range_stop(s, range);
    pp_session_stop(s, NULL);
    return s;
}

static void test_session_pptrace_json_roundtrip(void) {
    pp_session *s = record_everything();
    pp_model *recorded = NULL, *from_pptrace = NULL, *from_json = NULL;
    pp_error err = {{0}};
    char why[256] = "";
    EXPECT_EQ_I64(pp_model_from_session(s, &recorded), PP_OK);
    EXPECT(pp_model_meta_get(recorded)->dropped_records > 0);
    EXPECT_EQ_U64(pp_model_thread_count(recorded), 2);
    const char *pt = pp_test_path("roundtrip.pptrace"), *js = pp_test_path("roundtrip.json");
    EXPECT_EQ_I64(pp_trace_write(recorded, pt, &err), PP_OK);
    EXPECT_EQ_I64(pp_trace_read(pt, &from_pptrace, &err), PP_OK);
    if (from_pptrace && !pp_test_models_equal(recorded, from_pptrace, why, sizeof why))
        pp_test_fail(__FILE__, __LINE__, "pptrace round trip: %s", why);
    EXPECT_EQ_I64(pp_trace_write(from_pptrace, js, &err), PP_OK);
    EXPECT_EQ_I64(pp_trace_read(js, &from_json, &err), PP_OK);
    if (from_json && !pp_test_models_equal(recorded, from_json, why, sizeof why))
        pp_test_fail(__FILE__, __LINE__, "JSON round trip: %s", why);
    if (err.msg[0])
        pp_test_fail(__FILE__, __LINE__, "unexpected error: %s", err.msg);
    pp_model_free(recorded);
    pp_model_free(from_pptrace);
    pp_model_free(from_json);
    pp_session_close(s);
}

/* stop writes the configured output; pp_session_write writes another copy
 * in another format; both hold the same model. */
static void test_stop_writes_configured_output(void) {
    const char *path = pp_test_path("stop.json"), *copy = pp_test_path("stop_copy.pptrace");
    pp_session_config cfg;
    pp_session *s;
    pp_error err = {{0}};
    pp_session_config_init(&cfg);
    cfg.output = path;
    pp_session_open(&cfg, &s);
    pp_session_start(s);
    pp_track t;
    pp_track_thread(s, "main", &t);
    pp_mark(s, t, pp_intern("only"), 42);
    EXPECT_EQ_I64(pp_session_write(s, copy, &err), PP_ESTATE); /* still recording */
    EXPECT_CONTAINS(err.msg, "still recording");
    EXPECT_EQ_I64(pp_session_stop(s, &err), PP_OK);
    EXPECT_EQ_I64(pp_session_write(s, copy, &err), PP_OK);
    pp_model *a = NULL, *b = NULL;
    char why[256];
    EXPECT_EQ_I64(pp_trace_read(path, &a, &err), PP_OK);
    EXPECT_EQ_I64(pp_trace_read(copy, &b, &err), PP_OK);
    EXPECT(a && b && pp_test_models_equal(a, b, why, sizeof why));
    EXPECT(a && pp_model_event_count(a) == 1);
    pp_model_free(a);
    pp_model_free(b);
    EXPECT_EQ_I64(pp_session_write(s, pp_test_path("stop.txt"), &err), PP_EUNSUPPORTED);
    EXPECT_CONTAINS(err.msg, "stop.txt: cannot write this format");
    pp_session_close(s);
}

/* A failed write at stop says why and leaves no file behind. */
static void test_stop_to_unwritable_path_fails_cleanly(void) {
    pp_session_config cfg;
    pp_session *s;
    pp_error err = {{0}};
    pp_session_config_init(&cfg);
    cfg.output = "/nonexistent-dir/trace.json";
    pp_session_open(&cfg, &s);
    pp_session_start(s);
    EXPECT_EQ_I64(pp_session_stop(s, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "/nonexistent-dir/trace.json");
    pp_session_close(s);
}

int main(void) {
    RUN(test_session_pptrace_json_roundtrip);
    RUN(test_stop_writes_configured_output);
    RUN(test_stop_to_unwritable_path_fails_cleanly);
    return pp_test_finish();
}
