/* The version-2 block codec on its own (src/io/pptrace_codec.h), as a
 * writer of blocks other than pp_pptrace_write calls it: what is encoded
 * decodes to the same rows, in runs of any size, and annotation events are
 * numbered from the event_base the writer gives. */
#include "io/pptrace_codec.h"
#include "io/pptrace_format.h"
#include "testutil.h"

/* Events [2, 5) of a five-event model decode field for field, values too
 * wide for the model's 32-bit slots among them (model/columns.h), and the
 * varints are one byte where the values are small. */
static void test_events_decode_as_encoded(void) {
    int64_t ts[5] = {0, 100, 90, -7, INT64_MAX}, dur[5] = {1, 2, 300, (int64_t)1 << 32, 0};
    int64_t batch[5] = {-1, 0, 1, INT32_MIN, INT64_MIN + 1};
    uint64_t hw[5] = {0, 1, 2, 3, UINT64_MAX}, xfer[5] = {0, 0, UINT32_MAX, 0, 7};
    uint64_t id[5] = {9, 8, 7, 6, 5};
    double value[5] = {0, 0, 3.0, 3.0, -0.5};
    uint32_t name[5] = {1, 2, 3, 4, 5}, stage[5] = {0}, track[5] = {0, 1, 0, 1, 0};
    uint8_t kind[5] = {0, 1, 2, 3, 4}, role[5] = {6, 5, 4, 3, 2}, phase[5] = {0, 1, 2, 0, 1};
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    for (int k = 0; k < 5; k++) {
        uint32_t id_of;
        char text[2] = {(char)('a' + k), 0};
        EXPECT_EQ_I64(pp_model_intern(m, text, 1, &id_of), PP_OK);
    }
    pp_track_info t;
    pp_track_info_init(&t);
    EXPECT_EQ_I64(pp_model_add_track(m, &t, NULL), PP_OK);
    EXPECT_EQ_I64(pp_model_add_track(m, &t, NULL), PP_OK);
    for (int i = 0; i < 5; i++) {
        pp_event e = {ts[i], dur[i], batch[i], hw[i], xfer[i], id[i], value[i],
                      name[i], stage[i], track[i], kind[i], role[i], phase[i]};
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    }
    pp_cols c;
    pp_model_cols(m, &c);
    unsigned char out[PPTRACE_V2_EVENTS_MAX(3)];
    size_t len = pptrace_events_encode(&c, 2, 3, out);
    EXPECT(len <= sizeof out);
    pp_model_free(m);
    pptrace_decoder d;
    EXPECT_EQ_I64(pptrace_events_open(&d, out, len), PPTRACE_LAYOUT_OK);
    EXPECT_EQ_U64(d.rows, 3);
    EXPECT_EQ_U64(pptrace_get32(out + 4 + 4 * PPTRACE_EV_NAME), 3); /* ids 3, 4, 5: a byte each */
    /* zeroed, as the model's slots are: sparse columns are written only
     * where a value is not zero */
    int32_t ts_out[3] = {0};
    pp_page_bases pages[1] = {{PP_BASE_UNSET, PP_BASE_UNSET}};
    uint32_t dur_out[3] = {0}, hw_out[3] = {0}, xfer_out[3] = {0};
    int16_t batch_out[3] = {0};
    uint64_t id_out[3] = {0};
    double value_out[3] = {0};
    uint32_t name_out[3] = {0};
    uint16_t stage_out[3] = {0}, track_out[3] = {0};
    uint8_t kind_out[3] = {0}, role_out[3] = {0}, phase_out[3] = {0};
    pp_wide_sink wide = {0};
    pp_event_slots s = {.ts32 = ts_out,     .pages = pages, .dur32 = dur_out,
                        .hw32 = hw_out,     .xfer32 = xfer_out, .batch16 = batch_out,
                        .id = id_out,       .value = value_out, .name = name_out,
                        .stage16 = stage_out, .track16 = track_out, .kind = kind_out,
                        .role = role_out,   .phase = phase_out, .base = 0, .wide = &wide};
    pp_event_slots rest; /* a run of one, then of two: slots 1 and 2 */
    pp_event_slots_at(&s, 1, &rest);
    uint32_t row = 0;
    EXPECT_EQ_I64(pptrace_events_decode(&d, &s, 1, &row), -1);
    EXPECT_EQ_I64(pptrace_events_decode(&d, &rest, 2, &row), -1);
    EXPECT_EQ_I64(pptrace_decoder_leftover(&d, PPTRACE_EV_COLUMNS), -1);
    /* dur 2^32 (row 1), batch INT32_MIN and INT64_MIN + 1, hw UINT64_MAX and
     * xfer UINT32_MAX (row 0) are kept beside their slots */
    EXPECT_EQ_U64(wide.col[PP_WIDE_DUR].n + wide.col[PP_WIDE_BATCH].n, 3);
    EXPECT_EQ_U64(wide.col[PP_WIDE_HW].n + wide.col[PP_WIDE_XFER].n, 2);
    for (int i = 0; i < 3; i++) {
        pp_event e;
        pp_event_slots_get(&s, (size_t)i, &e);
        EXPECT_EQ_I64(e.ts_ns, ts[2 + i]);
        EXPECT_EQ_I64(e.dur_ns, dur[2 + i]);
        EXPECT_EQ_I64(e.batch, batch[2 + i]);
        EXPECT_EQ_U64(e.hw_ns, hw[2 + i]);
        EXPECT_EQ_U64(e.xfer_ns, xfer[2 + i]);
        EXPECT_EQ_U64(e.id, id[2 + i]);
        EXPECT(e.value == value[2 + i]);
        EXPECT_EQ_U64(e.name, name[2 + i]);
        EXPECT_EQ_U64(e.stage, stage[2 + i]);
        EXPECT_EQ_U64(e.track, track[2 + i]);
        EXPECT_EQ_U64(e.kind, kind[2 + i]);
        EXPECT_EQ_U64(e.role, role[2 + i]);
        EXPECT_EQ_U64(e.phase, phase[2 + i]);
    }
    pp_wide_free(&wide);
}

/* A writer with no side table (a read-ahead worker's) gives up on a block
 * with a value too wide for its slot, and says so: the reader then decodes
 * that block itself. */
static void test_wide_value_without_side_table_is_refused(void) {
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    pp_track_info t;
    pp_track_info_init(&t);
    EXPECT_EQ_I64(pp_model_add_track(m, &t, NULL), PP_OK);
    pp_event e;
    pp_event_init(&e);
    e.dur_ns = (int64_t)5 << 32;
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    pp_cols c;
    pp_model_cols(m, &c);
    unsigned char out[PPTRACE_V2_EVENTS_MAX(1)];
    size_t len = pptrace_events_encode(&c, 0, 1, out);
    pp_model_free(m);
    pptrace_decoder d;
    EXPECT_EQ_I64(pptrace_events_open(&d, out, len), PPTRACE_LAYOUT_OK);
    int32_t ts_out[1] = {0};
    pp_page_bases pages[1] = {{PP_BASE_UNSET, PP_BASE_UNSET}};
    uint32_t dur_out[1] = {0}, hw_out[1] = {0}, xfer_out[1] = {0}, name_out[1] = {0};
    uint16_t stage_out[1] = {0}, track_out[1] = {0};
    int16_t batch_out[1] = {0};
    uint64_t id_out[1] = {0};
    double value_out[1] = {0};
    uint8_t kind_out[1] = {0}, role_out[1] = {0}, phase_out[1] = {0};
    pp_event_slots s = {.ts32 = ts_out,     .pages = pages, .dur32 = dur_out,
                        .hw32 = hw_out,     .xfer32 = xfer_out, .batch16 = batch_out,
                        .id = id_out,       .value = value_out, .name = name_out,
                        .stage16 = stage_out, .track16 = track_out, .kind = kind_out,
                        .role = role_out,   .phase = phase_out, .base = 0, .wide = NULL};
    uint32_t row = 9;
    EXPECT_EQ_I64(pptrace_events_decode(&d, &s, 1, &row), PPTRACE_DECODE_NO_ROOM);
    EXPECT_EQ_U64(row, 0);
}

/* Annotations of a writer's second part: its events 0 and 3 are the file's
 * 1000 and 1003. */
static void test_annotation_events_start_at_event_base(void) {
    pp_annotation a[3] = {{.event = 0, .key = 4, .type = PP_VALUE_INT, .v.i = -3},
                          {.event = 3, .key = 5, .type = PP_VALUE_DOUBLE, .v.d = 0.25},
                          {.event = 3, .key = 6, .type = PP_VALUE_STR, .v.s = 7}};
    pp_ann packed[3]; /* as the model keeps them */
    for (int k = 0; k < 3; k++)
        EXPECT(pp_ann_pack(&a[k], &packed[k]));
    unsigned char out[PPTRACE_V2_ANNOTATIONS_MAX(3)];
    size_t len = pptrace_annotations_encode(packed, 3, 1000, out);
    pptrace_decoder d;
    EXPECT_EQ_I64(pptrace_annotations_open(&d, out, len), PPTRACE_LAYOUT_OK);
    pp_annotation back[3];
    uint32_t row = 0;
    EXPECT_EQ_I64(pptrace_annotations_decode(&d, back, 3, &row), -1);
    EXPECT_EQ_I64(pptrace_decoder_leftover(&d, PPTRACE_AN_COLUMNS), -1);
    EXPECT_EQ_U64(back[0].event, 1000);
    EXPECT_EQ_U64(back[1].event, 1003);
    EXPECT_EQ_U64(back[2].event, 1003);
    EXPECT_EQ_I64(back[0].v.i, -3);
    EXPECT(back[1].v.d == 0.25);
    EXPECT_EQ_I64(back[2].v.i, 7); /* a string id stays whole in v.i for the reader */
    EXPECT_EQ_U64(back[2].key, 6);
}

int main(void) {
    RUN(test_events_decode_as_encoded);
    RUN(test_wide_value_without_side_table_is_refused);
    RUN(test_annotation_events_start_at_event_base);
    return pp_test_finish();
}
