/* The record buffer (src/core/record.c, buffer.c): every field of a span
 * written straight into its slot comes back exactly, and a session whose
 * chunks come from the pool of a closed session sees only its own records. */
#include <stdlib.h>

#include "core/session.h"
#include "testutil.h"

/* Span i of a recording, every field derived from i and a session mark. */
static void span_of(pp_span_rec *r, int64_t i, int64_t mark, pp_track track, pp_str name,
                    pp_str stage) {
    pp_span_rec_init(r);
    r->track = track;
    r->name = name;
    r->stage = stage;
    r->ts_ns = mark + 1000 * i;
    r->dur_ns = 3 * i + 1;
    r->batch = i;
    r->hw_ns = (uint64_t)(2 * i + 1);
    r->xfer_ns = (uint64_t)i;
    r->role = (pp_role)(i % (PP_ROLE_USER + 1));
}

typedef struct expect {
    int64_t mark;
    pp_track track;
    pp_str name, stage;
    uint64_t seen, wrong;
} expect;

static int check_records(void *ctx, const pp_thread_meta *thread, const pp_record *recs, size_t n) {
    (void)thread;
    expect *e = ctx;
    for (size_t k = 0; k < n; k++) {
        pp_span_rec want;
        span_of(&want, (int64_t)e->seen, e->mark, e->track, e->name, e->stage);
        const pp_record *r = &recs[k];
        e->wrong += r->kind != PP_REC_SPAN || r->ts_ns != want.ts_ns || r->dur_ns != want.dur_ns ||
                    r->batch != want.batch || r->hw_ns != want.hw_ns ||
                    r->xfer_ns != want.xfer_ns || r->name != want.name ||
                    r->stage != want.stage || r->track != want.track ||
                    r->role != (uint8_t)want.role || r->u.id != 0 || r->phase != 0 || r->pad != 0;
        e->seen++;
    }
    return 0;
}

/* Records n spans marked `mark` in a fresh session and checks them. */
static void record_and_check(uint64_t n, int64_t mark) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    expect e = {.mark = mark, .name = pp_intern("work"), .stage = pp_intern("stage")};
    EXPECT_EQ_I64(pp_track_thread(s, NULL, &e.track), PP_OK);
    for (uint64_t i = 0; i < n; i++) {
        pp_span_rec r;
        span_of(&r, (int64_t)i, mark, e.track, e.name, e.stage);
        EXPECT_EQ_I64(pp_span(s, &r), PP_OK);
    }
    EXPECT_EQ_I64(pp_session_halt(s), PP_OK);
    EXPECT_EQ_I64(pp_session_visit_records(s, check_records, &e), PP_OK);
    EXPECT_EQ_U64(e.seen, n);
    EXPECT_EQ_U64(e.wrong, 0);
    pp_session_close(s);
}

/* Three full-size chunks and a part of one (PP_CHUNK_MAX records each, the
 * default budget's), then a smaller recording that reuses those chunks. */
static void test_spans_round_trip_through_reused_chunks(void) {
    record_and_check(3 * PP_CHUNK_MAX + 100, 1000000000);
    record_and_check(PP_CHUNK_MAX + 7, 5000000000);
    record_and_check(10, 9000000000);
}

/* The pool given back to the system: the next session allocates anew. */
static void test_spans_round_trip_after_the_pool_is_trimmed(void) {
    record_and_check(PP_CHUNK_MAX + 1, 1000);
    pp_chunk_pool_trim();
    record_and_check(PP_CHUNK_MAX + 1, 2000);
}

/* A push/pop range becomes a span with the fields of pp_push. */
static void test_pop_writes_a_span(void) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_track track;
    EXPECT_EQ_I64(pp_track_thread(s, NULL, &track), PP_OK);
    int64_t before = pp_now();
    EXPECT_EQ_I64(pp_push(s, track, pp_intern("range")), PP_OK);
    EXPECT_EQ_I64(pp_pop(s), PP_OK);
    int64_t after = pp_now();
    EXPECT_EQ_I64(pp_session_halt(s), PP_OK);
    pp_session_stats st;
    EXPECT_EQ_I64(pp_session_stats_get(s, &st), PP_OK);
    EXPECT_EQ_U64(st.recorded, 1);
    pp_chunk *c = atomic_load(&atomic_load(&s->threads)->first);
    const pp_record *r = &c->recs[0];
    EXPECT_EQ_I64(r->kind, PP_REC_SPAN);
    EXPECT_EQ_I64(r->name, pp_intern("range"));
    EXPECT_EQ_I64(r->track, track);
    EXPECT_EQ_I64(r->batch, -1);
    EXPECT_EQ_I64(r->role, PP_ROLE_USER);
    EXPECT(r->ts_ns >= before && r->dur_ns >= 0 && r->ts_ns + r->dur_ns <= after);
    pp_session_close(s);
}

int main(void) {
    RUN(test_spans_round_trip_through_reused_chunks);
    RUN(test_spans_round_trip_after_the_pool_is_trimmed);
    RUN(test_pop_writes_a_span);
    return pp_test_finish();
}
