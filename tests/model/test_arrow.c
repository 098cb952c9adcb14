/* The Arrow C Data Interface export (pipeprof/arrow.h) as a consumer that is
 * not pyarrow sees it: the formats, buffers and nulls of the specification,
 * the model's own memory for the plain columns, a narrowed model decoded,
 * the model kept alive until the last struct is released (a child moved
 * out and released after its parent included: the ASan suite checks that
 * nothing is freed early or leaked), and the errors. */
#include <string.h>

#include "model/columns.h"
#include "pipeprof/arrow.h"
#include "testutil.h"

/* Two tracks, three events: a span with stage and batch on track 0, a flow
 * (phase end) and a span without batch, hw or stage on track 1. */
static pp_model *three_events(void) {
    pp_model *m = NULL;
    uint32_t conv, embed, flow;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    pp_model_intern(m, "conv", 4, &conv);
    pp_model_intern(m, "embed", 5, &embed);
    pp_model_intern(m, "flow", 4, &flow);
    pp_track_info t;
    pp_track_info_init(&t);
    pp_model_add_track(m, &t, NULL);
    pp_model_add_track(m, &t, NULL);
    pp_event e;
    pp_event_init(&e);
    e.ts_ns = 1000, e.dur_ns = 50, e.name = conv, e.stage = embed, e.batch = 7, e.hw_ns = 40;
    e.role = PP_ROLE_EXEC;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_event_init(&e);
    e.ts_ns = 1100, e.kind = PP_EV_FLOW, e.name = flow, e.phase = PP_FLOW_END, e.id = 5;
    e.track = 1;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_event_init(&e);
    e.ts_ns = 1200, e.dur_ns = 3, e.name = conv, e.track = 1, e.value = 2.5;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    return m;
}

static struct ArrowArray *child(struct ArrowArray *a, struct ArrowSchema *s, const char *name,
                                struct ArrowSchema **cs) {
    for (int64_t i = 0; i < s->n_children; i++)
        if (strcmp(s->children[i]->name, name) == 0) {
            *cs = s->children[i];
            return a->children[i];
        }
    pp_test_fail(__FILE__, __LINE__, "no column %s", name);
    return NULL;
}

static int valid(const struct ArrowArray *a, int64_t i) {
    const uint8_t *bits = a->buffers[0];
    return !bits || (bits[i >> 3] >> (i & 7) & 1);
}

static void test_events_follow_the_specification(void) {
    pp_model *m = three_events();
    struct ArrowSchema s;
    struct ArrowArray a;
    EXPECT_EQ_I64(pp_arrow_export_model(m, "events", NULL, &s, &a, NULL), PP_OK);
    EXPECT_STR(s.format, "+s");
    EXPECT_EQ_I64(a.length, 3);
    EXPECT_EQ_I64(a.n_children, s.n_children);
    /* metadata: 2 pairs, the first "pipeprof.table" = "events" */
    int32_t n, klen;
    memcpy(&n, s.metadata, 4);
    memcpy(&klen, s.metadata + 4, 4);
    EXPECT_EQ_I64(n, 2);
    EXPECT(klen == 14 && memcmp(s.metadata + 8, "pipeprof.table", 14) == 0);

    struct ArrowSchema *cs;
    struct ArrowArray *c = child(&a, &s, "ts_ns", &cs);
    EXPECT_STR(cs->format, "l");
    EXPECT_EQ_I64(((const int64_t *)c->buffers[1])[2], 1200);
    c = child(&a, &s, "batch", &cs);
    EXPECT(cs->flags & ARROW_FLAG_NULLABLE);
    EXPECT_EQ_I64(c->null_count, 2);
    EXPECT(valid(c, 0) && !valid(c, 1) && !valid(c, 2));
    EXPECT_EQ_I64(((const int64_t *)c->buffers[1])[0], 7);
    c = child(&a, &s, "hw_ns", &cs);
    EXPECT_EQ_I64(c->null_count, 2); /* unknown hardware time is null */
    c = child(&a, &s, "phase", &cs);
    EXPECT(!valid(c, 0) && valid(c, 1) && !valid(c, 2));

    /* name: uint32 indices = the model's column, dictionary = the strings */
    pp_event_columns cols;
    EXPECT_EQ_I64(pp_model_columns(m, &cols), PP_OK);
    c = child(&a, &s, "name", &cs);
    EXPECT_STR(cs->format, "I");
    EXPECT_STR(cs->dictionary->format, "u");
    EXPECT(c->buffers[1] == (const void *)cols.name);
    const int32_t *off = c->dictionary->buffers[1];
    const char *text = c->dictionary->buffers[2];
    uint32_t id = ((const uint32_t *)c->buffers[1])[0];
    EXPECT_EQ_I64(c->dictionary->length, (int64_t)pp_model_string_count(m));
    EXPECT(off[id + 1] - off[id] == 4 && memcmp(text + off[id], "conv", 4) == 0);
    EXPECT(child(&a, &s, "id", &cs)->buffers[1] == (const void *)cols.id);
    EXPECT(child(&a, &s, "value", &cs)->buffers[1] == (const void *)cols.value);
    EXPECT(child(&a, &s, "kind", &cs)->buffers[1] == (const void *)cols.kind);

    s.release(&s);
    EXPECT(s.release == NULL);
    pp_model_free(m); /* the array still holds it */
    EXPECT_EQ_I64(((const int64_t *)a.children[0]->buffers[1])[1], 1100);
    a.release(&a);
    EXPECT(a.release == NULL);
}

/* A consumer may move a child out and release it after the parent. */
static void test_a_moved_child_outlives_its_parent(void) {
    pp_model *m = three_events();
    struct ArrowSchema s;
    struct ArrowArray a, moved;
    EXPECT_EQ_I64(pp_arrow_export_model(m, "events", "name", &s, &a, NULL), PP_OK);
    EXPECT_EQ_I64(a.n_children, 1);
    moved = *a.children[0];
    a.children[0]->release = NULL; /* moved: the parent's release skips it */
    a.release(&a);
    s.release(&s);
    pp_model_free(m);
    EXPECT_EQ_I64(moved.length, 3);
    EXPECT_EQ_I64(moved.dictionary->length, 4);
    moved.release(&moved);
}

static void test_a_held_model_is_read_only_until_released(void) {
    pp_model *m = three_events();
    struct ArrowSchema s;
    struct ArrowArray a;
    EXPECT_EQ_I64(pp_arrow_export_model(m, "events", "id", &s, &a, NULL), PP_OK);
    pp_event e;
    pp_event_init(&e);
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_ESTATE);
    EXPECT_EQ_I64(pp_model_sort_by_time(m), PP_ESTATE);
    s.release(&s);
    a.release(&a);
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_model_free(m);
}

/* A narrowed name column (1 byte a slot) is decoded, values unchanged. */
static void test_a_narrowed_model_is_decoded(void) {
    pp_model *m = three_events();
    pp_model_narrow(m);
    pp_cols c;
    pp_model_cols(m, &c);
    EXPECT(c.name.shift == 0);
    struct ArrowSchema s;
    struct ArrowArray a;
    EXPECT_EQ_I64(pp_arrow_export_model(m, "events", "name", &s, &a, NULL), PP_OK);
    EXPECT(a.children[0]->buffers[1] != c.name.p);
    EXPECT_EQ_I64(((const uint32_t *)a.children[0]->buffers[1])[1], pp_model_find_string(m, "flow"));
    s.release(&s);
    a.release(&a);
    pp_model_free(m);
}

static void test_errors_name_the_table_and_column(void) {
    pp_model *m = three_events();
    struct ArrowSchema s = {0};
    struct ArrowArray a = {0};
    pp_error err = {0};
    EXPECT_EQ_I64(pp_arrow_export_model(m, "event", NULL, &s, &a, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "no model table \"event\"");
    EXPECT_EQ_I64(pp_arrow_export_model(m, "events", "ts_ns,bogus", &s, &a, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "no column \"bogus\"");
    EXPECT(s.release == NULL && a.release == NULL); /* untouched */
    pp_model_free(m);
}

int main(void) {
    RUN(test_events_follow_the_specification);
    RUN(test_a_moved_child_outlives_its_parent);
    RUN(test_a_held_model_is_read_only_until_released);
    RUN(test_a_narrowed_model_is_decoded);
    RUN(test_errors_name_the_table_and_column);
    return pp_test_finish();
}
