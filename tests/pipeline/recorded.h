/* recorded.h — reading back what a pipeline test recorded: a session's
 * model, and the spans of one role, stage and batch in it. */
#ifndef PP_TEST_RECORDED_H
#define PP_TEST_RECORDED_H

#include <string.h>

#include "pipeprof/model.h"
#include "testutil.h"

/* Stops the session and builds the model of what it recorded. */
static inline pp_model *recorded_model(pp_session *s) {
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    return m;
}

static inline const char *event_text(const pp_model *m, uint32_t id) {
    return pp_model_string(m, id);
}

/* Index of the n-th (0-based) event of `kind` and `role` whose stage is
 * `stage` (NULL: any) and batch is `batch` (-2: any); -1 if none. */
static inline long find_event(const pp_model *m, int kind, int role, const char *stage,
                              int64_t batch, int n) {
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        if (e.kind != kind || (kind == PP_EV_SPAN && e.role != role))
            continue;
        if (stage && strcmp(event_text(m, e.stage), stage) != 0)
            continue;
        if (batch != -2 && e.batch != batch)
            continue;
        if (n-- == 0)
            return (long)i;
    }
    return -1;
}

static inline size_t count_spans(const pp_model *m, int role, const char *stage, int64_t batch) {
    size_t n = 0;
    while (find_event(m, PP_EV_SPAN, role, stage, batch, (int)n) >= 0)
        n++;
    return n;
}

static inline pp_event event_at(const pp_model *m, long i) {
    pp_event e;
    pp_event_init(&e);
    if (i >= 0)
        pp_model_event(m, (size_t)i, &e);
    return e;
}

/* The integer annotation `key` of event i; -1 if it has none. */
static inline int64_t annotation_int(const pp_model *m, long i, const char *key) {
    size_t first, n;
    if (i < 0)
        return -1;
    pp_model_annotations_of(m, (size_t)i, &first, &n);
    size_t total;
    const pp_annotation *a = pp_model_annotations(m, &total);
    for (size_t k = first; k < first + n; k++)
        if (strcmp(pp_model_string(m, a[k].key), key) == 0 && a[k].type == PP_VALUE_INT)
            return a[k].v.i;
    return -1;
}

#endif
