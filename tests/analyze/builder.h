/* builder.h — building small models by hand for the analysis tests, so each
 * test states its events and the figures that follow from them. */
#ifndef PP_TESTS_ANALYZE_BUILDER_H
#define PP_TESTS_ANALYZE_BUILDER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeprof/analyze.h"
#include "pipeprof/model.h"
#include "testutil.h"

static inline uint32_t b_str(pp_model *m, const char *s) {
    uint32_t id = 0;
    if (pp_model_intern(m, s, strlen(s), &id) != PP_OK)
        abort();
    return id;
}

/* A device track: device `dev`, stream `stream`; simulated when asked. */
static inline uint32_t b_device(pp_model *m, const char *dev, int stream, int simulated) {
    pp_track_info t;
    pp_track_info_init(&t);
    char name[32];
    snprintf(name, sizeof name, "stream %d", stream);
    t.kind = PP_TRACK_KIND_DEVICE;
    t.device = b_str(m, dev);
    t.process = t.device;
    t.name = b_str(m, name);
    t.stream = stream;
    t.flags = simulated ? PP_TRACK_SIMULATED : 0;
    uint32_t idx = 0;
    if (pp_model_add_track(m, &t, &idx) != PP_OK)
        abort();
    return idx;
}

static inline uint32_t b_thread(pp_model *m, const char *name) {
    pp_track_info t;
    pp_track_info_init(&t);
    t.kind = PP_TRACK_KIND_THREAD;
    t.name = b_str(m, name);
    t.process = b_str(m, "host");
    uint32_t idx = 0;
    if (pp_model_add_track(m, &t, &idx) != PP_OK)
        abort();
    return idx;
}

/* A span [start, end) of `role` on `track`; stage NULL = none. */
static inline size_t b_span(pp_model *m, uint32_t track, pp_role role, const char *name,
                     const char *stage, int64_t batch, int64_t start, int64_t end, uint64_t hw,
                     uint64_t xfer) {
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_SPAN;
    e.role = (uint8_t)role;
    e.track = track;
    e.name = b_str(m, name);
    e.stage = stage ? b_str(m, stage) : 0;
    e.batch = batch;
    e.ts_ns = start;
    e.dur_ns = end - start;
    e.hw_ns = hw;
    e.xfer_ns = xfer;
    if (pp_model_add_event(m, &e) != PP_OK)
        abort();
    return pp_model_event_count(m) - 1;
}

static inline size_t b_exec(pp_model *m, uint32_t track, const char *stage, int64_t batch,
                     int64_t start, int64_t end, uint64_t hw, uint64_t xfer) {
    return b_span(m, track, PP_ROLE_EXEC, "infer", stage, batch, start, end, hw, xfer);
}

/* An event of `kind` (no role, stage or batch) `name` on `track` over
 * [start, end); its event index. */
static inline size_t b_plain(pp_model *m, uint8_t kind, uint32_t track, const char *name,
                             int64_t start, int64_t end) {
    pp_event e;
    pp_event_init(&e);
    e.kind = kind;
    e.track = track;
    e.name = b_str(m, name);
    e.ts_ns = start;
    e.dur_ns = end - start;
    if (pp_model_add_event(m, &e) != PP_OK)
        abort();
    return pp_model_event_count(m) - 1;
}

/* An instant `name` on `track` at ts; its event index. */
static inline size_t b_instant(pp_model *m, uint32_t track, const char *name, int64_t ts) {
    return b_plain(m, PP_EV_INSTANT, track, name, ts, ts);
}

/* A "clock alignment" mark on `track` at ts: the method a device's clock
 * was aligned by and its error bound. */
static inline void b_clock_mark(pp_model *m, uint32_t track, int64_t ts, const char *method,
                                int64_t error_ns) {
    size_t at = b_instant(m, track, "clock alignment", ts);
    pp_annotation a = {.event = at, .key = b_str(m, "method"), .type = PP_VALUE_STR,
                       .v.s = b_str(m, method)};
    pp_annotation b = {.event = at, .key = b_str(m, "error_ns"), .type = PP_VALUE_INT,
                       .v.i = error_ns};
    if (pp_model_add_annotation(m, &a) != PP_OK || pp_model_add_annotation(m, &b) != PP_OK)
        abort();
}

static inline void b_region(pp_model *m, uint32_t track, const char *name, int64_t start, int64_t end) {
    b_plain(m, PP_EV_REGION, track, name, start, end);
}

static inline pp_model *b_model(void) {
    pp_model *m = NULL;
    if (pp_model_create(&m) != PP_OK)
        abort();
    return m;
}

/* Builds a report with default options, failing the test on error. */
static inline pp_report *b_report(const pp_model *m, const pp_analyze_options *o) {
    pp_report *r = NULL;
    pp_error err = {{0}};
    int rc = pp_report_build(m, o, &r, &err);
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "pp_report_build: %s (%s)", pp_strerror(rc), err.msg);
    return r;
}

/* The file `file` of the CSV tables of r, written into a fresh folder
 * `dir` under the test tmp dir (malloc'd; NULL, and a failed check, when
 * it cannot be written). */
static inline char *b_csv(const pp_report *r, const char *dir, const char *file) {
    char path[1100];
    snprintf(path, sizeof path, "%s", pp_test_path(dir));
    if (mkdir(path, 0777) != 0 || pp_report_write_csv(r, path, NULL) != PP_OK) {
        pp_test_fail(__FILE__, __LINE__, "cannot write the CSV tables into %s", path);
        return NULL;
    }
    snprintf(path + strlen(path), sizeof path - strlen(path), "/%s", file);
    return pp_test_read_file(path, NULL);
}

static inline const pp_device_stats *b_find_device(const pp_report *r, const char *name) {
    size_t n;
    const pp_device_stats *d = pp_report_devices(r, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return &d[i];
    pp_test_fail(__FILE__, __LINE__, "no device %s in the report", name);
    exit(1);
}

static inline const pp_stage_stats *b_find_stage(const pp_report *r, const char *name, size_t *index) {
    size_t n;
    const pp_stage_stats *s = pp_report_stages(r, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(s[i].name, name) == 0) {
            if (index)
                *index = i;
            return &s[i];
        }
    pp_test_fail(__FILE__, __LINE__, "no stage %s in the report", name);
    exit(1);
}

#endif
