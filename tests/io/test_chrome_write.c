/* The Chrome JSON writer follows docs/format-chrome-json.md to the byte:
 * every model event becomes exactly the Chrome event the table there names,
 * times keep every nanosecond, numbers keep their type, strings of any bytes
 * come out as valid JSON, and a failed write leaves no file. Every written
 * file is also parsed by Python's json module: whatever a viewer or script
 * opens must be JSON, not merely look like it. */
#include <dirent.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "testutil.h"

static uint32_t str(pp_model *m, const char *text) {
    uint32_t id = 0;
    pp_model_intern(m, text, strlen(text), &id);
    return id;
}

static uint32_t track(pp_model *m, pp_track_kind kind, const char *process, const char *name,
                      const char *device, int stream, unsigned flags, int64_t pid, int64_t tid,
                      int sort) {
    pp_track_info t;
    uint32_t index = 0;
    pp_track_info_init(&t);
    t.kind = (uint8_t)kind;
    t.flags = flags;
    t.process = str(m, process);
    t.name = str(m, name);
    t.device = str(m, device);
    t.stream = stream;
    t.pid = pid;
    t.tid = tid;
    t.sort_index = sort;
    EXPECT_EQ_I64(pp_model_add_track(m, &t, &index), PP_OK);
    return index;
}

static void add(pp_model *m, const pp_event *e) {
    EXPECT_EQ_I64(pp_model_add_event(m, e), PP_OK);
}

static void annotate(pp_model *m, pp_value_type type, const char *key, int64_t i, double d,
                     const char *s) {
    pp_annotation a = {.event = pp_model_event_count(m) - 1, .key = str(m, key), .type = (uint8_t)type};
    if (type == PP_VALUE_INT)
        a.v.i = i;
    else if (type == PP_VALUE_DOUBLE)
        a.v.d = d;
    else
        a.v.s = str(m, s);
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
}

/* Writes `m` and returns the file's text (caller frees); NULL on failure. */
static char *write_text(const pp_model *m, const char *name, const char **path_out) {
    const char *path = pp_test_path(name);
    pp_error err = {{0}};
    int rc = pp_chrome_write(m, path, &err);
    EXPECT_EQ_I64(rc, PP_OK);
    if (rc)
        pp_test_fail(__FILE__, __LINE__, "write failed: %s", err.msg);
    if (path_out)
        *path_out = path;
    return rc ? NULL : pp_test_read_file(path, NULL);
}

/* Parses `path` with Python's json module and prints `expr` (over d, the
 * document, and ev, its traceEvents); returns the output, trailing newline
 * removed (caller frees). Parse errors come back as the output. */
static char *python(const char *path, const char *expr) {
    const char *py = getenv("PP_PYTHON");
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "%s -c 'import json,sys\nd=json.load(open(sys.argv[1],encoding=\"utf-8\"))\n"
             "ev=d[\"traceEvents\"]\nprint(%s)' '%s'",
             py && *py ? py : "python3", expr, path);
    int rc = pp_test_run(cmd, &out);
    if (rc != 0)
        pp_test_fail(__FILE__, __LINE__, "python3 could not read %s: %s", path, out ? out : "");
    size_t n = out ? strlen(out) : 0;
    if (n && out[n - 1] == '\n')
        out[n - 1] = 0;
    return out;
}

/* demo (pid 4242): host threads main and worker; NPU stream 1 (simulated);
 * GPU.0 stream 0; the regions and async tracks; a second "demo" process
 * with pid 99. Chrome pids follow first appearance: demo/4242 = 1,
 * NPU = 2, GPU.0 = 3, demo/99 = 4; tids are track index + 1. */
static pp_model *model_with_tracks(void) {
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    track(m, PP_TRACK_KIND_THREAD, "demo", "main", "", -1, 0, 4242, 4242, 0);
    track(m, PP_TRACK_KIND_DEVICE, "NPU", "stream 1", "NPU", 1, PP_TRACK_SIMULATED, 4242, 0, 1);
    track(m, PP_TRACK_KIND_DEVICE, "GPU.0", "stream 0", "GPU.0", 0, 0, 4242, 0, 2);
    track(m, PP_TRACK_KIND_THREAD, "demo", "worker", "", -1, 0, 4242, 4243, 3);
    track(m, PP_TRACK_KIND_REGIONS, "demo", "regions", "", -1, 0, 4242, 0, 4);
    track(m, PP_TRACK_KIND_ASYNC, "demo", "ranges", "", -1, 0, 4242, 0, 5);
    track(m, PP_TRACK_KIND_THREAD, "demo", "other main", "", -1, 0, 99, 7, 6);
    return m;
}

/* One event of every kind, with every field set, becomes exactly the Chrome
 * event of the spec's table, in model order after the metadata; a thread
 * track's tid is its OS thread id (main 4242, worker 4243), other tracks'
 * their row (track index + 1; "other main"'s os tid 7 is such a row). */
static void test_every_event_kind_as_specified(void) {
    pp_model *m = model_with_tracks();
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_SPAN, e.track = 1, e.name = str(m, "infer"), e.stage = str(m, "Embedding");
    e.role = PP_ROLE_EXEC, e.ts_ns = 1234567, e.dur_ns = 1, e.batch = 12, e.hw_ns = 900;
    e.xfer_ns = 45;
    add(m, &e);
    annotate(m, PP_VALUE_INT, "slot", -3, 0, NULL);
    annotate(m, PP_VALUE_DOUBLE, "ratio", 0, 3.0, NULL);
    annotate(m, PP_VALUE_DOUBLE, "tenth", 0, 0.1, NULL);
    annotate(m, PP_VALUE_STR, "precision", 0, 0, "FP16");
    pp_event_init(&e);
    e.kind = PP_EV_SPAN, e.track = 0, e.name = str(m, "plain"), e.ts_ns = 2000, e.dur_ns = 500;
    add(m, &e);
    e.kind = PP_EV_SPAN, e.track = 3, e.name = str(m, "split"), e.ts_ns = 2000, e.dur_ns = 500;
    e.role = PP_ROLE_PARTITION;
    add(m, &e);
    pp_event_init(&e);
    e.kind = PP_EV_INSTANT, e.track = 0, e.name = str(m, "tick"), e.ts_ns = 3000, e.batch = 5;
    add(m, &e);
    pp_event_init(&e);
    e.kind = PP_EV_COUNTER, e.track = 0, e.name = str(m, "queue"), e.ts_ns = 4000, e.value = 2.5;
    add(m, &e);
    pp_event_init(&e);
    e.kind = PP_EV_FLOW, e.track = 0, e.name = str(m, "batch"), e.ts_ns = 5000, e.id = 7;
    e.phase = PP_FLOW_BEGIN;
    add(m, &e);
    e.track = 1, e.ts_ns = 6000, e.phase = PP_FLOW_STEP;
    add(m, &e);
    e.track = 2, e.ts_ns = 7000, e.phase = PP_FLOW_END, e.id = UINT64_MAX;
    add(m, &e);
    pp_event_init(&e);
    e.kind = PP_EV_RANGE, e.track = 5, e.name = str(m, "request"), e.ts_ns = 100, e.dur_ns = 50;
    e.id = 9, e.stage = str(m, "Classifier");
    add(m, &e);
    annotate(m, PP_VALUE_INT, "items", 4, 0, NULL);
    pp_event_init(&e);
    e.kind = PP_EV_REGION, e.track = 4, e.name = str(m, "warm up"), e.ts_ns = 0, e.dur_ns = 2000;
    e.id = 3;
    add(m, &e);
    const char *path;
    char *text = write_text(m, "kinds.json", &path);
    const char *lines[] = {
        "{\"ph\":\"X\",\"name\":\"infer\",\"cat\":\"exec\",\"pid\":2,\"tid\":2,\"ts\":1234.567,"
        "\"dur\":0.001,\"args\":{\"stage\":\"Embedding\",\"batch_id\":12,\"hw_ns\":900,"
        "\"transfer_ns\":45,\"role\":\"exec\",\"slot\":-3,\"ratio\":3.0,\"tenth\":0.1,"
        "\"precision\":\"FP16\"}},\n",
        "{\"ph\":\"X\",\"name\":\"plain\",\"cat\":\"span\",\"pid\":1,\"tid\":4242,\"ts\":2.000,"
        "\"dur\":0.500},\n",
        "{\"ph\":\"X\",\"name\":\"split\",\"cat\":\"partition\",\"pid\":1,\"tid\":4243,\"ts\":2.000,"
        "\"dur\":0.500,\"args\":{\"role\":\"partition\"}},\n",
        "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"tick\",\"pid\":1,\"tid\":4242,\"ts\":3.000,"
        "\"args\":{\"batch_id\":5}},\n",
        "{\"ph\":\"C\",\"name\":\"queue\",\"pid\":1,\"tid\":4242,\"ts\":4.000,\"args\":{\"value\":2.5}},\n",
        "{\"ph\":\"s\",\"bp\":\"e\",\"name\":\"batch\",\"cat\":\"flow\",\"id\":7,\"pid\":1,\"tid\":4242,"
        "\"ts\":5.000},\n",
        "{\"ph\":\"t\",\"bp\":\"e\",\"name\":\"batch\",\"cat\":\"flow\",\"id\":7,\"pid\":2,\"tid\":2,"
        "\"ts\":6.000},\n",
        "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"batch\",\"cat\":\"flow\",\"id\":18446744073709551615,"
        "\"pid\":3,\"tid\":3,\"ts\":7.000},\n",
        "{\"ph\":\"b\",\"cat\":\"range\",\"id\":9,\"name\":\"request\",\"pid\":1,\"tid\":6,"
        "\"ts\":0.100,\"args\":{\"stage\":\"Classifier\",\"items\":4}},\n"
        "{\"ph\":\"e\",\"cat\":\"range\",\"id\":9,\"name\":\"request\",\"pid\":1,\"tid\":6,"
        "\"ts\":0.150},\n",
        "{\"ph\":\"X\",\"name\":\"warm up\",\"cat\":\"region\",\"pid\":1,\"tid\":5,\"ts\":0.000,"
        "\"dur\":2.000,\"args\":{\"region_id\":3}}\n]}\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        EXPECT_CONTAINS(text, lines[i]);
    /* 4 processes and 7 tracks give 2 + 2 metadata events each. */
    char *phs = python(path, "\"\".join(e[\"ph\"] for e in ev)");
    EXPECT_STR(phs, "MMMMMMMMMMMMMMMMMMMMMM" "XXXiCstfbeX");
    free(phs);
    free(text);
    pp_model_free(m);
}

/* Processes are the distinct (process, pid) pairs; one is labeled simulated
 * when any of its tracks is; each track carries what restores it exactly. */
static void test_metadata_names_processes_and_tracks(void) {
    pp_model *m = model_with_tracks();
    track(m, PP_TRACK_KIND_DEVICE, "NPU", "stream 2", "NPU", 2, 0, 4242, 0, 7);
    const char *path;
    char *text = write_text(m, "meta.json", &path);
    const char *lines[] = {
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"demo\"}},\n"
        "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":1,\"tid\":0,"
        "\"args\":{\"sort_index\":1}},\n",
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"tid\":0,"
        "\"args\":{\"name\":\"NPU (simulated)\"}},\n",
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":3,\"tid\":0,\"args\":{\"name\":\"GPU.0\"}},\n",
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":4,\"tid\":0,\"args\":{\"name\":\"demo\"}},\n",
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":2,\"args\":{\"name\":\"stream 1\","
        "\"pipeprof_track\":{\"kind\":\"device\",\"process\":\"NPU\",\"device\":\"NPU\",\"stream\":1,"
        "\"simulated\":true,\"pid\":4242,\"os_tid\":0,\"sort_index\":1}}},\n"
        "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":2,\"tid\":2,"
        "\"args\":{\"sort_index\":1}},\n",
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":8,\"args\":{\"name\":\"stream 2\","
        "\"pipeprof_track\":{\"kind\":\"device\",\"process\":\"NPU\",\"device\":\"NPU\",\"stream\":2,"
        "\"simulated\":false,\"pid\":4242,\"os_tid\":0,\"sort_index\":7}}},\n",
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":4243,\"args\":{\"name\":\"worker\","
        "\"pipeprof_track\":{\"kind\":\"thread\",\"process\":\"demo\",\"device\":\"\",\"stream\":-1,"
        "\"simulated\":false,\"pid\":4242,\"os_tid\":4243,\"sort_index\":3}}},\n",
        "\"pipeprof_track\":{\"kind\":\"regions\",",
        "\"pipeprof_track\":{\"kind\":\"async\",",
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":4,\"tid\":7,\"args\":{\"name\":\"other main\",",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        EXPECT_CONTAINS(text, lines[i]);
    char *names = python(path, "sorted(set(e[\"args\"][\"name\"] for e in ev "
                               "if e[\"name\"] == \"process_name\"))");
    EXPECT_STR(names, "['GPU.0', 'NPU (simulated)', 'demo']");
    free(names);
    free(text);
    pp_model_free(m);
}

/* otherData carries the metadata and every thread's drops: the file says
 * what was lost. */
static void test_other_data_carries_meta_and_drops(void) {
    pp_model *m = model_with_tracks();
    pp_model_meta *meta = pp_model_meta_mut(m);
    meta->level = 1, meta->process_name = str(m, "demo"), meta->dropped_records = 7;
    meta->truncated_bytes = 11, meta->ignored_events = 3, meta->unmatched_ends = 2;
    pp_thread_info t = {.tid = 4242, .name = str(m, "main"), .recorded = 1200, .dropped = 0};
    EXPECT_EQ_I64(pp_model_add_thread(m, &t), PP_OK);
    t = (pp_thread_info){.tid = 4243, .name = str(m, "worker"), .recorded = 10, .dropped = 7};
    EXPECT_EQ_I64(pp_model_add_thread(m, &t), PP_OK);
    const char *path;
    char *text = write_text(m, "other.json", &path);
    char expected[512];
    snprintf(expected, sizeof expected,
             "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"pipeprof_version\":\"%s\",\"level\":1,"
             "\"process_name\":\"demo\",\"dropped_records\":7,\"truncated_bytes\":11,"
             "\"ignored_events\":3,\"unmatched_ends\":2,\"threads\":["
             "{\"tid\":4242,\"name\":\"main\",\"recorded\":1200,\"dropped\":0},"
             "{\"tid\":4243,\"name\":\"worker\",\"recorded\":10,\"dropped\":7}]},\n"
             "\"traceEvents\":[\n",
             pp_version());
    EXPECT(text && strncmp(text, expected, strlen(expected)) == 0);
    if (text && strncmp(text, expected, strlen(expected)) != 0)
        pp_test_fail(__FILE__, __LINE__, "file starts with:\n%.600s", text);
    char *drops = python(path, "[t[\"dropped\"] for t in d[\"otherData\"][\"threads\"]]");
    EXPECT_STR(drops, "[0, 7]");
    free(drops);
    free(text);
    pp_model_free(m);
}

/* Microseconds with three decimals from integer nanoseconds: exact at 1 ns,
 * at real epoch values (where a double would lose the nanoseconds), at the
 * ends of int64, and below zero. */
static void test_times_keep_every_nanosecond(void) {
    static const struct {
        int64_t ns;
        const char *text;
    } cases[] = {
        {0, "0.000"},
        {1, "0.001"},
        {999, "0.999"},
        {1000, "1.000"},
        {1001, "1.001"},
        {1700000000000000123LL, "1700000000000000.123"},
        {INT64_MAX, "9223372036854775.807"},
        {-250, "-0.250"},
        {-1000, "-1.000"},
        {-1700000000000000123LL, "-1700000000000000.123"},
        {-INT64_MAX, "-9223372036854775.807"}, /* the earliest time a model holds */
    };
    pp_model *m = model_with_tracks();
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_INSTANT, e.name = str(m, "t");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        e.ts_ns = cases[i].ns;
        add(m, &e);
    }
    e.kind = PP_EV_SPAN, e.ts_ns = 0, e.dur_ns = 1700000000000000123LL;
    add(m, &e);
    const char *path;
    char *text = write_text(m, "times.json", &path);
    char expected[128];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(expected, sizeof expected, "\"ts\":%s}", cases[i].text);
        EXPECT_CONTAINS(text, expected);
    }
    EXPECT_CONTAINS(text, "\"ts\":0.000,\"dur\":1700000000000000.123}");
    char *count = python(path, "sum(1 for e in ev if e[\"ph\"] != \"M\")");
    EXPECT_STR(count, "12");
    free(count);
    free(text);
    pp_model_free(m);
}

/* The text written after `"value":` in the counter that follows `from`. */
static double counter_value(const char **from, char *raw, size_t rawlen) {
    const char *at = strstr(*from, "\"value\":");
    if (!at) {
        snprintf(raw, rawlen, "(missing)");
        return 0;
    }
    at += 8;
    size_t n = strcspn(at, "}");
    snprintf(raw, rawlen, "%.*s", (int)n, at);
    *from = at + n;
    return strtod(raw, NULL);
}

/* Doubles read back to the same bits, always show they are doubles (a '.'
 * or an exponent), and become null where JSON has no number for them. */
static void test_doubles_round_trip_and_stay_doubles(void) {
    static const struct {
        double v;
        const char *text; /* NULL: only round trip and the marker are checked */
    } cases[] = {
        {3.0, "3.0"}, {-0.125, "-0.125"}, {0.1, "0.1"}, {1e300, "1e+300"}, {-0.0, "-0.0"},
        {0.0, "0.0"}, {9007199254740994.0, "9007199254740994.0"}, {1.0 / 3, NULL},
        {2.0 / 3, NULL}, {5e-324, NULL}, {DBL_MAX, NULL}, {-DBL_MIN, NULL},
        {123456789.123456789, NULL}, {1e21, NULL}, {1e-7, NULL},
    };
    size_t n = sizeof cases / sizeof *cases;
    pp_model *m = model_with_tracks();
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_COUNTER, e.name = str(m, "c");
    for (size_t i = 0; i < n; i++) {
        e.value = cases[i].v;
        add(m, &e);
    }
    double specials[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        e.value = specials[i];
        add(m, &e);
    }
    e.kind = PP_EV_INSTANT;
    add(m, &e);
    annotate(m, PP_VALUE_DOUBLE, "nan", 0, NAN, NULL);
    annotate(m, PP_VALUE_DOUBLE, "third", 0, 1.0 / 3, NULL);
    const char *path;
    char *text = write_text(m, "doubles.json", &path);
    const char *at = text ? text : "";
    for (size_t i = 0; i < n; i++) {
        char raw[64];
        double got = counter_value(&at, raw, sizeof raw);
        if (memcmp(&got, &cases[i].v, sizeof got) != 0)
            pp_test_fail(__FILE__, __LINE__, "case %zu: \"%s\" does not read back as %.17g", i,
                         raw, cases[i].v);
        EXPECT(strpbrk(raw, ".e") != NULL);
        if (cases[i].text)
            EXPECT_STR(raw, cases[i].text);
    }
    for (size_t i = 0; i < 3; i++) {
        char raw[64];
        counter_value(&at, raw, sizeof raw);
        EXPECT_STR(raw, "null");
    }
    EXPECT_CONTAINS(text, "\"args\":{\"nan\":null,\"third\":0.");
    char *third = python(path, "[e[\"args\"][\"third\"] == 1/3 for e in ev if e[\"ph\"] == \"i\"]");
    EXPECT_STR(third, "[True]");
    free(third);
    free(text);
    pp_model_free(m);
}

/* Under a locale whose decimal point is a comma, numbers are still JSON. */
static void test_doubles_ignore_the_locale(void) {
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "de_DE"};
    const char *found = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !found; i++)
        if (setlocale(LC_NUMERIC, names[i]))
            found = names[i];
    if (!found) {
        fprintf(stderr, "note: no decimal-comma locale installed; locale check not run\n");
        return;
    }
    pp_model *m = model_with_tracks();
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_COUNTER, e.name = str(m, "c"), e.value = 0.1;
    add(m, &e);
    char *text = write_text(m, "locale.json", NULL);
    setlocale(LC_NUMERIC, "C");
    EXPECT_CONTAINS(text, "\"value\":0.1}");
    free(text);
    pp_model_free(m);
}

/* Names with quotes, backslashes, control characters, UTF-8 and bytes that
 * are not UTF-8 come out as valid JSON that decodes to the same text, with
 * U+FFFD for each byte that is not part of valid UTF-8. */
static void test_strings_are_escaped(void) {
    const char *nasty = "q\"b\\n\nt\tc\x01\x1f\x7f \xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80 "
                        "\xff|\xe2\x9c|\xed\xa0\x80|\xc0\xaf";
    pp_model *m = model_with_tracks();
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_INSTANT, e.name = str(m, nasty);
    add(m, &e);
    annotate(m, PP_VALUE_STR, nasty, 0, 0, nasty);
    const char *path;
    char *text = write_text(m, "escape.json", &path);
    const char *json = "\"q\\\"b\\\\n\\u000at\\u0009c\\u0001\\u001f\x7f \xc3\xa9\xe2\x9c\x93"
                       "\xf0\x9f\x98\x80 \\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
                       "\\ufffd\\ufffd\"";
    char expected[512];
    snprintf(expected, sizeof expected, "\"name\":%s,\"pid\"", json);
    EXPECT_CONTAINS(text, expected);
    snprintf(expected, sizeof expected, "\"args\":{%s:%s}}", json, json);
    EXPECT_CONTAINS(text, expected);
    char *points = python(path, "[\" \".join(\"%x\" % ord(ch) for ch in e[\"name\"]) "
                                "for e in ev if e[\"ph\"] == \"i\"][0]");
    EXPECT_STR(points, "71 22 62 5c 6e a 74 9 63 1 1f 7f 20 e9 2713 1f600 20 "
                       "fffd 7c fffd fffd 7c fffd fffd fffd 7c fffd fffd");
    free(points);
    free(text);
    pp_model_free(m);
}

/* More than the write buffer holds, and one string longer than it: the file
 * is still whole and valid. */
static void test_large_output_is_whole(void) {
    pp_model *m = model_with_tracks();
    size_t long_len = 3u << 20;
    char *name = malloc(long_len + 1);
    memset(name, 'a', long_len);
    name[long_len - 1] = '"';
    name[long_len] = 0;
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_SPAN, e.track = 1, e.name = str(m, "exec"), e.stage = str(m, "s");
    e.role = PP_ROLE_EXEC, e.dur_ns = 10;
    for (int i = 0; i < 50000; i++) {
        e.ts_ns = i * 100, e.batch = i;
        add(m, &e);
    }
    e.name = str(m, name);
    add(m, &e);
    const char *path;
    char *text = write_text(m, "large.json", &path);
    char *count = python(path, "(sum(1 for e in ev if e[\"ph\"] == \"X\"), "
                               "max(len(e[\"name\"]) for e in ev))");
    char expected[64];
    snprintf(expected, sizeof expected, "(50001, %zu)", long_len);
    EXPECT_STR(count, expected);
    free(count);
    free(text);
    free(name);
    pp_model_free(m);
}

/* A model with no tracks and no events is still a complete document. */
static void test_empty_model(void) {
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    const char *path;
    char *text = write_text(m, "empty.json", &path);
    char *count = python(path, "len(ev), d[\"otherData\"][\"threads\"]");
    EXPECT_STR(count, "0 []");
    free(count);
    free(text);
    pp_model_free(m);
}

/* No file of any name (target or temporary) is left in `dir`. */
static int dir_has_leftovers(const char *dir, const char *stem) {
    DIR *d = opendir(dir);
    struct dirent *ent;
    int found = 0;
    while (d && (ent = readdir(d)))
        found |= strncmp(ent->d_name, stem, strlen(stem)) == 0 && strstr(ent->d_name, ".tmp.");
    if (d)
        closedir(d);
    return found;
}

/* A write that cannot complete says which path failed and leaves nothing
 * that looks like a trace. */
static void test_failed_write_leaves_no_file(void) {
    pp_model *m = model_with_tracks();
    pp_error err = {{0}};
    struct stat st;
    EXPECT_EQ_I64(pp_chrome_write(m, "/nonexistent-dir/trace.json", &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "/nonexistent-dir/trace.json");
    EXPECT(stat("/nonexistent-dir/trace.json", &st) != 0);

    /* The target is a directory: everything is written, the rename fails. */
    const char *dir_target = pp_test_path("target_is_dir.json");
    EXPECT_EQ_I64(mkdir(dir_target, 0755), 0);
    err.msg[0] = 0;
    EXPECT_EQ_I64(pp_chrome_write(m, dir_target, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, dir_target);
    EXPECT(stat(dir_target, &st) == 0 && S_ISDIR(st.st_mode));
    char parent[1024];
    snprintf(parent, sizeof parent, "%s", dir_target);
    char *slash = strrchr(parent, '/');
    *slash = 0;
    EXPECT(!dir_has_leftovers(parent, slash + 1));
    rmdir(dir_target);
    pp_model_free(m);
}

/* Arguments the writer cannot honour are refused before any file is made. */
static void test_bad_arguments_are_refused(void) {
    pp_model *m = model_with_tracks();
    pp_error err = {{0}};
    const char *path = pp_test_path("refused.json");
    struct stat st;
    EXPECT_EQ_I64(pp_chrome_write(NULL, path, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "pp_chrome_write: model and path are required");
    EXPECT_EQ_I64(pp_chrome_write(m, NULL, &err), PP_EINVAL);
    pp_model_meta_mut(m)->level = 7; /* the reader accepts -1..2 only */
    EXPECT_EQ_I64(pp_chrome_write(m, path, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "refused.json: recording level 7 is not -1 (unknown), 0, 1 or 2");
    EXPECT(stat(path, &st) != 0);
    pp_model_free(m);
}

int main(void) {
    RUN(test_every_event_kind_as_specified);
    RUN(test_metadata_names_processes_and_tracks);
    RUN(test_other_data_carries_meta_and_drops);
    RUN(test_times_keep_every_nanosecond);
    RUN(test_doubles_round_trip_and_stay_doubles);
    RUN(test_doubles_ignore_the_locale);
    RUN(test_strings_are_escaped);
    RUN(test_large_output_is_whole);
    RUN(test_empty_model);
    RUN(test_failed_write_leaves_no_file);
    RUN(test_bad_arguments_are_refused);
    return pp_test_finish();
}
