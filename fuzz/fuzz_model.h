/* fuzz_model.h — reads every field of a model a reader returned, so that a
 * reader that stored an out-of-range id or index shows up under ASan. */
#ifndef PP_FUZZ_MODEL_H
#define PP_FUZZ_MODEL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "pipeprof/model.h"

static inline void fuzz_walk_model(const pp_model *m) {
    volatile size_t sink = 0;
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        sink += strlen(pp_model_string(m, e.name)) + strlen(pp_model_string(m, e.stage));
        const pp_track_info *t = pp_model_track(m, e.track);
        sink += t ? strlen(pp_model_string(m, t->name)) : 0;
    }
    size_t n;
    const pp_annotation *a = pp_model_annotations(m, &n);
    for (size_t i = 0; i < n; i++)
        sink += strlen(pp_model_string(m, a[i].key)) +
                (a[i].type == PP_VALUE_STR ? strlen(pp_model_string(m, a[i].v.s)) : 0);
    (void)sink;
}

/* The events Chrome JSON cannot carry: counters whose value is NaN or
 * infinite are written as null, which the reader skips
 * (docs/format-chrome-json.md). */
static inline size_t fuzz_json_lossy_events(const pp_model *m) {
    size_t n = 0;
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        n += e.kind == PP_EV_COUNTER && !isfinite(e.value);
    }
    return n;
}

/* What a reader accepted, written as `ext` (into /dev/shm: memory, not
 * disk) must read back with every event (but those the format cannot
 * carry): a writer that produces what pipeprof then refuses (a time, a
 * level, a duplicate key) or loses events aborts, which libFuzzer reports. */
static inline void fuzz_round_trip(const pp_model *m, const char *ext) {
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/pp-fuzz-%d%s", (int)getpid(), ext);
    pp_error err = {{0}};
    if (pp_trace_write(m, path, &err) != PP_OK)
        return; /* refused with a message: fine */
    pp_model *back = NULL;
    int rc = pp_trace_read(path, &back, &err);
    remove(path);
    if (rc != PP_OK) {
        fprintf(stderr, "round trip through %s failed: %s\n", ext, err.msg);
        abort();
    }
    size_t lossy = strcmp(ext, ".json") == 0 ? fuzz_json_lossy_events(m) : 0;
    if (pp_model_event_count(back) != pp_model_event_count(m) - lossy) {
        fprintf(stderr, "round trip through %s: %zu events (%zu it cannot carry) became %zu\n",
                ext, pp_model_event_count(m), lossy, pp_model_event_count(back));
        abort();
    }
    pp_model_free(back);
}

#endif
