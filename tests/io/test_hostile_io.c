/* Readers and writers against inputs built to hurt them: annotation keys
 * that are the writer's own field names, one JSON value of many megabytes
 * from a small .json.gz, a bad escape in a counter's key, and a model with
 * no annotations at all (NULL + 0 under UBSan). Each once corrupted a trace,
 * took unbounded memory, leaked or was undefined behaviour. */
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "pipeprof/io.h"
#include "testutil.h"

static uint32_t str(pp_model *m, const char *text) {
    uint32_t id = 0;
    EXPECT_EQ_I64(pp_model_intern(m, text, strlen(text), &id), PP_OK);
    return id;
}

/* One exec span on one device track, stage "S", batch 3. */
static pp_model *one_exec(void) {
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    pp_track_info t;
    uint32_t track = 0;
    pp_track_info_init(&t);
    t.kind = PP_TRACK_KIND_DEVICE;
    t.process = str(m, "GPU.0");
    t.device = t.process;
    t.name = str(m, "stream 0");
    t.stream = 0;
    EXPECT_EQ_I64(pp_model_add_track(m, &t, &track), PP_OK);
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_SPAN;
    e.role = PP_ROLE_EXEC;
    e.track = track;
    e.name = str(m, "infer");
    e.stage = str(m, "S");
    e.batch = 3;
    e.ts_ns = 1000;
    e.dur_ns = 500;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    return m;
}

static void annotate_int(pp_model *m, const char *key, int64_t v) {
    pp_annotation a = {.event = 0, .key = str(m, key), .type = PP_VALUE_INT, .v.i = v};
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
}

/* Annotations named like the span's own fields (batch, batch_id, stage,
 * hw_ns, role) and one already carrying the escape prefix come back as
 * annotations with their own keys, and the span keeps its batch and stage:
 * once a duplicate "batch" made the file unreadable and an integer
 * "batch_id" replaced the span's batch. */
static void test_annotation_keys_never_become_fields(void) {
    static const char *const keys[] = {"batch", "batch_id", "stage", "hw_ns", "role",
                                       "transfer_ns", "region_id", "annotation.x", "plain"};
    const size_t nkeys = sizeof keys / sizeof keys[0];
    pp_model *m = one_exec();
    for (size_t k = 0; k < nkeys; k++)
        annotate_int(m, keys[k], 100 + (int64_t)k);
    const char *path = pp_test_path("fields.json");
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_chrome_write(m, path, &err), PP_OK);
    pp_model *back = NULL;
    int rc = pp_chrome_read(path, &back, &err);
    EXPECT_EQ_I64(rc, PP_OK);
    if (rc) {
        pp_test_fail(__FILE__, __LINE__, "%s", err.msg);
        pp_model_free(m);
        return;
    }
    pp_event e;
    pp_model_event(back, 0, &e);
    EXPECT_EQ_I64(e.batch, 3);
    EXPECT_STR(pp_model_string(back, e.stage), "S");
    EXPECT_EQ_U64(e.hw_ns, 0);
    EXPECT_EQ_I64(e.role, PP_ROLE_EXEC);
    size_t n;
    const pp_annotation *a = pp_model_annotations(back, &n);
    EXPECT_EQ_U64(n, nkeys);
    for (size_t k = 0; k < n && k < nkeys; k++) {
        EXPECT_STR(pp_model_string(back, a[k].key), keys[k]);
        EXPECT_EQ_I64(a[k].v.i, 100 + (int64_t)k);
    }
    /* the text holds each key once: Python's json keeps the last of two */
    char *text = pp_test_read_file(path, NULL);
    EXPECT_CONTAINS(text, "\"batch_id\":3,");
    EXPECT_CONTAINS(text, "\"annotation.batch\":100,\"annotation.batch_id\":101,");
    EXPECT_CONTAINS(text, "\"annotation.annotation.x\":107,\"plain\":108}");
    free(text);
    pp_model_free(back);
    pp_model_free(m);
}

/* A .json.gz of a few hundred KB whose one event name is 65 MiB of 'a' is
 * refused at the value's start with the bound in the message, instead of
 * the window doubling for that one token until memory runs out. */
static void test_one_huge_value_is_refused(void) {
    const char *path = pp_test_path("huge.json.gz");
    gzFile gz = gzopen(path, "wb1");
    if (!gz) {
        pp_test_fail(__FILE__, __LINE__, "cannot write %s", path);
        return;
    }
    static char run[1 << 20];
    memset(run, 'a', sizeof run);
    gzputs(gz, "[\n{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1,\"name\":\"");
    for (int i = 0; i < 65; i++)
        gzwrite(gz, run, sizeof run);
    gzputs(gz, "\"}]");
    gzclose(gz);
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_chrome_read(path, &m, &err), PP_EFORMAT);
    EXPECT(m == NULL);
    EXPECT_CONTAINS(err.msg, "huge.json.gz:2:1 (byte 2): the value that starts here is longer than 64 MiB");
}

/* A counter with two args (so its samples are named "name.key") whose key
 * has a bad escape is refused, and nothing is leaked (LeakSanitizer). */
static void test_bad_escape_in_counter_key(void) {
    const char *path = pp_test_path("counter.json");
    const char *json = "[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"tid\":1,\"ts\":0,"
                       "\"args\":{\"a\":1,\"b\\u12\":2}}]";
    pp_test_write_file(path, json, strlen(json));
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_chrome_read(path, &m, &err), PP_EFORMAT);
    EXPECT_CONTAINS(err.msg, "bad escape in string");
}

/* A model without annotations is written in every format and read back
 * (the writers once computed NULL + 0, undefined behaviour that UBSan stops). */
static void test_model_without_annotations(void) {
    static const char *const names[] = {"bare.json", "bare.pptrace", "bare.pftrace"};
    pp_model *m = one_exec();
    for (size_t k = 0; k < 3; k++) {
        pp_error err = {{0}};
        const char *path = pp_test_path(names[k]);
        EXPECT_EQ_I64(pp_trace_write(m, path, &err), PP_OK);
        if (k == 2)
            continue; /* .pftrace is written only */
        pp_model *back = NULL;
        EXPECT_EQ_I64(pp_trace_read(path, &back, &err), PP_OK);
        EXPECT_EQ_U64(back ? pp_model_event_count(back) : 0, 1);
        pp_model_free(back);
    }
    pp_model_free(m);
}

/* An event whose JSON would pass the readers' 64 MiB bound for one value
 * (12 MiB of control characters, each escaped to 6 bytes) is refused by the
 * writer, naming the event, and no file is left: once the writer wrote a
 * .json its own reader refused. The same annotation written as .pptrace
 * (no escapes) reads back. */
static void test_event_beyond_the_readers_bound_is_refused(void) {
    size_t len = 12u << 20;
    char *text = malloc(len);
    memset(text, 0x01, len);
    pp_model *m = one_exec();
    uint32_t id = 0;
    EXPECT_EQ_I64(pp_model_intern(m, text, len, &id), PP_OK);
    pp_annotation a = {.event = 0, .key = str(m, "blob"), .type = PP_VALUE_STR, .v.s = id};
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    pp_error err = {{0}};
    const char *json = pp_test_path("huge_event.json");
    remove(json);
    EXPECT_EQ_I64(pp_trace_write(m, json, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "event 0");
    EXPECT_CONTAINS(err.msg, "64 MiB");
    EXPECT(access(json, F_OK) != 0);
    const char *pptrace = pp_test_path("huge_event.pptrace");
    EXPECT_EQ_I64(pp_trace_write(m, pptrace, &err), PP_OK);
    pp_model *back = NULL;
    EXPECT_EQ_I64(pp_trace_read(pptrace, &back, &err), PP_OK);
    pp_model_free(back);
    pp_model_free(m);
    free(text);
}

int main(void) {
    RUN(test_annotation_keys_never_become_fields);
    RUN(test_one_huge_value_is_refused);
    RUN(test_bad_escape_in_counter_key);
    RUN(test_model_without_annotations);
    RUN(test_event_beyond_the_readers_bound_is_refused);
    return pp_test_finish();
}
