/* The Chrome JSON reader takes what real tools write (our files, PyTorch
 * profiler exports, hand-made arrays) and refuses what is broken with a
 * message that says where. */
#include <stdlib.h>
#include <zlib.h>

#include "pipeprof/io.h"
#include "testutil.h"

/* Reads `json` written to a fresh file; returns the model (NULL on error,
 * with the message in *err). */
static pp_model *read_text(const char *name, const char *json, pp_error *err) {
    const char *path = pp_test_path(name);
    pp_model *m = NULL;
    pp_test_write_file(path, json, strlen(json));
    memset(err, 0, sizeof *err);
    int rc = pp_chrome_read(path, &m, err);
    EXPECT((rc == PP_OK) == (m != NULL));
    return m;
}

static pp_event event_at(const pp_model *m, size_t i) {
    pp_event e;
    pp_event_init(&e);
    if (i < pp_model_event_count(m))
        pp_model_event(m, i, &e);
    else
        pp_test_fail(__FILE__, __LINE__, "no event %zu", i);
    return e;
}

/* Microsecond decimals become exact nanoseconds, even at epoch scale where
 * a double has no nanoseconds left; integers, exponents and 4+ decimals too. */
static void test_timestamps_are_exact_nanoseconds(void) {
    pp_error err;
    pp_model *m = read_text("ts.json",
                            "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1700000000000000.123,\"dur\":0.001},"
                            "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":42,\"dur\":1e3},"
                            "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":1.0005,\"dur\":2.00049},"
                            "{\"ph\":\"X\",\"name\":\"d\",\"pid\":1,\"tid\":1,\"ts\":-0.25,\"dur\":1.5E-2}]",
                            &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    EXPECT_EQ_I64(event_at(m, 0).ts_ns, 1700000000000000123LL);
    EXPECT_EQ_I64(event_at(m, 0).dur_ns, 1);
    EXPECT_EQ_I64(event_at(m, 1).ts_ns, 42000);
    EXPECT_EQ_I64(event_at(m, 1).dur_ns, 1000000);
    EXPECT_EQ_I64(event_at(m, 2).ts_ns, 1001); /* 1000.5 rounds away from zero */
    EXPECT_EQ_I64(event_at(m, 2).dur_ns, 2000);
    EXPECT_EQ_I64(event_at(m, 3).ts_ns, -250);
    EXPECT_EQ_I64(event_at(m, 3).dur_ns, 15);
    pp_model_free(m);
}

/* The object form may put traceEvents anywhere; unknown top-level keys,
 * unknown fields and unknown phases are skipped (phases counted). */
static void test_object_form_and_unknowns(void) {
    pp_error err;
    pp_model *m = read_text("obj.json",
                            "{\"meta\":{\"nested\":[1,{\"x\":\"]}\"}]},\"traceEvents\":["
                            "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":1,\"weird\":[true,null]},"
                            "{\"ph\":\"Q\",\"name\":\"unknown\",\"pid\":1,\"tid\":2,\"ts\":1}"
                            "],\"displayTimeUnit\":\"ns\"}",
                            &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    EXPECT_EQ_U64(pp_model_event_count(m), 1);
    EXPECT_EQ_U64(pp_model_meta_get(m)->ignored_events, 1);
    pp_model_free(m);
}

/* A bare array cut short, as Chrome leaves it when killed, is accepted. */
static void test_bare_array_without_closing_bracket(void) {
    pp_error err;
    pp_model *m = read_text("open.json", "[{\"ph\":\"i\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":5},\n", &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    EXPECT_EQ_U64(pp_model_event_count(m), 1);
    EXPECT_EQ_I64(event_at(m, 0).kind, PP_EV_INSTANT);
    pp_model_free(m);
}

/* B/E nest per thread; an E with nothing open is counted, not invented;
 * names given later by M events still apply; pid/tid may be strings. */
static void test_begin_end_pairs_and_late_names(void) {
    pp_error err;
    pp_model *m = read_text("be.json",
                            "[{\"ph\":\"B\",\"name\":\"outer\",\"pid\":\"p\",\"tid\":\"t\",\"ts\":1,\"args\":{\"k\":7}},"
                            "{\"ph\":\"B\",\"name\":\"inner\",\"pid\":\"p\",\"tid\":\"t\",\"ts\":2},"
                            "{\"ph\":\"B\",\"name\":\"other\",\"pid\":\"p\",\"tid\":9,\"ts\":2},"
                            "{\"ph\":\"E\",\"pid\":\"p\",\"tid\":\"t\",\"ts\":3},"
                            "{\"ph\":\"E\",\"pid\":\"p\",\"tid\":\"t\",\"ts\":4},"
                            "{\"ph\":\"E\",\"pid\":\"p\",\"tid\":\"t\",\"ts\":5},"
                            "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":\"p\",\"tid\":\"t\",\"args\":{\"name\":\"worker\"}},"
                            "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":\"p\",\"args\":{\"name\":\"app\"}}]",
                            &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    EXPECT_EQ_U64(pp_model_event_count(m), 2);
    pp_event inner = event_at(m, 0), outer = event_at(m, 1);
    EXPECT_STR(pp_model_string(m, inner.name), "inner");
    EXPECT_EQ_I64(inner.dur_ns, 1000);
    EXPECT_STR(pp_model_string(m, outer.name), "outer");
    EXPECT_EQ_I64(outer.dur_ns, 3000);
    size_t first, n, total;
    pp_model_annotations_of(m, 1, &first, &n);
    EXPECT_EQ_U64(n, 2); /* k, and "chrome:cat" = "": it had no cat, the writer would give one */
    EXPECT_EQ_I64(pp_model_annotations(m, &total)[first].v.i, 7);
    EXPECT_STR(pp_model_string(m, pp_model_annotations(m, &total)[first + 1].key), "chrome:cat");
    EXPECT_STR(pp_model_string(m, pp_model_annotations(m, &total)[first + 1].v.s), "");
    const pp_track_info *t = pp_model_track(m, outer.track);
    EXPECT_STR(pp_model_string(m, t->name), "worker");
    EXPECT_STR(pp_model_string(m, t->process), "app");
    EXPECT_EQ_U64(pp_model_meta_get(m)->unmatched_ends, 2); /* stray E + never-ended "other" */
    pp_model_free(m);
}

/* Span args fill the pipeline fields; every other scalar is an annotation
 * of the right type; strings are unescaped to UTF-8; an object or boolean
 * is kept as its JSON text under "chrome:json:KEY", an arg named "chrome:..."
 * under "chrome:key:...", a missing cat as "chrome:cat" = "". */
static void test_args_fields_and_annotations(void) {
    pp_error err;
    pp_model *m = read_text("args.json",
                            "[{\"ph\":\"X\",\"name\":\"infer\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,\"args\":{"
                            "\"stage\":\"Embedding\",\"batch_id\":12,\"hw_ns\":1500,\"transfer_ns\":200,\"role\":\"exec\","
                            "\"n\":-3,\"r\":0.5,\"big\":1e400,\"s\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\"\",\"o\":{\"x\": [1, null]},\"b\":true,\"chrome:cat\":5}}]",
                            &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    pp_event e = event_at(m, 0);
    EXPECT_STR(pp_model_string(m, e.stage), "Embedding");
    EXPECT_EQ_I64(e.batch, 12);
    EXPECT_EQ_U64(e.hw_ns, 1500);
    EXPECT_EQ_U64(e.xfer_ns, 200);
    EXPECT_EQ_I64(e.role, PP_ROLE_EXEC);
    size_t first, n, total;
    pp_model_annotations_of(m, 0, &first, &n);
    const pp_annotation *a = pp_model_annotations(m, &total) + first;
    EXPECT_EQ_U64(n, 8);
    EXPECT_STR(pp_model_string(m, a[4].key), "chrome:json:o");
    EXPECT_STR(pp_model_string(m, a[4].v.s), "{\"x\": [1, null]}");
    EXPECT_STR(pp_model_string(m, a[5].key), "chrome:json:b");
    EXPECT_STR(pp_model_string(m, a[5].v.s), "true");
    EXPECT_STR(pp_model_string(m, a[6].key), "chrome:key:chrome:cat");
    EXPECT_EQ_I64(a[6].v.i, 5);
    EXPECT_STR(pp_model_string(m, a[7].key), "chrome:cat");
    EXPECT_STR(pp_model_string(m, a[7].v.s), "");
    EXPECT_EQ_I64(a[0].type, PP_VALUE_INT);
    EXPECT_EQ_I64(a[0].v.i, -3);
    EXPECT_EQ_I64(a[1].type, PP_VALUE_DOUBLE);
    EXPECT_NEAR(a[1].v.d, 0.5, 0);
    EXPECT_EQ_I64(a[2].type, PP_VALUE_DOUBLE);
    EXPECT_STR(pp_model_string(m, a[3].v.s), "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\"");
    pp_model_free(m);
}

/* Counters: one sample per numeric key, named name.key when there are
 * several; flows and async ranges keep their ids. */
static void test_counters_flows_ranges(void) {
    pp_error err;
    pp_model *m = read_text("cfr.json",
                            "[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":1,\"args\":{\"value\":2.5}},"
                            "{\"ph\":\"C\",\"name\":\"q\",\"pid\":1,\"ts\":2,\"args\":{\"in\":1,\"out\":3,\"label\":\"x\"}},"
                            "{\"ph\":\"s\",\"name\":\"batch\",\"cat\":\"flow\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":3},"
                            "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"batch\",\"cat\":\"flow\",\"id\":\"0x5\",\"pid\":1,\"tid\":2,\"ts\":4},"
                            "{\"ph\":\"b\",\"name\":\"req\",\"cat\":\"range\",\"id\":9,\"pid\":1,\"tid\":3,\"ts\":5},"
                            "{\"ph\":\"e\",\"name\":\"req\",\"cat\":\"range\",\"id\":9,\"pid\":1,\"tid\":3,\"ts\":8}]",
                            &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    EXPECT_EQ_U64(pp_model_event_count(m), 6);
    EXPECT_STR(pp_model_string(m, event_at(m, 0).name), "mem");
    EXPECT_NEAR(event_at(m, 0).value, 2.5, 0);
    EXPECT_STR(pp_model_string(m, event_at(m, 1).name), "q.in");
    EXPECT_STR(pp_model_string(m, event_at(m, 2).name), "q.out");
    EXPECT_NEAR(event_at(m, 2).value, 3, 0);
    EXPECT_EQ_I64(event_at(m, 3).phase, PP_FLOW_BEGIN);
    EXPECT_EQ_U64(event_at(m, 3).id, 5);
    EXPECT_EQ_I64(event_at(m, 4).phase, PP_FLOW_END);
    EXPECT_EQ_U64(event_at(m, 4).id, 5);
    EXPECT_EQ_I64(event_at(m, 5).kind, PP_EV_RANGE);
    EXPECT_EQ_I64(event_at(m, 5).dur_ns, 3000);
    pp_model_free(m);
}

/* A counter value reads back as the double nearest its decimal text, as
 * the compiler reads the same literal: short decimals (one division by an
 * exact power of ten), and long ones and exponents (the general path). */
static void test_counter_values_are_nearest_doubles(void) {
    static const char *const texts[] = {"0.1", "-0.3", "2.675", "123456789012345", "99999.99999",
                                        "1234567890123456", "0.1000000000000000055511151231257827",
                                        "1e-2", "-7.5E+3", "0.000000000000000000000000001"};
    static const double want[] = {0.1, -0.3, 2.675, 123456789012345, 99999.99999,
                                  1234567890123456, 0.1000000000000000055511151231257827,
                                  1e-2, -7.5E+3, 0.000000000000000000000000001};
    char json[2048];
    size_t n = sizeof texts / sizeof texts[0], at = 0;
    at += (size_t)snprintf(json, sizeof json, "[");
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(json + at, sizeof json - at, "%s{\"ph\":\"C\",\"name\":\"c\",\"pid\":1,"
                               "\"ts\":%zu,\"args\":{\"value\":%s}}", i ? "," : "", i, texts[i]);
    snprintf(json + at, sizeof json - at, "]");
    pp_error err;
    pp_model *m = read_text("values.json", json, &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    EXPECT_EQ_U64(pp_model_event_count(m), n);
    for (size_t i = 0; i < n; i++)
        EXPECT_NEAR(event_at(m, i).value, want[i], 0);
    pp_model_free(m);
}

/* A PyTorch-profiler export: kernels, memcpys and memsets become execs on
 * device tracks; memcpy/memset time is transfer; host events stay host. */
static void test_pytorch_profiler_export(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/io/data/kineto_small.json", getenv("PP_SOURCE_DIR"));
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_chrome_read(path, &m, &err), PP_OK);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    int kernels = 0, copies = 0;
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e = event_at(m, i);
        const pp_track_info *t = pp_model_track(m, e.track);
        if (e.role != PP_ROLE_EXEC)
            continue;
        EXPECT_EQ_I64(t->kind, PP_TRACK_KIND_DEVICE);
        EXPECT_STR(pp_model_string(m, t->device), "GPU 0");
        EXPECT_EQ_U64(e.hw_ns, (uint64_t)e.dur_ns);
        if (e.xfer_ns) {
            copies++;
            EXPECT_EQ_U64(e.xfer_ns, (uint64_t)e.dur_ns);
        } else {
            kernels++;
            EXPECT_EQ_I64(e.dur_ns, 80333);
            EXPECT_EQ_I64(t->stream, 7);
            EXPECT_STR(pp_model_string(m, t->name), "stream 7");
        }
    }
    EXPECT_EQ_I64(kernels, 1);
    EXPECT_EQ_I64(copies, 2);
    pp_event first = event_at(m, 0);
    EXPECT_STR(pp_model_string(m, first.name), "Stage2_Embedding/batch7");
    EXPECT_EQ_I64(pp_model_track(m, first.track)->kind, PP_TRACK_KIND_THREAD);
    EXPECT_STR(pp_model_string(m, pp_model_track(m, first.track)->process), "python3");
    /* the profiler's own span over the whole profile (cat "Trace", pid
     * "Spans") is bookkeeping, not the program's work: kept, on a track so
     * marked, with its cat */
    EXPECT_EQ_U64(pp_model_meta_get(m)->ignored_events, 0);
    pp_event last = event_at(m, pp_model_event_count(m) - 1);
    EXPECT_STR(pp_model_string(m, last.name), "PyTorch Profiler (0)");
    EXPECT(pp_model_track(m, last.track)->flags & PP_TRACK_BOOKKEEPING);
    EXPECT(!(pp_model_track(m, first.track)->flags & PP_TRACK_BOOKKEEPING));
    pp_model_free(m);
}

/* What the model has no field for comes back on writing: each event's cat
 * (or its absence), array / object / boolean args verbatim, a "chrome:" arg
 * under its own key; a kept JSON text that is not one JSON value (a model
 * from elsewhere) is written as a string, so the file stays JSON. */
static void test_written_back_as_read(void) {
    pp_error err;
    pp_model *m = read_text("keep.json",
                            "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"mm\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,"
                            "\"args\":{\"Input Dims\":[[2,3],[]],\"ok\":false,\"chrome:x\":4,\"stage\":[1]}},"
                            "{\"ph\":\"X\",\"name\":\"nocat\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1},"
                            "{\"ph\":\"i\",\"cat\":\"mark\",\"name\":\"i\",\"pid\":1,\"tid\":1,\"ts\":4},"
                            "{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":9,\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":5},"
                            "{\"ph\":\"b\",\"cat\":\"async\",\"id\":3,\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":6},"
                            "{\"ph\":\"e\",\"cat\":\"async\",\"id\":3,\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":7}]",
                            &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    /* a kept text that is not JSON, as a model read from any .pptrace may hold */
    pp_annotation bad = {0};
    bad.event = 4; /* the last event: annotations are added in event order */
    bad.type = PP_VALUE_STR;
    EXPECT_EQ_I64(pp_model_intern(m, "chrome:json:broken", 18, &bad.key), PP_OK);
    EXPECT_EQ_I64(pp_model_intern(m, "[1,", 3, &bad.v.s), PP_OK);
    EXPECT_EQ_I64(pp_model_add_annotation(m, &bad), PP_OK);
    const char *path = pp_test_path("keep_back.json");
    EXPECT_EQ_I64(pp_chrome_write(m, path, &err), PP_OK);
    size_t len;
    char *text = pp_test_read_file(path, &len);
    EXPECT_CONTAINS(text, "\"name\":\"mm\",\"cat\":\"cpu_op\"");
    EXPECT_CONTAINS(text, "\"Input Dims\":[[2,3],[]],\"ok\":false,\"chrome:x\":4,"
                          "\"annotation.stage\":[1]}"); /* a field's name, kept apart */
    EXPECT_CONTAINS(text, "\"name\":\"nocat\",\"pid\"");
    EXPECT_CONTAINS(text, "\"broken\":\"[1,\"");
    EXPECT_CONTAINS(text, "\"name\":\"i\",\"cat\":\"mark\"");
    EXPECT_CONTAINS(text, "\"name\":\"f\",\"cat\":\"ac2g\",\"id\":9");
    EXPECT_CONTAINS(text, "{\"ph\":\"b\",\"cat\":\"async\",\"id\":3");
    EXPECT_CONTAINS(text, "{\"ph\":\"e\",\"cat\":\"async\",\"id\":3");
    EXPECT(strstr(text, "chrome:cat") == NULL && strstr(text, "chrome:json") == NULL);
    free(text);
    pp_model_free(m);
    /* and it reads back into the same events */
    pp_model *back = NULL;
    EXPECT_EQ_I64(pp_chrome_read(path, &back, &err), PP_OK);
    EXPECT(back && pp_model_event_count(back) == 5);
    pp_model_free(back);
}

/* The PipelineProfiler dialect, detected from the first complete event:
 * cat = device (a device track per (cat, tid)), stage = name less
 * "_Batch{n}", hw_ns from hw_time_ms, Partition / Merge roles; CPU tracks
 * carry running-mean hardware times. Without hw_time_ms on the first
 * event, the same names read as plain Chrome JSON. */
static void test_pipelineprofiler_dialect(void) {
    pp_error err;
    pp_model *m = read_text("seed.json",
                            "[{\"name\":\"Stage2_Embedding_Batch3\",\"cat\":\"GPU\",\"ph\":\"X\",\"ts\":1.5,"
                            "\"dur\":2000.25,\"pid\":1,\"tid\":2,\"args\":{\"batch_id\":3,\"hw_time_ms\":1.25,"
                            "\"sw_overhead_ms\":0.75025}},"
                            "{\"name\":\"Partition\",\"cat\":\"CPU\",\"ph\":\"X\",\"ts\":0.5,\"dur\":1,\"pid\":1,"
                            "\"tid\":1,\"args\":{\"batch_id\":3,\"hw_time_ms\":0.0}},"
                            "{\"name\":\"Stage1_Prep_Batch12\",\"cat\":\"NPU\",\"ph\":\"X\",\"ts\":3000,\"dur\":4,"
                            "\"pid\":1,\"tid\":1,\"args\":{\"batch_id\":12,\"hw_time_ms\":0.003}}]",
                            &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    pp_event gpu = event_at(m, 0), part = event_at(m, 1), npu = event_at(m, 2);
    EXPECT_EQ_I64(gpu.role, PP_ROLE_EXEC);
    EXPECT_STR(pp_model_string(m, gpu.stage), "Stage2_Embedding");
    EXPECT_EQ_I64(gpu.batch, 3);
    EXPECT_EQ_U64(gpu.hw_ns, 1250000);
    EXPECT_EQ_I64(gpu.ts_ns, 1500);
    EXPECT_EQ_I64(gpu.dur_ns, 2000250);
    EXPECT_EQ_I64(part.role, PP_ROLE_PARTITION);
    EXPECT_EQ_U64(part.stage, 0);
    EXPECT_EQ_I64(part.batch, 3);
    EXPECT_STR(pp_model_string(m, npu.stage), "Stage1_Prep");
    EXPECT_EQ_U64(npu.hw_ns, 3000);
    /* tid 1 of CPU and tid 1 of NPU are two tracks */
    EXPECT(part.track != npu.track);
    const pp_track_info *g = pp_model_track(m, gpu.track), *c = pp_model_track(m, part.track);
    EXPECT_EQ_I64(g->kind, PP_TRACK_KIND_DEVICE);
    EXPECT_STR(pp_model_string(m, g->device), "GPU");
    EXPECT_STR(pp_model_string(m, g->name), "stream 2");
    EXPECT_EQ_I64(g->stream, 2);
    EXPECT(!(g->flags & PP_TRACK_HW_MEAN));
    EXPECT_STR(pp_model_string(m, c->device), "CPU");
    EXPECT(c->flags & PP_TRACK_HW_MEAN);
    pp_model_free(m);

    static const char plain[] = "[{\"name\":\"Stage2_Embedding_Batch3\",\"cat\":\"GPU\",\"ph\":\"X\",\"ts\":1,\"dur\":2,"
                  "\"pid\":1,\"tid\":2,\"args\":{\"batch_id\":3}},"
                  "{\"name\":\"Stage1_Batch4\",\"cat\":\"CPU\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,"
                  "\"tid\":1,\"args\":{\"batch_id\":4,\"hw_time_ms\":1.0}}]";
    m = read_text("plain.json", plain, &err);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    for (size_t i = 0; i < 2; i++) {
        pp_event e = event_at(m, i);
        EXPECT_EQ_I64(e.role, PP_ROLE_NONE);
        EXPECT_EQ_U64(e.hw_ns, 0);
        EXPECT_EQ_I64(pp_model_track(m, e.track)->kind, PP_TRACK_KIND_THREAD);
    }
    pp_model_free(m);

    /* chosen: a file with no hw_time_ms first read as the dialect anyway */
    const char *path = pp_test_path("plain2.json");
    pp_test_write_file(path, plain, strlen(plain));
    EXPECT_EQ_I64(pp_trace_read_dialect(path, PP_DIALECT_PIPELINE_PROFILER, &m, &err), PP_OK);
    if (!m)
        pp_test_fail(__FILE__, __LINE__, "%s", err.msg);
    EXPECT(m && event_at(m, 0).role == PP_ROLE_EXEC && event_at(m, 1).hw_ns == 1000000);
    pp_model_free(m);
    EXPECT_EQ_I64(pp_json_dialect_from_name("pipelineprofiler"), PP_DIALECT_PIPELINE_PROFILER);
    EXPECT_EQ_I64(pp_json_dialect_from_name("Chrome"), -1);
}

/* gzip-compressed traces are read by content, whatever their name. */
static void test_gzip_input(void) {
    const char *path = pp_test_path("trace.json.gz");
    const char *json = "{\"traceEvents\":[{\"ph\":\"i\",\"name\":\"z\",\"pid\":1,\"tid\":1,\"ts\":7}]}";
    gzFile gz = gzopen(path, "wb");
    gzwrite(gz, json, (unsigned)strlen(json));
    gzclose(gz);
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_trace_read(path, &m, &err), PP_OK);
    EXPECT(m && pp_model_event_count(m) == 1);
    pp_model_free(m);
    /* corrupt the compressed data: a clear error, no model */
    size_t len;
    char *bytes = pp_test_read_file(path, &len);
    bytes[len / 2] ^= 0x55;
    bytes[len / 2 + 1] ^= 0x55;
    pp_test_write_file(path, bytes, len);
    free(bytes);
    m = NULL;
    EXPECT_EQ_I64(pp_chrome_read(path, &m, &err), PP_EFORMAT);
    EXPECT(m == NULL);
    EXPECT_CONTAINS(err.msg, "trace.json.gz: byte ");
}

/* 100000 events, about 16 MB of JSON (many times the reader's 1 MiB
 * chunk), plain or gzip-compressed. */
static void write_large_trace(const char *path, int gzip) {
    gzFile gz = gzopen(path, gzip ? "wb6" : "wbT"); /* T: written as it is */
    gzputs(gz, "{\"traceEvents\":[\n");
    for (int i = 0; i < 100000; i++)
        gzprintf(gz, "%s{\"ph\":\"X\",\"name\":\"span %d\",\"pid\":1,\"tid\":%d,\"ts\":%d.%03d,\"dur\":1.5,"
                     "\"args\":{\"batch_id\":%d,\"pad\":\"%s\"}}\n",
                 i ? "," : "", i % 100, i % 4, i, i % 1000, i,
                 "................................................................");
    gzputs(gz, "]}\n");
    gzclose(gz);
}

static void expect_large_trace(const char *path) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_chrome_read(path, &m, &err), PP_OK);
    if (!m)
        { pp_test_fail(__FILE__, __LINE__, "%s", err.msg); return; }
    EXPECT_EQ_U64(pp_model_event_count(m), 100000);
    pp_event last = event_at(m, 99999);
    EXPECT_EQ_I64(last.ts_ns, 99999LL * 1000 + 999);
    EXPECT_EQ_I64(last.batch, 99999);
    EXPECT_EQ_U64(pp_model_track_count(m), 4);
    pp_model_free(m);
}

/* A file many times the read chunk is streamed with every event intact. */
static void test_large_file_streams(void) {
    const char *path = pp_test_path("large.json");
    write_large_trace(path, 0);
    expect_large_trace(path);
}

/* A .json.gz many times the read chunk, inflated on a thread ahead of the
 * parser (io/gz_pipe.h) where the machine has a spare CPU, reads the same;
 * a damaged checksum in its trailer, which zlib finds only once all of it
 * is inflated, is reported as corrupt gzip data at a byte past the first
 * chunks, and no model is kept. */
static void test_large_gzip_file_streams(void) {
    const char *path = pp_test_path("large.json.gz");
    write_large_trace(path, 1);
    expect_large_trace(path);
    size_t len;
    char *bytes = pp_test_read_file(path, &len);
    bytes[len - 8] ^= 0x55; /* the trailer: CRC-32 of the text, then its length */
    pp_test_write_file(path, bytes, len);
    free(bytes);
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_chrome_read(path, &m, &err), PP_EFORMAT);
    EXPECT(m == NULL);
    EXPECT_CONTAINS(err.msg, "large.json.gz: byte ");
    EXPECT_CONTAINS(err.msg, ": corrupt gzip data: incorrect data check");
    const char *at = strstr(err.msg, ": byte ");
    EXPECT(at && strtoull(at + 7, NULL, 10) > 4u * (1u << 20));
}

/* Every way a file can be broken: a clear message with file, line:column
 * and byte offset; no model. */
static void test_errors_say_where(void) {
    static const struct {
        const char *json, *message;
    } cases[] = {
        {"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,", "1:17 (byte 16): unexpected end of file inside the value that starts here"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1 x}]", "1:38 (byte 37): expected '}' or ',' after a field of an event (got 'x')"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\n\"dur\":\"x\"}]", "2:7 (byte 36): \"dur\" must be a number of microseconds (got a string)"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":-5}]", "negative \"dur\" (-5000 ns)"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":9000000000000000,\"dur\":9000000000000000}]",
         "event ends past the largest time"},
        {"[{\"ph\":\"X\",\"name\":\"a\\q\",\"ts\":1}]", "bad escape in string"},
        {"[{\"name\":\"a\",\"ts\":1}]", "event has no \"ph\""},
        {"[{\"ph\":\"X\",\"name\":\"a\"}]", "event \"a\" has no \"ts\""},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1} {}]", "expected ',' or ']' after an event (got '{')"},
        {"{\"traceEvents\":[]} trailing", "unexpected data after the top-level object"},
        {"{\"other\":1}", "no \"traceEvents\" in the top-level object"},
        {"\x7f" "ELF\x02\x01", "expected '{' or '[' at the start of a Chrome trace (got a binary byte)"},
        {"", "empty file"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1.5,\"ts\":1}]", "pid/tid must be an integer or a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pp_error err;
        pp_model *m = read_text("bad.json", cases[i].json, &err);
        EXPECT(m == NULL);
        EXPECT_CONTAINS(err.msg, "bad.json");
        EXPECT_CONTAINS(err.msg, cases[i].message);
        pp_model_free(m);
    }
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_chrome_read("/nonexistent/trace.json", &m, &err), PP_ENOTFOUND);
    EXPECT_CONTAINS(err.msg, "/nonexistent/trace.json: cannot open");
}

int main(void) {
    RUN(test_timestamps_are_exact_nanoseconds);
    RUN(test_object_form_and_unknowns);
    RUN(test_bare_array_without_closing_bracket);
    RUN(test_begin_end_pairs_and_late_names);
    RUN(test_args_fields_and_annotations);
    RUN(test_counters_flows_ranges);
    RUN(test_counter_values_are_nearest_doubles);
    RUN(test_pytorch_profiler_export);
    RUN(test_written_back_as_read);
    RUN(test_pipelineprofiler_dialect);
    RUN(test_gzip_input);
    RUN(test_large_file_streams);
    RUN(test_large_gzip_file_streams);
    RUN(test_errors_say_where);
    return pp_test_finish();
}
