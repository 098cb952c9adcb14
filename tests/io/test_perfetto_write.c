/* The Perfetto writer follows docs/format-perfetto.md: every track, span,
 * instant, flow step, counter sample, annotation and the metadata (drops
 * included) of a model is in the .pftrace with its exact nanoseconds, as
 * decoded by the Python protobuf package against tests/io/perfetto_subset.proto
 * (tests/io/perfetto_check.py), which also compares the whole file with the
 * Chrome JSON of the same model. A write that fails leaves no file. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/builder.h"
#include "pipeprof/io.h"
#include "pipeprof/trace.h"
#include "testutil.h"

/* Runs tests/io/perfetto_check.py on `pftrace` (against `json` when given),
 * returns its output (caller frees); a failed check is a test failure, a
 * missing protobuf package skips the test. */
static char *check(const char *pftrace, const char *json, int dump) {
    const char *py = getenv("PP_PYTHON"), *src = getenv("PP_SOURCE_DIR");
    char cmd[8192], *out = NULL;
    if (!py || !*py || !src)
        pp_test_skip("PP_PYTHON or PP_SOURCE_DIR is not set (run through ctest)");
    snprintf(cmd, sizeof cmd, "'%s' '%s/tests/io/perfetto_check.py' '%s' %s%s%s %s", py, src,
             pftrace, json ? "'" : "", json ? json : "", json ? "'" : "", dump ? "--dump" : "");
    int rc = pp_test_run(cmd, &out);
    if (rc == 77) { /* a failure before the skip still fails the test */
        fprintf(stderr, "%s", out ? out : "");
        if (pp_test_failures)
            exit(pp_test_finish());
        pp_test_skip("perfetto_check.py needs the protobuf and grpcio-tools packages");
    }
    if (rc != 0)
        pp_test_fail(__FILE__, __LINE__, "perfetto_check.py %s: exit %d:\n%s", pftrace, rc,
                     out ? out : "");
    return out;
}

/* Writes `m` as NAME.pftrace and NAME.json, checks the one against the other
 * and returns the dump of the .pftrace (caller frees). */
static char *write_and_check(const pp_model *m, const char *name) {
    char pf[1024], js[1024];
    pp_error err = {{0}};
    snprintf(pf, sizeof pf, "%s.pftrace", pp_test_path(name));
    snprintf(js, sizeof js, "%s.json", pp_test_path(name));
    EXPECT_EQ_I64(pp_perfetto_write(m, pf, &err), PP_OK);
    EXPECT_EQ_I64(pp_chrome_write(m, js, &err), PP_OK);
    return check(pf, js, 1);
}

static void add(pp_model *m, const pp_event *e) {
    EXPECT_EQ_I64(pp_model_add_event(m, e), PP_OK);
}

static void annotate(pp_model *m, const char *key, pp_value_type type, int64_t i, double d,
                     const char *s) {
    pp_annotation a = {.event = pp_model_event_count(m) - 1, .key = b_str(m, key),
                       .type = (uint8_t)type};
    if (type == PP_VALUE_INT)
        a.v.i = i;
    else if (type == PP_VALUE_DOUBLE)
        a.v.d = d;
    else
        a.v.s = b_str(m, s);
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
}

static void point(pp_model *m, pp_event_kind kind, uint32_t track, const char *name, int64_t ts,
                  uint64_t id, int phase, double value) {
    pp_event e;
    pp_event_init(&e);
    e.kind = (uint8_t)kind, e.track = track, e.name = b_str(m, name), e.ts_ns = ts;
    e.id = id, e.phase = (uint8_t)phase, e.value = value;
    add(m, &e);
}

/* Tracks: GPU.0 streams 0 and 1, NPU stream 0 (simulated), host threads
 * "prep" and "cls" (process "host"), the regions and an async track of
 * "host"; events of every kind, added out of time order, a parent recorded
 * after the child that starts with it, and annotations of every type. */
static pp_model *pipeline_model(void) {
    pp_model *m = b_model();
    uint32_t gpu0 = b_device(m, "GPU.0", 0, 0), gpu1 = b_device(m, "GPU.0", 1, 0);
    uint32_t npu = b_device(m, "NPU", 0, 1);
    uint32_t prep = b_thread(m, "prep"), cls = b_thread(m, "cls");
    pp_track_info t;
    pp_track_info_init(&t);
    t.kind = PP_TRACK_KIND_REGIONS, t.process = b_str(m, "host"), t.name = b_str(m, "regions");
    uint32_t regions = 0, async = 0;
    EXPECT_EQ_I64(pp_model_add_track(m, &t, &regions), PP_OK);
    t.kind = PP_TRACK_KIND_ASYNC, t.name = b_str(m, "requests");
    EXPECT_EQ_I64(pp_model_add_track(m, &t, &async), PP_OK);

    b_region(m, regions, "warm up", 0, 1000);
    b_exec(m, npu, "Embedding", 3, 2000, 2500, 400, 50); /* child first, same start */
    annotate(m, "slot", PP_VALUE_INT, -2, 0, NULL);
    annotate(m, "share", PP_VALUE_DOUBLE, 0, 0.25, NULL);
    annotate(m, "precision", PP_VALUE_STR, 0, 0, "FP16");
    b_span(m, prep, PP_ROLE_STAGE, "Embedding", "Embedding", 3, 2000, 3000, 0, 0);
    b_span(m, prep, PP_ROLE_PARTITION, "partition", "Embedding", 3, 2000, 2100, 0, 0);
    b_span(m, prep, PP_ROLE_MERGE, "merge", "Embedding", 3, 2900, 3000, 0, 0); /* ends with parent */
    b_exec(m, gpu1, "Classifier", 3, 3500, 3700, 150, 0);
    b_exec(m, gpu0, "Classifier", 3, 3100, 3300, 190, 20);
    b_span(m, cls, PP_ROLE_USER, "late", NULL, -1, 1700000000123456789LL, 1700000000123456790LL,
           0, 0);
    point(m, PP_EV_INSTANT, cls, "checkpoint", 3600, 0, 0, 0);
    annotate(m, "note", PP_VALUE_STR, 0, 0, "half way");
    point(m, PP_EV_COUNTER, prep, "queue depth", 2000, 0, 0, 2);
    point(m, PP_EV_COUNTER, prep, "queue depth", 3000, 0, 0, 0.5);
    point(m, PP_EV_COUNTER, cls, "temperature", 3100, 0, 0, 71.25);
    point(m, PP_EV_FLOW, prep, "batch", 2000, 4, PP_FLOW_BEGIN, 0);
    point(m, PP_EV_FLOW, npu, "batch", 2000, 4, PP_FLOW_STEP, 0);
    point(m, PP_EV_FLOW, cls, "batch", 3600, 4, PP_FLOW_END, 0);
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_RANGE, e.track = async, e.name = b_str(m, "request"), e.ts_ns = 1500;
    e.dur_ns = 2500, e.id = 77, e.batch = 3;
    add(m, &e);

    pp_model_meta *meta = pp_model_meta_mut(m);
    meta->level = 1;
    meta->process_name = b_str(m, "demo");
    meta->dropped_records = 7;
    pp_thread_info th = {.tid = 4242, .name = b_str(m, "prep"), .recorded = 11, .dropped = 7};
    EXPECT_EQ_I64(pp_model_add_thread(m, &th), PP_OK);
    return m;
}

/* Every track is described with its place in the hierarchy: device streams
 * under their device (simulated ones labeled in both names), threads in
 * their process, counters under the group of the track they were on. */
static void test_tracks_and_hierarchy(void) {
    pp_model *m = pipeline_model();
    char *dump = write_and_check(m, "tracks");
    EXPECT_CONTAINS(dump, "track uuid=1 name=\"stream 0\" parent=\"GPU.0\"\n");
    EXPECT_CONTAINS(dump, "track uuid=2 name=\"stream 1\" parent=\"GPU.0\"\n");
    EXPECT_CONTAINS(dump, "track uuid=3 name=\"stream 0 (simulated)\" parent=\"NPU (simulated)\"\n");
    /* groups: GPU.0 = 1, NPU = 2, host = 3; thread tids follow the groups */
    EXPECT_CONTAINS(dump, "track uuid=4 name=\"prep\" thread pid=3 tid=7\n");
    EXPECT_CONTAINS(dump, "track uuid=5 name=\"cls\" thread pid=3 tid=8\n");
    EXPECT_CONTAINS(dump, "track uuid=6 name=\"regions\" parent=\"host\"\n");
    EXPECT_CONTAINS(dump, "track uuid=7 name=\"requests\" parent=\"host\"\n");
    EXPECT_CONTAINS(dump, "track uuid=8 name=\"GPU.0\"\n");
    EXPECT_CONTAINS(dump, "track uuid=9 name=\"NPU (simulated)\"\n");
    EXPECT_CONTAINS(dump, "track uuid=10 name=\"host\" process pid=3\n");
    EXPECT_CONTAINS(dump, "track uuid=11 name=\"pipeprof (7 records dropped)\"\n");
    EXPECT_CONTAINS(dump, "track uuid=12 name=\"queue depth\" parent=\"host\" counter\n");
    EXPECT_CONTAINS(dump, "track uuid=13 name=\"temperature\" parent=\"host\" counter\n");
    free(dump);
    pp_model_free(m);
}

/* Spans keep their exact start and duration (to the nanosecond, at epoch
 * scale too), nest as on the track (a parent before the child that starts
 * with it), and carry the pipeline fields and annotations as typed values. */
static void test_slices_and_annotations(void) {
    pp_model *m = pipeline_model();
    char *dump = write_and_check(m, "slices");
    EXPECT_CONTAINS(dump, "slice track=\"stream 0 (simulated)\" ts=2000 dur=500 name=\"infer\" "
                          "batch=3 hw_ns=400 precision=\"FP16\" role=\"exec\" share=0.25 slot=-2 "
                          "stage=\"Embedding\" transfer_ns=50\n");
    EXPECT_CONTAINS(dump, "slice track=\"prep\" ts=2000 dur=1000 name=\"Embedding\" batch=3 "
                          "role=\"stage\" stage=\"Embedding\"\n");
    EXPECT_CONTAINS(dump, "slice track=\"prep\" ts=2000 dur=100 name=\"partition\" batch=3 "
                          "role=\"partition\" stage=\"Embedding\"\n");
    EXPECT_CONTAINS(dump, "slice track=\"prep\" ts=2900 dur=100 name=\"merge\" batch=3 "
                          "role=\"merge\" stage=\"Embedding\"\n");
    EXPECT_CONTAINS(dump, "slice track=\"stream 0\" ts=3100 dur=200 name=\"infer\" batch=3 "
                          "hw_ns=190 role=\"exec\" stage=\"Classifier\" transfer_ns=20\n");
    EXPECT_CONTAINS(dump, "slice track=\"cls\" ts=1700000000123456789 dur=1 name=\"late\" "
                          "role=\"user\"\n");
    EXPECT_CONTAINS(dump, "slice track=\"regions\" ts=0 dur=1000 name=\"warm up\" region_id=0\n");
    EXPECT_CONTAINS(dump, "slice track=\"requests\" ts=1500 dur=2500 name=\"request\" batch=3 "
                          "range_id=77\n");
    EXPECT_CONTAINS(dump, "instant track=\"cls\" ts=3600 name=\"checkpoint\" note=\"half way\"\n");
    free(dump);
    pp_model_free(m);
}

/* Annotations named like a slice's own fields (batch, stage, hw_ns, role,
 * transfer_ns, region_id, range_id), like the Chrome writer's (batch_id) or
 * carrying the prefix are written as "annotation.KEY", as in Chrome JSON:
 * once a span with an annotation "batch" carried "batch" twice. The
 * checker fails on a name twice on one event. */
static void test_annotation_keys_apart_from_fields(void) {
    static const char *const keys[] = {"batch", "batch_id", "stage", "hw_ns", "role", "transfer_ns",
                                       "region_id", "range_id", "annotation.x", "plain"};
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU.0", 0, 0);
    b_exec(m, gpu, "S", 3, 1000, 2000, 400, 50);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        annotate(m, keys[k], PP_VALUE_INT, 100 + (int64_t)k, 0, NULL);
    char pf[1024];
    pp_error err = {{0}};
    snprintf(pf, sizeof pf, "%s.pftrace", pp_test_path("keys"));
    EXPECT_EQ_I64(pp_perfetto_write(m, pf, &err), PP_OK);
    char *dump = check(pf, NULL, 1);
    EXPECT_CONTAINS(dump, "slice track=\"stream 0\" ts=1000 dur=1000 name=\"infer\" annotation.annotation.x=108 "
                          "annotation.batch=100 annotation.batch_id=101 annotation.hw_ns=103 "
                          "annotation.range_id=107 annotation.region_id=106 annotation.role=104 "
                          "annotation.stage=102 annotation.transfer_ns=105 batch=3 hw_ns=400 "
                          "plain=109 role=\"exec\" stage=\"S\" transfer_ns=50\n");
    free(dump);
    pp_model_free(m);
}

/* A batch's flow links its steps across tracks and ends on the last; every
 * counter sample is on its counter track; metadata and drops are there. */
static void test_flows_counters_and_metadata(void) {
    pp_model *m = pipeline_model();
    char *dump = write_and_check(m, "flows");
    EXPECT_CONTAINS(dump, "flow track=\"prep\" ts=2000 name=\"batch\" id=4\n");
    EXPECT_CONTAINS(dump, "flow track=\"stream 0 (simulated)\" ts=2000 name=\"batch\" id=4\n");
    EXPECT_CONTAINS(dump, "flow track=\"cls\" ts=3600 name=\"batch\" id=4 terminating\n");
    EXPECT_CONTAINS(dump, "counter track=\"queue depth\" ts=2000 value=2.0\n");
    EXPECT_CONTAINS(dump, "counter track=\"queue depth\" ts=3000 value=0.5\n");
    EXPECT_CONTAINS(dump, "counter track=\"temperature\" ts=3100 value=71.25\n");
    EXPECT_CONTAINS(dump, "instant track=\"pipeprof (7 records dropped)\" ts=0 name=\"trace info\" "
                          "dropped_records=7 ignored_events=0 level=1 pipeprof_version=\"");
    EXPECT_CONTAINS(dump, "process_name=\"demo\" truncated_bytes=0 unmatched_ends=0\n");
    EXPECT_CONTAINS(dump, "instant track=\"pipeprof (7 records dropped)\" ts=0 "
                          "name=\"recording thread\" dropped=7 name=\"prep\" recorded=11 tid=4242\n");
    EXPECT_CONTAINS(dump, "ok: ");
    free(dump);
    pp_model_free(m);
}

/* Spans that start together nest by length whatever order they were
 * recorded in (a child is recorded before its parent): a short run of one
 * start in a model sorted by start, a run too long for insertion, and the
 * same spans out of time order. The checker pairs every decoded slice's
 * name with its duration. */
static void test_nesting_at_one_start(void) {
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        pp_model *m = b_model();
        uint32_t track = b_thread(m, "main");
        int counts[2] = {10, 100};
        for (int k = 0; k < 2; k++) {
            int64_t ts = shuffled ? 5000 - 1000 * k : 1000 * k;
            for (int d = 1; d <= counts[k]; d++) {
                char name[32];
                snprintf(name, sizeof name, "s%d.%d", k, d);
                b_span(m, track, PP_ROLE_USER, name, NULL, -1, ts, ts + d, 0, 0);
            }
        }
        char *dump = write_and_check(m, shuffled ? "nesting_shuffled" : "nesting");
        EXPECT_CONTAINS(dump, "dur=100 name=\"s1.100\"");
        EXPECT_CONTAINS(dump, "dur=10 name=\"s0.10\"");
        free(dump);
        pp_model_free(m);
    }
}

/* Long strings make messages of 128 bytes and more (multi-byte lengths, at
 * every level of nesting), as do many annotations on one event; an empty
 * model is a valid trace too. */
static void test_long_strings_and_empty_model(void) {
    pp_model *m = b_model();
    uint32_t track = b_thread(m, "main");
    size_t sizes[] = {100, 127, 128, 200, 16383, 16384, 70000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char *text = malloc(sizes[k] + 1);
        memset(text, 'a' + (int)k, sizes[k]);
        text[sizes[k]] = 0;
        b_span(m, track, PP_ROLE_USER, text, text, (int64_t)k, 1000 * (int64_t)k,
               1000 * (int64_t)k + 10, 0, 0);
        annotate(m, text, PP_VALUE_STR, 0, 0, text);
        free(text);
    }
    /* and an event with many annotations, each key and value new */
    b_span(m, track, PP_ROLE_USER, "many", "many", 1, 100000, 100010, 0, 0);
    for (int k = 0; k < 300; k++) {
        char key[32], value[32];
        snprintf(key, sizeof key, "key %d", k);
        snprintf(value, sizeof value, "value %d", k);
        annotate(m, key, PP_VALUE_STR, 0, 0, value);
    }
    free(write_and_check(m, "long"));
    pp_model_free(m);
    m = b_model();
    char *dump = write_and_check(m, "empty");
    EXPECT_CONTAINS(dump, "ok: ");
    free(dump);
    pp_model_free(m);
}

/* A session whose output ends in .pftrace writes it at stop; reading it
 * back is refused with a message. */
static void test_session_output(void) {
    char pf[1024], js[1024];
    snprintf(pf, sizeof pf, "%s", pp_test_path("session.pftrace"));
    snprintf(js, sizeof js, "%s", pp_test_path("session.json"));
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.output = pf;
    pp_session *s = NULL;
    pp_track t;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    EXPECT_EQ_I64(pp_track_thread(s, "main", &t), PP_OK);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t, r.name = pp_intern("work"), r.ts_ns = pp_now(), r.dur_ns = 1234, r.batch = 9;
    EXPECT_EQ_I64(pp_span(s, &r), PP_OK);
    EXPECT_EQ_I64(pp_session_stop(s, &err), PP_OK);
    EXPECT_EQ_I64(pp_session_write(s, js, &err), PP_OK);
    char *out = check(pf, js, 1);
    EXPECT_CONTAINS(out, "dur=1234 name=\"work\" batch=9 role=\"user\"\n");
    free(out);
    /* pipeprof does not read it back, and says so */
    pp_model *back = NULL;
    EXPECT_EQ_I64(pp_trace_read(pf, &back, &err), PP_EUNSUPPORTED);
    EXPECT_CONTAINS(err.msg, "session.pftrace: pipeprof writes Perfetto traces but does not "
                             "read them");
    EXPECT(back == NULL);
    pp_session_close(s);
}

/* No file of any name (target or temporary) is left in `dir`. */
static int dir_has_leftovers(const char *dir, const char *stem) {
    DIR *d = opendir(dir);
    struct dirent *ent;
    int found = 0;
    while (d && (ent = readdir(d)))
        found |= strncmp(ent->d_name, stem, strlen(stem)) == 0;
    if (d)
        closedir(d);
    return found;
}

/* A write that cannot complete says which path failed and leaves nothing
 * that looks like a trace; a model Perfetto cannot hold is refused first. */
static void test_errors_leave_no_file(void) {
    pp_model *m = pipeline_model();
    pp_error err = {{0}};
    struct stat st;
    EXPECT_EQ_I64(pp_perfetto_write(m, "/nonexistent-dir/trace.pftrace", &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "/nonexistent-dir/trace.pftrace");
    EXPECT(stat("/nonexistent-dir/trace.pftrace", &st) != 0);

    /* The target is a directory: everything is written, the rename fails. */
    const char *dir_target = pp_test_path("target_is_dir.pftrace");
    EXPECT_EQ_I64(mkdir(dir_target, 0755), 0);
    EXPECT_EQ_I64(pp_trace_write(m, dir_target, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, dir_target);
    char parent[1024];
    snprintf(parent, sizeof parent, "%s", dir_target);
    char *slash = strrchr(parent, '/');
    *slash = 0;
    rmdir(dir_target);
    EXPECT(!dir_has_leftovers(parent, slash + 1));

    const char *path = pp_test_path("negative.pftrace");
    b_span(m, 0, PP_ROLE_EXEC, "early", NULL, -1, -5, 10, 0, 0);
    EXPECT_EQ_I64(pp_perfetto_write(m, path, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "negative.pftrace: event 16 starts at -5 ns; Perfetto timestamps "
                             "cannot be negative");
    EXPECT(stat(path, &st) != 0);
    EXPECT_EQ_I64(pp_perfetto_write(NULL, path, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "pp_perfetto_write: model and path are required");
    pp_model_free(m);
}

int main(void) {
    /* first: the one test that needs no decoding runs even where the
     * protobuf package is missing and the others skip */
    RUN(test_errors_leave_no_file);
    RUN(test_tracks_and_hierarchy);
    RUN(test_slices_and_annotations);
    RUN(test_annotation_keys_apart_from_fields);
    RUN(test_flows_counters_and_metadata);
    RUN(test_nesting_at_one_start);
    RUN(test_long_strings_and_empty_model);
    RUN(test_session_output);
    return pp_test_finish();
}
