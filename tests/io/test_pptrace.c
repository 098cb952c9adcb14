/* The native .pptrace format: what is written reads back field for field,
 * a file cut short yields every complete block and says how much was lost,
 * and a damaged file is refused with its name, the byte offset and the
 * problem. Byte offsets below come from the layout in docs/format-pptrace.md
 * (16-byte header; blocks of u32 type, u32 length, payload, u32 CRC), which
 * this file decodes on its own rather than through the library's headers. */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/pptrace_codec.h"
#include "pipeprof/io.h"
#include "testutil.h"

enum { T_STRINGS = 1, T_META = 2, T_TRACKS = 3, T_THREADS = 4, T_EVENTS = 5, T_ANNOTATIONS = 6,
       T_END = 7 };
#define T_CLOCK 0x80000001u
static const char *const type_names[] = {"", "STRINGS", "META", "TRACKS", "THREADS", "EVENTS",
                                         "ANNOTATIONS", "END"};

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}

static void put64(unsigned char *p, uint64_t v) {
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* One block of a file as the documented framing describes it. */
typedef struct block {
    size_t at, end; /* offset of its head; offset just past its CRC */
    uint32_t type, len, rows;
} block;

/* Splits a complete file into its blocks; returns how many. */
static size_t parse_blocks(const unsigned char *data, size_t len, block *out, size_t max) {
    size_t n = 0;
    for (size_t at = 16; at + 12 <= len && n < max; n++) {
        block *b = &out[n];
        b->at = at;
        b->type = get32(data + at);
        b->len = get32(data + at + 4);
        b->end = at + 12 + b->len;
        b->rows = b->len >= 4 ? get32(data + at + 8) : 0;
        at = b->end;
    }
    return n;
}

/* The n-th block (0-based) of `type`; fails the test if absent. */
static block find_block(const unsigned char *data, size_t len, uint32_t type, int nth) {
    block all[64];
    size_t n = parse_blocks(data, len, all, 64);
    for (size_t i = 0; i < n; i++)
        if (all[i].type == type && nth-- == 0)
            return all[i];
    pp_test_fail(__FILE__, __LINE__, "no block of type %u", type);
    return (block){0};
}

/* Recomputes a block's CRC after a test edited it, so that the reader gets
 * past the checksum to the field under test. */
static void fix_crc(unsigned char *data, block b) {
    put32(data + b.end - 4, (uint32_t)crc32(0L, data + b.at, (uInt)(8 + b.len)));
}

/* A copy of the file with a block of `type` and `payload` inserted at
 * offset `at` (a block boundary), its CRC correct; *len grows. */
static unsigned char *insert_block(const unsigned char *data, size_t *len, size_t at, uint32_t type,
                                   const void *payload, uint32_t plen) {
    unsigned char *out = malloc(*len + 12 + plen);
    memcpy(out, data, at);
    put32(out + at, type);
    put32(out + at + 4, plen);
    memcpy(out + at + 8, payload, plen);
    fix_crc(out, (block){at, at + 12 + plen, type, plen, 0});
    memcpy(out + at + 12 + plen, data + at, *len - at);
    *len += 12 + plen;
    return out;
}

static const char *write_model(const pp_model *m, const char *name) {
    pp_error err = {{0}};
    const char *path = pp_test_path(name);
    EXPECT_EQ_I64(pp_pptrace_write(m, path, &err), PP_OK);
    EXPECT_STR(err.msg, "");
    return path;
}

/* The bytes of `m` written as the file `name`. */
static unsigned char *written_bytes(const pp_model *m, const char *name, size_t *len) {
    return (unsigned char *)pp_test_read_file(write_model(m, name), len);
}

static uint32_t str(pp_model *m, const char *text) {
    uint32_t id = 0;
    EXPECT_EQ_I64(pp_model_intern(m, text, strlen(text), &id), PP_OK);
    return id;
}

static uint32_t track(pp_model *m, uint8_t kind, uint32_t flags, const char *process,
                      const char *name, const char *device, int32_t stream, int64_t pid,
                      int64_t tid, int32_t sort_index) {
    pp_track_info t = {kind, flags, str(m, process), str(m, name), str(m, device), stream, pid, tid,
                       sort_index};
    uint32_t index = 0;
    EXPECT_EQ_I64(pp_model_add_track(m, &t, &index), PP_OK);
    return index;
}

static void event(pp_model *m, uint8_t kind, uint8_t role, uint8_t phase, uint32_t trk,
                  int64_t ts, int64_t dur, int64_t batch, uint64_t hw, uint64_t xfer, uint64_t id,
                  double value, const char *name, const char *stage) {
    pp_event e = {ts, dur, batch, hw, xfer, id, value, str(m, name), str(m, stage), trk,
                  kind, role, phase};
    EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
}

static void annotate(pp_model *m, uint64_t ev, const char *key, uint8_t type, int64_t i,
                     double d, const char *s) {
    pp_annotation a = {.event = ev, .key = str(m, key), .type = type};
    if (type == PP_VALUE_INT)
        a.v.i = i;
    else if (type == PP_VALUE_DOUBLE)
        a.v.d = d;
    else
        a.v.s = str(m, s);
    EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
}

/* One of everything: every event kind, role and phase, every track kind,
 * extreme integers, awkward doubles, every annotation type, all meta. */
/* with_clock: the clock meta a trace has recorded since the CLOCK block
 * (the checked-in version-1 file predates it, and reads without one) */
static pp_model *full_model_clock(int with_clock) {
    pp_model *m;
    pp_model_create(&m);
    uint32_t gpu = track(m, PP_TRACK_KIND_DEVICE, 0, "GPU.0", "stream 1", "GPU.0", 1, 4242, 0, 3);
    uint32_t npu = track(m, PP_TRACK_KIND_DEVICE, PP_TRACK_SIMULATED, "NPU", "req 0", "NPU", 0,
                         (int64_t)1 << 40, 0, -5);
    uint32_t host = track(m, PP_TRACK_KIND_THREAD, 0, "demo", "main \"q\"\t\\", "", -1, 4242,
                          INT64_MAX, 0);
    uint32_t regions = track(m, PP_TRACK_KIND_REGIONS, 0, "demo", "regions", "", -1, -1, 0, 100);
    uint32_t async = track(m, PP_TRACK_KIND_ASYNC, 0, "demo", "précision ✓", "", -1, 4242, 0, 101);
    for (uint8_t role = PP_ROLE_NONE; role <= PP_ROLE_USER; role++)
        event(m, PP_EV_SPAN, role, 0, role % 2 ? npu : gpu, -5 + role * 1000, 999 + role,
              role == 3 ? -7 : (int64_t)role, role ? 900 : 0, role ? 45 : 0, 0, 0.0, "infer",
              role ? "Embedding" : "");
    event(m, PP_EV_SPAN, PP_ROLE_EXEC, 0, gpu, -INT64_MAX, INT64_MAX, INT64_MAX, UINT64_MAX,
          UINT64_MAX, 0, 0.0, "extreme", "Embedding");
    event(m, PP_EV_INSTANT, 0, 0, host, 7, 0, -1, 0, 0, 0, 0.0, "tick", "");
    const double values[] = {-0.125, 3.75, 1e300, -0.0, -1e-300, NAN, INFINITY};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        event(m, PP_EV_COUNTER, 0, 0, host, 10 + (int64_t)i, 0, -1, 0, 0, 0, values[i], "queue", "");
    for (uint8_t phase = PP_FLOW_BEGIN; phase <= PP_FLOW_END; phase++)
        event(m, PP_EV_FLOW, 0, phase, host, 20 + phase, 0, 4, 0, 0, UINT64_MAX - phase, 0.0,
              "batch", "");
    event(m, PP_EV_RANGE, 0, 0, async, 30, 5000, 2, 0, 0, (uint64_t)1 << 63, 0.0, "request", "");
    event(m, PP_EV_REGION, 0, 0, regions, 0, 90000, -1, 0, 0, 3, 0.0, "warm up", "");
    annotate(m, 0, "slot", PP_VALUE_INT, INT64_MIN, 0, NULL);
    annotate(m, 0, "ratio", PP_VALUE_DOUBLE, 0, -2.5, NULL);
    annotate(m, 0, "precision", PP_VALUE_STR, 0, 0, "FP16 \"q\"");
    annotate(m, 3, "slot", PP_VALUE_INT, INT64_MAX, 0, NULL);
    annotate(m, 8, "ratio", PP_VALUE_DOUBLE, 0, 1.0 / 3.0, NULL);
    annotate(m, 8, "note", PP_VALUE_STR, 0, 0, "");
    annotate(m, 19, "précision ✓", PP_VALUE_STR, 0, 0, "line\nbreak");
    pp_thread_info threads[] = {{4243, str(m, "main"), 1000, 7},
                                {((int64_t)1 << 40) + 5, str(m, "worker"), 0, UINT64_MAX}};
    EXPECT_EQ_I64(pp_model_add_thread(m, &threads[0]), PP_OK);
    EXPECT_EQ_I64(pp_model_add_thread(m, &threads[1]), PP_OK);
    pp_model_meta *meta = pp_model_meta_mut(m);
    *meta = (pp_model_meta){2, str(m, "demo"), 7, 11, 3, 2, 0, 0, 0, 0, 0};
    if (with_clock) {
        meta->clock = str(m, "CLOCK_MONOTONIC"), meta->host = str(m, "host-a");
        meta->boot_id = str(m, "7d9c0e2a-boot");
        meta->alignment = str(m, "b.pptrace: sync marks"), meta->alignment_error_ns = 1234;
    }
    return m;
}

static pp_model *full_model(void) {
    return full_model_clock(1);
}

static void expect_same_model(const pp_model *a, const pp_model *b) {
    char why[256] = "";
    if (!a || !b || !pp_test_models_equal(a, b, why, sizeof why))
        pp_test_fail(__FILE__, __LINE__, "models differ: %s", a && b ? why : "missing model");
    EXPECT(a && b && pp_model_string_count(a) == pp_model_string_count(b));
    for (uint32_t id = 0; a && b && id < pp_model_string_count(a); id++) /* ids are kept */
        EXPECT_STR(pp_model_string(b, id), pp_model_string(a, id));
}

/* Every field of every table survives a write and a read. */
static void test_every_field_round_trips(void) {
    pp_model *m = full_model(), *back = NULL;
    pp_error err = {{0}};
    const char *path = write_model(m, "full.pptrace");
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    EXPECT_STR(err.msg, "");
    expect_same_model(m, back);
    EXPECT_EQ_U64(pp_model_event_count(back), 21);
    EXPECT_EQ_U64(pp_model_meta_get(back)->truncated_bytes, 11);
    pp_model_free(m);
    pp_model_free(back);
}

/* An empty model is a header, a META block and an END block: 120 bytes. */
static void test_empty_model_round_trips(void) {
    pp_model *m, *back = NULL;
    pp_error err = {{0}};
    size_t len = 0;
    pp_model_create(&m);
    const char *path = write_model(m, "empty.pptrace");
    free(pp_test_read_file(path, &len));
    EXPECT_EQ_U64(len, 16 + (12 + 40) + (12 + 40));
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    expect_same_model(m, back);
    EXPECT(back && pp_model_meta_get(back)->level == -1 && pp_model_string_count(back) == 1);
    pp_model_free(m);
    pp_model_free(back);
}

/* n events on two tracks with one annotation every 10000 events and on the
 * last; blocks hold 65536 events. */
static pp_model *many_events(size_t n) {
    pp_model *m;
    pp_model_create(&m);
    uint32_t t0 = track(m, PP_TRACK_KIND_DEVICE, 0, "GPU.0", "stream 0", "GPU.0", 0, 1, 0, 0);
    uint32_t t1 = track(m, PP_TRACK_KIND_THREAD, 0, "demo", "main", "", -1, 1, 2, 1);
    const char *names[] = {"infer", "copy", "merge"};
    uint32_t ids[3], key = str(m, "seq");
    for (int i = 0; i < 3; i++)
        ids[i] = str(m, names[i]);
    for (size_t i = 0; i < n; i++) {
        pp_event e;
        pp_event_init(&e);
        e.ts_ns = (int64_t)i * 10;
        e.dur_ns = 5;
        e.batch = (int64_t)(i / 3);
        e.hw_ns = i;
        e.name = ids[i % 3];
        e.track = i % 2 ? t1 : t0;
        pp_model_add_event(m, &e);
        if (i % 10000 == 0 || i == n - 1) {
            pp_annotation a = {.event = i, .key = key, .type = PP_VALUE_INT, .v.i = (int64_t)i};
            pp_model_add_annotation(m, &a);
        }
    }
    return m;
}

/* 200000 events take four EVENTS blocks (3 x 65536 + 3392) and read back. */
static void test_events_span_several_blocks(void) {
    pp_model *m = many_events(200000), *back = NULL;
    pp_error err = {{0}};
    size_t len = 0;
    const char *path = write_model(m, "many.pptrace");
    unsigned char *data = (unsigned char *)pp_test_read_file(path, &len);
    const uint32_t want[] = {65536, 65536, 65536, 3392};
    for (int k = 0; k < 4; k++)
        EXPECT_EQ_U64(find_block(data, len, T_EVENTS, k).rows, want[k]);
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    expect_same_model(m, back);
    free(data);
    pp_model_free(m);
    pp_model_free(back);
}

/* A copy of m's strings, tracks and events (not its annotations), each
 * event given to edit, which may change it, on the way. */
static pp_model *copy_edited(const pp_model *m, void (*edit)(size_t i, pp_event *e)) {
    pp_model *copy = NULL;
    pp_model_create(&copy);
    for (uint32_t id = 1; id < pp_model_string_count(m); id++) {
        uint32_t same;
        const char *text = pp_model_string(m, id);
        pp_model_intern(copy, text, strlen(text), &same);
    }
    for (uint32_t t = 0; t < pp_model_track_count(m); t++)
        pp_model_add_track(copy, pp_model_track(m, t), NULL);
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        edit(i, &e);
        EXPECT_EQ_I64(pp_model_add_event(copy, &e), PP_OK);
    }
    return copy;
}

/* Some events of the third block of 65536 take values too wide for the
 * model's 32-bit slots. */
static void widen_in_block_3(size_t i, pp_event *e) {
    if (i >= 65536 * 2 && i < 65536 * 2 + 100 && (i - 65536 * 2) % 7 == 0) {
        e->dur_ns = ((int64_t)1 << 33) + (int64_t)i;
        e->batch = -((int64_t)1 << 40) - (int64_t)i;
        e->hw_ns = ((uint64_t)1 << 50) + i;
        e->xfer_ns = UINT32_MAX;
    }
}

/* One block of four holds durations, batches and hardware times too wide
 * for the model's 32-bit slots (src/model/columns.h): the reader's workers
 * leave that block to the reader, which keeps them whole beside their
 * slots, and every event of every block reads back as written. */
static void test_wide_values_in_one_block_read_back(void) {
    pp_model *m = many_events(200000), *back = NULL;
    pp_model *wide = copy_edited(m, widen_in_block_3);
    pp_error err = {{0}};
    const char *path = write_model(wide, "wide.pptrace");
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    EXPECT_STR(err.msg, "");
    expect_same_model(wide, back);
    pp_event e;
    pp_model_event(back, 65536 * 2 + 7, &e);
    EXPECT_EQ_I64(e.dur_ns, ((int64_t)1 << 33) + 65536 * 2 + 7);
    EXPECT_EQ_U64(e.xfer_ns, UINT32_MAX);
    pp_model_free(m);
    pp_model_free(wide);
    pp_model_free(back);
}

/* Every 401st event starts 3 hours later, or 5 s earlier, than its page's
 * first, and has a batch a million past its page's; the events after it
 * have no batch, the batch INT64_MIN, INT64_MAX, and one 50 below the
 * page's base; the first event of every page has no batch, so that the
 * second sets the page's batch base. */
static void move_far(size_t i, pp_event *e) {
    if (i % 401 == 17) {
        e->ts_ns += i % 2 ? (int64_t)10800 * 1000000000 : -(int64_t)5000000000;
        e->batch += 1000000;
    }
    if (i % 401 == 18 || i % PP_TS_PAGE == 0)
        e->batch = -1;
    if (i % 401 == 19)
        e->batch = INT64_MIN;
    if (i % 401 == 20)
        e->batch = INT64_MAX;
    if (i % 401 == 21)
        e->batch -= 50;
}

/* A file whose EVENTS blocks hold 100 rows each, so that the pages of
 * events that share a timestamp and a batch base (PP_TS_PAGE,
 * src/model/columns.h) straddle blocks the reader's workers decode at
 * once, and some of whose events start hours from their neighbours, or
 * have batches far from theirs (kept beside their slots, so those blocks
 * are left to the reader): every event reads back as written. */
static void test_page_bases_across_small_blocks(void) {
    pp_model *m = many_events(2000), *back = NULL;
    pp_model *far = copy_edited(m, move_far);
    pp_error err = {{0}};
    size_t len = 0;
    unsigned char *data = written_bytes(far, "pages.pptrace", &len);
    block one = find_block(data, len, T_EVENTS, 0);
    EXPECT_EQ_U64(one.rows, 2000);
    pp_cols c;
    pp_model_cols(far, &c);
    size_t cut_len = len - (one.end - one.at);
    unsigned char *cut = malloc(cut_len); /* the file without its one EVENTS block */
    memcpy(cut, data, one.at);
    memcpy(cut + one.at, data + one.end, len - one.end);
    size_t at = one.at;
    for (size_t first = 0; first < 2000; first += 100) {
        unsigned char payload[PPTRACE_V2_EVENTS_MAX(100)];
        uint32_t plen = (uint32_t)pptrace_events_encode(&c, first, 100, payload);
        unsigned char *more = insert_block(cut, &cut_len, at, T_EVENTS, payload, plen);
        free(cut);
        cut = more;
        at += 12 + plen;
    }
    const char *path = pp_test_path("pages_small_blocks.pptrace");
    pp_test_write_file(path, cut, cut_len);
    EXPECT_EQ_U64(find_block(cut, cut_len, T_EVENTS, 19).rows, 100);
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    EXPECT_STR(err.msg, "");
    expect_same_model(far, back);
    pp_event e;
    pp_model_event(back, 418, &e); /* 418 % 401 == 17, even: 5 s before */
    EXPECT_EQ_I64(e.ts_ns, 4180 - (int64_t)5000000000);
    EXPECT_EQ_I64(e.batch, 418 / 3 + 1000000);
    const int64_t want[] = {-1, INT64_MIN, INT64_MAX, 422 / 3 - 50, 423 / 3};
    for (size_t k = 0; k < 5; k++) {
        pp_model_event(back, 419 + k, &e);
        EXPECT_EQ_I64(e.batch, want[k]);
    }
    pp_model_event(back, 2 * PP_TS_PAGE, &e);
    EXPECT_EQ_I64(e.batch, -1);
    free(data);
    free(cut);
    pp_model_free(m);
    pp_model_free(far);
    pp_model_free(back);
}

/* Track and stage ids past 16 bits (70000 tracks and strings) are kept
 * beside the model's 16-bit slots (src/model/columns.h) and read back,
 * in a written and read file and in pp_model_columns. */
static void test_ids_past_16_bits_read_back(void) {
    pp_model *m, *back = NULL;
    pp_error err = {{0}};
    pp_model_create(&m);
    uint32_t last = 0;
    for (int k = 0; k < 70000; k++) {
        char text[16];
        snprintf(text, sizeof text, "s%d", k);
        last = str(m, text);
        pp_track_info t;
        pp_track_info_init(&t);
        EXPECT_EQ_I64(pp_model_add_track(m, &t, NULL), PP_OK);
    }
    for (size_t i = 0; i < 100000; i++) {
        pp_event e;
        pp_event_init(&e);
        e.ts_ns = (int64_t)i, e.name = 1;
        e.track = i % 3 ? 3 : 69999;
        e.stage = i % 5 ? 0 : i % 2 ? last : 7;
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    }
    const char *path = write_model(m, "ids.pptrace");
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    EXPECT_STR(err.msg, "");
    expect_same_model(m, back);
    pp_event_columns c;
    EXPECT_EQ_I64(pp_model_columns(back, &c), PP_OK);
    EXPECT_EQ_U64(c.track[0], 69999);
    EXPECT_EQ_U64(c.stage[5], last);
    EXPECT_EQ_U64(c.stage[10], 7);
    EXPECT_EQ_U64(c.track[1], 3);
    pp_model_free(m);
    pp_model_free(back);
}

/* Full blocks of the longest varints (10 bytes: ids, hardware times,
 * batches and counter values that jump as far as they can, int annotations
 * of INT64_MIN) fit the encoder's bounds and round trip; run under ASan this
 * is what checks those bounds. */
static void test_longest_varints_round_trip(void) {
    pp_model *m, *back = NULL;
    pp_error err = {{0}};
    pp_model_create(&m);
    uint32_t trk = track(m, PP_TRACK_KIND_THREAD, 0, "demo", "main", "", -1, 1, 2, 0);
    uint32_t name = str(m, "x"), key = str(m, "k");
    for (size_t i = 0; i < 65536 + 10; i++) {
        uint64_t bits = i % 2 ? 0x8000000000000001ull : 0x7ff0000000000001ull; /* NaN payloads */
        pp_event e = {i % 2 ? -INT64_MAX : INT64_MAX, 0, i % 2 ? INT64_MIN + 1 : INT64_MAX,
                      UINT64_MAX, UINT64_MAX, UINT64_MAX, 0, name, name, trk, PP_EV_SPAN, 0, 0};
        memcpy(&e.value, &bits, sizeof bits);
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
        pp_annotation a = {.event = i, .key = key, .type = PP_VALUE_INT, .v.i = INT64_MIN};
        EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
    }
    const char *path = write_model(m, "longest_varints.pptrace");
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    EXPECT_STR(err.msg, "");
    expect_same_model(m, back);
    pp_model_free(m);
    pp_model_free(back);
}

/* Reads the first `cut` bytes of `data` as a file cut short there and checks
 * that exactly the blocks ending at or before the cut were recovered. */
static void check_cut(const unsigned char *data, size_t cut, const block *blocks, size_t nblocks,
                      const char *path) {
    size_t events = 0, anns = 0, strings = 1, kept_end = cut >= 16 ? 16 : 0;
    char torn[64] = "";
    if (cut < 16)
        snprintf(torn, sizeof torn, "an incomplete file header");
    for (size_t i = 0; i < nblocks; i++) {
        if (blocks[i].end <= cut) {
            events += blocks[i].type == T_EVENTS ? blocks[i].rows : 0;
            anns += blocks[i].type == T_ANNOTATIONS ? blocks[i].rows : 0;
            strings += blocks[i].type == T_STRINGS ? get32(data + blocks[i].at + 12) : 0;
            kept_end = blocks[i].end;
        } else if (!torn[0] && cut - blocks[i].at < 8) {
            snprintf(torn, sizeof torn, "an incomplete block header");
        } else if (!torn[0]) {
            snprintf(torn, sizeof torn, "an incomplete %s block", type_names[blocks[i].type]);
        }
    }
    pp_model *back = NULL;
    pp_error err = {{0}};
    char want[256];
    pp_test_write_file(path, data, cut);
    int rc = pp_pptrace_read(path, &back, &err);
    EXPECT_EQ_I64(rc, PP_ETRUNCATED);
    if (!back) {
        pp_test_fail(__FILE__, __LINE__, "no model for a cut at byte %zu: %s", cut, err.msg);
        return;
    }
    size_t nanns;
    pp_model_annotations(back, &nanns);
    EXPECT_EQ_U64(pp_model_event_count(back), events);
    EXPECT_EQ_U64(nanns, anns);
    EXPECT_EQ_U64(pp_model_string_count(back), strings);
    EXPECT_EQ_U64(pp_model_meta_get(back)->truncated_bytes, cut - kept_end);
    snprintf(want, sizeof want, "%s: truncated at byte %zu: ", path, kept_end);
    EXPECT_CONTAINS(err.msg, want);
    snprintf(want, sizeof want, "; %zu events recovered", events);
    EXPECT_CONTAINS(err.msg, want);
    if (cut > kept_end) {
        snprintf(want, sizeof want, "last %zu bytes (%s)", cut - kept_end, torn);
        EXPECT_CONTAINS(err.msg, want);
    } else if (cut >= 16) {
        EXPECT_CONTAINS(err.msg, "the END block is missing");
    }
    pp_model_free(back);
}

/* A file cut at every block boundary, inside every block head, payload and
 * CRC, and inside the file header keeps exactly its complete blocks. */
static void test_truncated_file_keeps_complete_blocks(void) {
    pp_model *m = many_events(140000);
    size_t len = 0;
    const char *path = write_model(m, "cut_full.pptrace");
    unsigned char *data = (unsigned char *)pp_test_read_file(path, &len);
    block blocks[64];
    size_t n = parse_blocks(data, len, blocks, 64);
    EXPECT_EQ_U64(find_block(data, len, T_EVENTS, 2).rows, 140000 - 2 * 65536);
    EXPECT_EQ_U64(blocks[n - 1].type, T_END);
    EXPECT_EQ_U64(blocks[n - 1].end, len);
    const char *cut_path = pp_test_path("cut.pptrace");
    const size_t header_cuts[] = {0, 5, 15};
    for (size_t i = 0; i < 3; i++)
        check_cut(data, header_cuts[i], blocks, n, cut_path);
    for (size_t i = 0; i < n; i++) {
        const size_t cuts[] = {blocks[i].at, blocks[i].at + 3, blocks[i].at + 8 + blocks[i].len / 2,
                               blocks[i].end - 1};
        for (size_t k = 0; k < 4; k++)
            check_cut(data, cuts[k], blocks, n, cut_path);
    }
    pp_model *back = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    expect_same_model(m, back);
    free(data);
    pp_model_free(back);
    pp_model_free(m);
}

/* A last block whose bytes are all there but fail their checksum is a torn
 * final write: truncation, not corruption. */
static void test_torn_final_block_is_truncation(void) {
    pp_model *m = full_model(), *back = NULL;
    pp_error err = {{0}};
    size_t len = 0;
    const char *path = write_model(m, "torn.pptrace");
    unsigned char *data = (unsigned char *)pp_test_read_file(path, &len);
    block end = find_block(data, len, T_END, 0);
    data[end.at + 8 + 24] ^= 0x40; /* a bit of the END block's event total */
    pp_test_write_file(path, data, len);
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_ETRUNCATED);
    EXPECT_CONTAINS(err.msg, "last 52 bytes (a final END block that fails its checksum)");
    EXPECT(back && pp_model_event_count(back) == pp_model_event_count(m));
    EXPECT(back && pp_model_meta_get(back)->truncated_bytes == 11 + 52); /* the file's 11 + lost */
    free(data);
    pp_model_free(back);
    pp_model_free(m);
}

/* Writes `data`, reads it, and expects PP_EFORMAT with "PATH: byte AT: PROBLEM". */
static void expect_format_error(const unsigned char *data, size_t len, size_t at,
                                const char *problem, int line) {
    const char *path = pp_test_path("bad.pptrace");
    pp_model *back = NULL;
    pp_error err = {{0}};
    char want[512];
    pp_test_write_file(path, data, len);
    int rc = pp_pptrace_read(path, &back, &err);
    snprintf(want, sizeof want, "%s: byte %zu: %s", path, at, problem);
    if (rc != PP_EFORMAT || back || !strstr(err.msg, want))
        pp_test_fail(__FILE__, line, "rc %d, message \"%s\", expected PP_EFORMAT and \"%s\"", rc,
                     err.msg, want);
    pp_model_free(back);
}

/* The full model's file, for the damage tests; *len receives its size. */
static unsigned char *full_file(size_t *len) {
    pp_model *m = full_model();
    const char *path = write_model(m, "good.pptrace");
    pp_model_free(m);
    return (unsigned char *)pp_test_read_file(path, len);
}

static void test_damaged_header_is_refused(void) {
    size_t len;
    unsigned char *data = full_file(&len);
    data[0] = 'X';
    expect_format_error(data, len, 0, "not a .pptrace file", __LINE__);
    data[0] = 'P';
    put32(data + 8, 3);
    expect_format_error(data, len, 8,
                        "unsupported .pptrace version 3 (this pipeprof reads versions 1 to 2)",
                        __LINE__);
    put32(data + 8, 0);
    expect_format_error(data, len, 8, "unsupported .pptrace version 0", __LINE__);
    put32(data + 8, 2);
    put32(data + 12, 1);
    expect_format_error(data, len, 12, "unknown header flags 0x1 (version 2 defines none)",
                        __LINE__);
    free(data);
}

/* Framing damage: a checksum that fails in the middle of the file, lengths
 * beyond a type's maximum or off its row count, unknown types, leftovers. */
static void test_damaged_framing_is_refused(void) {
    size_t len;
    unsigned char *data = full_file(&len);
    block tracks = find_block(data, len, T_TRACKS, 0), events = find_block(data, len, T_EVENTS, 0);
    block end = find_block(data, len, T_END, 0);
    data[tracks.at + 20] ^= 1;
    expect_format_error(data, len, tracks.at, "TRACKS block fails its checksum", __LINE__);
    data[tracks.at + 20] ^= 1;
    put32(data + events.at + 4, 0xfffffff0u);
    /* 65536 rows of ten 10-byte varints and a flags byte, the count, 11 lengths */
    expect_format_error(data, len, events.at + 4,
                        "EVENTS block length 4294967280 (the maximum is 6619184)", __LINE__);
    put32(data + events.at + 4, events.len);
    put32(data + events.at + 8, events.rows + 1);
    fix_crc(data, events);
    expect_format_error(data, len, events.at + 8, "EVENTS block: its flags column does not hold "
                        "one byte per row (22 rows)", __LINE__);
    put32(data + events.at + 8, events.rows);
    fix_crc(data, events);
    put32(data + end.at, 99);
    fix_crc(data, end);
    expect_format_error(data, len, end.at, "unknown block type 99", __LINE__);
    put32(data + end.at, T_END);
    put64(data + end.at + 8 + 24, 20);
    fix_crc(data, end);
    expect_format_error(data, len, end.at + 8 + 24, "END block counts 20 events, the file holds 21",
                        __LINE__);
    /* the reader sizes the model from the END block before it reads the
     * rest: a count no file of this size can hold is not believed */
    unsigned char counts[16];
    memcpy(counts, data + end.at + 8 + 24, sizeof counts); /* events 20, annotations */
    put64(data + end.at + 8 + 24, (uint64_t)1 << 40);
    put64(data + end.at + 8 + 32, UINT64_MAX);
    fix_crc(data, end);
    expect_format_error(data, len, end.at + 8 + 24,
                        "END block counts 1099511627776 events, the file holds 21", __LINE__);
    memcpy(data + end.at + 8 + 24, counts, sizeof counts);
    put64(data + end.at + 8 + 24, 21);
    fix_crc(data, end);
    unsigned char *longer = malloc(len + 3);
    memcpy(longer, data, len);
    memcpy(longer + len, "abc", 3);
    expect_format_error(longer, len + 3, len, "3 bytes after the END block", __LINE__);
    free(longer);
    free(data);
}

/* The full model as the writer of `version` wrote it (tests/io/data). */
static unsigned char *data_file(unsigned version, size_t *len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/io/data/full_v%u.pptrace", getenv("PP_SOURCE_DIR"),
             version);
    return (unsigned char *)pp_test_read_file(path, len);
}

static unsigned char *v1_file(size_t *len) {
    return data_file(1, len);
}

/* Files of every version, written by the pipeprof of their time (version
 * 1: fixed-width EVENTS and ANNOTATIONS rows; version 2: varint columns),
 * read back field for field. */
static void test_every_version_reads_identically(void) {
    for (unsigned version = 1; version <= 2; version++) {
        pp_model *m = full_model_clock(version >= 2);
        size_t len;
        unsigned char *data = data_file(version, &len);
        EXPECT(data && len > 16 && get32(data + 8) == version);
        const char *path = pp_test_path("old.pptrace");
        pp_test_write_file(path, data, len);
        pp_model *back = NULL;
        pp_error err = {{0}};
        EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
        EXPECT_STR(err.msg, "");
        expect_same_model(m, back);
        free(data);
        pp_model_free(back);
        pp_model_free(m);
    }
}

/* The writer still writes the checked-in version-2 bytes: any change to
 * what it writes is a format change, which needs a version of its own. */
static void test_writer_writes_the_version_2_bytes(void) {
    pp_model *m = full_model();
    size_t want_len, got_len;
    unsigned char *want = data_file(2, &want_len);
    unsigned char *got = written_bytes(m, "v2.pptrace", &got_len);
    EXPECT_EQ_U64(got_len, want_len);
    EXPECT(want && got && got_len == want_len && memcmp(got, want, got_len) == 0);
    free(want);
    free(got);
    pp_model_free(m);
}

/* Field damage behind a valid checksum in a version-1 file: ids out of
 * range, impossible values. Event i's field of column c lies at payload + 4
 * + c_start * rows + width * i. */
static void test_damaged_v1_fields_are_refused(void) {
    size_t len;
    unsigned char *data = v1_file(&len);
    block ev = find_block(data, len, T_EVENTS, 0), tr = find_block(data, len, T_TRACKS, 0);
    block an = find_block(data, len, T_ANNOTATIONS, 0), th = find_block(data, len, T_THREADS, 0);
    block me = find_block(data, len, T_META, 0);
    size_t n = ev.rows, cols = ev.at + 12;
    const struct {
        block b;
        size_t at;
        unsigned width;
        uint64_t value;
        const char *problem;
    } cases[] = {
        {ev, cols + 8 * n + 8 * 1, 8, (uint64_t)-5, "event 1: negative duration -5 ns"},
        {ev, cols + 8 * n + 8 * 1, 8, (uint64_t)INT64_MAX,
         "event 1: ends past the largest time (995 + 9223372036854775807 ns)"}, /* ts -5 + 1 * 1000 */
        {ev, cols + 56 * n + 4 * 2, 4, 999, "event 2: name string id 999 out of range"},
        {ev, cols + 60 * n + 4 * 2, 4, 1000, "event 2: stage string id 1000 out of range"},
        {ev, cols + 64 * n + 4 * 4, 4, 5, "event 4: track index 5 out of range (5 tracks)"},
        {ev, cols + 68 * n + 6, 1, 6, "event 6: unknown kind 6"},
        {ev, cols + 69 * n + 6, 1, 7, "event 6: unknown role 7"},
        {ev, cols + 70 * n + 6, 1, 3, "event 6: unknown flow phase 3"},
        {ev, ev.at + 8, 4, 65537, "EVENTS block holds 65537 rows (at most 65536 allowed)"},
        {tr, tr.at + 12 + 41 * 2, 1, 4, "track 2: unknown kind 4"},
        {tr, tr.at + 12 + 41 * 1 + 9, 4, 4000, "track 1: name string id 4000 out of range"},
        {an, an.at + 12 + 21 * 1, 8, 21, "annotation 1: event index 21 out of range (21 events)"},
        {an, an.at + 12 + 21 * 3 + 12, 1, 3, "annotation 3: unknown value type 3"},
        {an, an.at + 12 + 21 * 4, 8, 2,
         "annotation 4: event 2 is before the previous annotation's event 3"},
        {an, an.at + 12 + 8, 4, 77777, "annotation 0: key string id 77777 out of range"},
        /* past what the model's 16-byte annotations hold (src/model/ann_table.h): the
         * message still names the value as the file has it */
        {an, an.at + 12 + 8, 4, 3000000000u, "annotation 0: key string id 3000000000 out of range"},
        {an, an.at + 12 + 21 * 1, 8, (uint64_t)5 << 32,
         "annotation 1: event index 21474836480 out of range (21 events)"},
        {th, th.at + 12 + 28 + 8, 4, 5000, "thread 1: name string id 5000 out of range"},
        {me, me.at + 8, 4, (uint32_t)-2, "recording level -2 is not -1 (unknown), 0, 1 or 2"},
        /* a level the writers would then refuse to write */
        {me, me.at + 8, 4, 16777217, "recording level 16777217 is not -1 (unknown), 0, 1 or 2"},
        /* INT64_MIN has no decimal microsecond form that reads back */
        {ev, cols + 8 * 3, 8, (uint64_t)INT64_MIN,
         "event 3: time -9223372036854775808 ns is out of range (the earliest is -9223372036854775807)"},
        {me, me.at + 12, 4, 7000, "META: process_name string id 7000 out of range"},
        {an, an.at + 12 + 21 * 2 + 13, 8, (uint64_t)1 << 32,
         "annotation 2: value string id 4294967296 out of range"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        unsigned char saved[8];
        EXPECT(cases[k].b.type != 0);
        memcpy(saved, data + cases[k].at, cases[k].width);
        for (unsigned i = 0; i < cases[k].width; i++)
            data[cases[k].at + i] = (unsigned char)(cases[k].value >> 8 * i);
        fix_crc(data, cases[k].b);
        expect_format_error(data, len, cases[k].at, cases[k].problem, __LINE__);
        memcpy(data + cases[k].at, saved, cases[k].width);
        fix_crc(data, cases[k].b);
    }
    free(data);
}

/* Version-2 EVENTS and ANNOTATIONS payloads (format doc, "Version 2
 * tables"): a u32 row count, one u32 length per column, the columns. The
 * file offset where column k of block b starts. */
static size_t v2_column(const unsigned char *data, block b, int ncols, int k) {
    size_t at = b.at + 8 + 4 + 4 * (size_t)ncols;
    for (int j = 0; j < k; j++)
        at += get32(data + b.at + 8 + 4 + 4 * (size_t)j);
    return at;
}

enum { EV_NAME = 7, EV_STAGE = 8, EV_TRACK = 9, EV_FLAGS = 10, EV_COLS = 11 };
enum { AN_EVENT = 0, AN_KEY = 1, AN_TYPE = 2, AN_COLS = 4 };

/* One byte of a file set to `value` behind a valid checksum (its block's
 * CRC fixed), and the problem the reader names at that byte. */
typedef struct damage {
    block b;
    size_t at;
    unsigned char value;
    const char *problem;
} damage;

/* Each damage in turn on `data`, which is restored after each. */
static void expect_damage_refused(unsigned char *data, size_t len, const damage *cases, size_t n,
                                  int line) {
    for (size_t k = 0; k < n; k++) {
        unsigned char saved = data[cases[k].at];
        data[cases[k].at] = cases[k].value;
        fix_crc(data, cases[k].b);
        expect_format_error(data, len, cases[k].at, cases[k].problem, line);
        data[cases[k].at] = saved;
        fix_crc(data, cases[k].b);
    }
}

/* Field damage behind a valid checksum in a version-2 file. In the full
 * model every string id, track index and annotation event step is below
 * 128, so each is a one-byte varint and row i of those columns is byte i;
 * flags are kind | role << 3 | phase << 6. */
static void test_damaged_v2_fields_are_refused(void) {
    size_t len;
    unsigned char *data = full_file(&len);
    block ev = find_block(data, len, T_EVENTS, 0), an = find_block(data, len, T_ANNOTATIONS, 0);
    size_t name = v2_column(data, ev, EV_COLS, EV_NAME), stage = v2_column(data, ev, EV_COLS, EV_STAGE);
    size_t trk = v2_column(data, ev, EV_COLS, EV_TRACK), flags = v2_column(data, ev, EV_COLS, EV_FLAGS);
    size_t step = v2_column(data, an, AN_COLS, AN_EVENT), key = v2_column(data, an, AN_COLS, AN_KEY);
    size_t type = v2_column(data, an, AN_COLS, AN_TYPE);
    EXPECT_EQ_U64(stage - name, 21); /* 21 events, one byte each */
    const damage cases[] = {
        {ev, name + 2, 127, "event 2: name string id 127 out of range (29 strings defined before it)"},
        {ev, stage + 2, 126, "event 2: stage string id 126 out of range"},
        {ev, trk + 4, 5, "event 4: track index 5 out of range (5 tracks)"},
        {ev, flags + 6, 6, "event 6: unknown kind 6"},
        {ev, flags + 6, 7 << 3, "event 6: unknown role 7"},
        {ev, flags + 6, 3 << 6, "event 6: unknown flow phase 3"},
        /* a continuation bit on the column's last byte: the varint runs past it */
        {ev, name + 20, 0x80, "event 20: malformed name value"},
        {an, step + 1, 21, "annotation 1: event index 21 out of range (21 events)"}, /* 0 + 21 */
        {an, key, 127, "annotation 0: key string id 127 out of range"},
        {an, type + 3, 3, "annotation 3: unknown value type 3"},
    };
    expect_damage_refused(data, len, cases, sizeof cases / sizeof cases[0], __LINE__);
    free(data);
}

/* In a file of several blocks, which worker threads decode ahead of the
 * reader (on a machine of two or more CPUs), damage in a later block is
 * named exactly as in a file read by one thread: the block's checksum, a
 * value the model refuses behind a valid checksum, a malformed varint, an
 * annotation's key. many_events(200000): four EVENTS blocks of 65536 rows
 * each followed by the ANNOTATIONS of its events (one every 10000 events:
 * 7, 7, 6 and 1 of them); track indexes and string ids are one-byte
 * varints, so row i of those columns is byte i. */
static void test_damage_in_a_later_block_is_named(void) {
    pp_model *m = many_events(200000);
    size_t len = 0;
    unsigned char *data = written_bytes(m, "damaged_later.pptrace", &len);
    pp_model_free(m);
    block ev1 = find_block(data, len, T_EVENTS, 1), ev2 = find_block(data, len, T_EVENTS, 2);
    block an2 = find_block(data, len, T_ANNOTATIONS, 2);
    size_t trk = v2_column(data, ev2, EV_COLS, EV_TRACK), name = v2_column(data, ev2, EV_COLS, EV_NAME);
    size_t key = v2_column(data, an2, AN_COLS, AN_KEY);
    const damage cases[] = {
        {ev2, trk + 5, 5, "event 131077: track index 5 out of range (2 tracks)"},
        {ev2, name + 65535, 0x80, "event 196607: malformed name value"},
        {an2, key, 127, "annotation 14: key string id 127 out of range"},
    };
    expect_damage_refused(data, len, cases, sizeof cases / sizeof cases[0], __LINE__);
    data[ev1.at + 100] ^= 1; /* a payload byte, with the block's CRC left as it was */
    expect_format_error(data, len, ev1.at, "EVENTS block fails its checksum", __LINE__);
    free(data);
}

/* A damaged CLOCK block (an optional block the writer adds when the model
 * has clock meta): a string id out of range, an error bound below -1. */
static void test_damaged_clock_is_refused(void) {
    size_t len;
    unsigned char *data = full_file(&len);
    block ck = find_block(data, len, T_CLOCK, 0);
    const struct {
        size_t at;
        unsigned width;
        uint64_t value;
        const char *problem;
    } cases[] = {
        {ck.at + 8 + 4, 4, 8000, "CLOCK: host string id 8000 out of range"},
        {ck.at + 8 + 16, 8, (uint64_t)-7, "CLOCK: alignment error -7 ns is below -1 (not known)"},
    };
    EXPECT(ck.type != 0);
    for (size_t k = 0; ck.type && k < sizeof cases / sizeof cases[0]; k++) {
        unsigned char saved[8];
        memcpy(saved, data + cases[k].at, cases[k].width);
        for (unsigned i = 0; i < cases[k].width; i++)
            data[cases[k].at + i] = (unsigned char)(cases[k].value >> 8 * i);
        fix_crc(data, ck);
        expect_format_error(data, len, cases[k].at, cases[k].problem, __LINE__);
        memcpy(data + cases[k].at, saved, cases[k].width);
        fix_crc(data, ck);
    }
    free(data);
}

/* A version-2 payload whose column lengths do not add up to it, or with a
 * byte left over after a column's last value, is refused. */
static void test_v2_column_layout_is_checked(void) {
    size_t len;
    unsigned char *data = full_file(&len);
    block ev = find_block(data, len, T_EVENTS, 0);
    size_t dir = ev.at + 8 + 4, flags = v2_column(data, ev, EV_COLS, EV_FLAGS);
    char problem[128];
    put32(data + dir, get32(data + dir) + 1);
    fix_crc(data, ev);
    snprintf(problem, sizeof problem, "EVENTS block: its column lengths do not add up to its "
             "length %u", ev.len);
    expect_format_error(data, len, dir, problem, __LINE__);
    put32(data + dir, get32(data + dir) - 1);
    /* one byte more at the end of the track column, counted in its length */
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, data, flags);
    longer[flags] = 1;
    memcpy(longer + flags + 1, data + flags, len - flags);
    put32(longer + dir + 4 * EV_TRACK, get32(longer + dir + 4 * EV_TRACK) + 1);
    put32(longer + ev.at + 4, ev.len + 1);
    fix_crc(longer, (block){ev.at, ev.end + 1, T_EVENTS, ev.len + 1, ev.rows});
    expect_format_error(longer, len + 1, flags,
                        "EVENTS block: 1 bytes after the last value of its track column", __LINE__);
    free(longer);
    free(data);
}

/* The string table: ids in order, each text once, no NUL, nothing left over. */
static void test_damaged_strings_are_refused(void) {
    size_t len;
    unsigned char *data = full_file(&len);
    block st = find_block(data, len, T_STRINGS, 0);
    uint32_t strings = get32(data + st.at + 12);
    size_t text1 = st.at + 8 + 8 + 4, last = st.at + 16; /* string 1's text; the last entry */
    for (uint32_t i = 1; i < strings; i++)
        last += 4 + get32(data + last);
    char problem[128];
    put32(data + st.at + 8, 2);
    fix_crc(data, st);
    expect_format_error(data, len, st.at + 8, "STRINGS block starts at string id 2, expected 1",
                        __LINE__);
    put32(data + st.at + 8, 1);
    put32(data + st.at + 12, 65537);
    fix_crc(data, st);
    expect_format_error(data, len, st.at + 12, "STRINGS block holds 65537 strings (at most 65536",
                        __LINE__);
    put32(data + st.at + 12, strings + 1);
    fix_crc(data, st);
    snprintf(problem, sizeof problem, "string %u runs past the end of its STRINGS block", strings + 1);
    expect_format_error(data, len, st.end - 4, problem, __LINE__);
    put32(data + st.at + 12, strings - 1);
    fix_crc(data, st);
    snprintf(problem, sizeof problem, "%zu bytes after the last string of the STRINGS block",
             st.end - 4 - last);
    expect_format_error(data, len, last, problem, __LINE__);
    put32(data + st.at + 12, strings);
    data[text1] = 0;
    fix_crc(data, st);
    expect_format_error(data, len, text1, "string 1 contains a NUL byte", __LINE__);
    put32(data + text1 - 4, 0); /* string 1 empty: the same text as string 0 */
    fix_crc(data, st);
    expect_format_error(data, len, text1 - 4, "string 1 repeats string 0", __LINE__);
    free(data);
}

/* Blocks that cannot be: a second META, a META of the wrong size, table
 * blocks too short to hold their own row count. */
static void test_impossible_blocks_are_refused(void) {
    size_t len, n;
    unsigned char *data = full_file(&len);
    block me = find_block(data, len, T_META, 0), end = find_block(data, len, T_END, 0);
    n = len;
    unsigned char *twice = insert_block(data, &n, me.end, T_META, data + me.at + 8, 40);
    expect_format_error(twice, n, me.end, "a second META block (a file has at most one)", __LINE__);
    free(twice);
    put32(data + me.at + 4, 39);
    expect_format_error(data, len, me.at + 4, "META block length 39 (it must be 40)", __LINE__);
    put32(data + me.at + 4, 40);
    n = len;
    unsigned char *short_table = insert_block(data, &n, end.at, T_TRACKS, "ab", 2);
    expect_format_error(short_table, n, end.at + 4, "TRACKS block length 2 is below its 4-byte row count",
                        __LINE__);
    free(short_table);
    n = len;
    unsigned char *short_strings = insert_block(data, &n, end.at, T_STRINGS, "abcd", 4);
    expect_format_error(short_strings, n, end.at + 4, "STRINGS block length 4 is below its 8-byte head",
                        __LINE__);
    free(short_strings);
    free(data);
}

/* A block type with the optional bit set that this reader does not know is
 * skipped, so later versions can add information old readers ignore. */
static void test_unknown_optional_block_is_skipped(void) {
    pp_model *m = full_model(), *back = NULL;
    pp_error err = {{0}};
    size_t len;
    const char *path = write_model(m, "optional.pptrace");
    unsigned char *data = (unsigned char *)pp_test_read_file(path, &len);
    block end = find_block(data, len, T_END, 0);
    unsigned char *with = insert_block(data, &len, end.at, 0x8000abcdu, "hello", 5);
    pp_test_write_file(path, with, len);
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    expect_same_model(m, back);
    free(with);
    free(data);
    pp_model_free(back);
    pp_model_free(m);
}

static void test_unreadable_paths_are_reported(void) {
    pp_model *back = NULL;
    pp_error err = {{0}};
    const char *missing = pp_test_path("missing.pptrace");
    EXPECT_EQ_I64(pp_pptrace_read(missing, &back, &err), PP_ENOTFOUND);
    EXPECT_CONTAINS(err.msg, missing);
    EXPECT_CONTAINS(err.msg, "cannot open: No such file or directory");
    EXPECT(back == NULL);
    const char *dir = getenv("PP_TEST_TMP") ? getenv("PP_TEST_TMP") : "/tmp";
    EXPECT_EQ_I64(pp_pptrace_read(dir, &back, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "cannot read: Is a directory");
    EXPECT(back == NULL);
    const char *fifo = pp_test_path("fifo.pptrace"); /* opening it must not wait for a writer */
    EXPECT_EQ_I64(mkfifo(fifo, 0600), 0);
    EXPECT_EQ_I64(pp_pptrace_read(fifo, &back, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "fifo.pptrace: cannot read: not a regular file");
    remove(fifo);
    EXPECT_EQ_I64(pp_pptrace_read(NULL, &back, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "pp_pptrace_read: path and out are required");
    EXPECT_EQ_I64(pp_pptrace_write(NULL, missing, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "pp_pptrace_write: model and path are required");
}

/* A write that cannot happen fails with the path and leaves no file. */
static void test_write_to_missing_directory_fails_cleanly(void) {
    pp_model *m = full_model();
    pp_error err = {{0}};
    char path[1100];
    snprintf(path, sizeof path, "%s/trace.pptrace", pp_test_path("no-such-dir"));
    EXPECT_EQ_I64(pp_pptrace_write(m, path, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, path);
    EXPECT_CONTAINS(err.msg, "No such file or directory");
    EXPECT(access(path, F_OK) != 0);
    pp_model_meta_mut(m)->level = -2;
    EXPECT_EQ_I64(pp_pptrace_write(m, pp_test_path("level.pptrace"), &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "level.pptrace: recording level -2 is not -1 (unknown), 0, 1 or 2");
    EXPECT(access(pp_test_path("level.pptrace"), F_OK) != 0);
    pp_model_free(m);
}

/* A STRINGS payload holds at most 64 MiB: its 8-byte head, a 4-byte length
 * and the text, so the longest string is 64 MiB - 12 bytes. That one is
 * written (in a block of its own) and read back; one byte more is refused
 * before any file appears. */
static void test_longest_string_fits_and_longer_is_refused(void) {
    size_t longest = ((size_t)1 << 26) - 12;
    char *text = malloc(longest + 1);
    memset(text, 'x', longest + 1);
    pp_model *m, *back = NULL;
    pp_error err = {{0}};
    uint32_t id;
    pp_model_create(&m);
    str(m, "short");
    EXPECT_EQ_I64(pp_model_intern(m, text, longest, &id), PP_OK);
    const char *path = write_model(m, "longest.pptrace");
    EXPECT_EQ_I64(pp_pptrace_read(path, &back, &err), PP_OK);
    expect_same_model(m, back);
    pp_model_free(back);
    remove(path);
    EXPECT_EQ_I64(pp_model_intern(m, text, longest + 1, &id), PP_OK);
    path = pp_test_path("too_long.pptrace");
    EXPECT_EQ_I64(pp_pptrace_write(m, path, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "too_long.pptrace: string 3 is 67108853 bytes long; .pptrace holds "
                             "strings of at most 67108852 bytes");
    EXPECT(access(path, F_OK) != 0);
    pp_model_free(m);
    free(text);
}

int main(void) {
    RUN(test_every_field_round_trips);
    RUN(test_empty_model_round_trips);
    RUN(test_events_span_several_blocks);
    RUN(test_wide_values_in_one_block_read_back);
    RUN(test_ids_past_16_bits_read_back);
    RUN(test_page_bases_across_small_blocks);
    RUN(test_longest_varints_round_trip);
    RUN(test_truncated_file_keeps_complete_blocks);
    RUN(test_torn_final_block_is_truncation);
    RUN(test_damaged_header_is_refused);
    RUN(test_damaged_framing_is_refused);
    RUN(test_every_version_reads_identically);
    RUN(test_writer_writes_the_version_2_bytes);
    RUN(test_damaged_clock_is_refused);
    RUN(test_damaged_v1_fields_are_refused);
    RUN(test_damaged_v2_fields_are_refused);
    RUN(test_damage_in_a_later_block_is_named);
    RUN(test_v2_column_layout_is_checked);
    RUN(test_damaged_strings_are_refused);
    RUN(test_impossible_blocks_are_refused);
    RUN(test_unknown_optional_block_is_skipped);
    RUN(test_unreadable_paths_are_reported);
    RUN(test_write_to_missing_directory_fails_cleanly);
    RUN(test_longest_string_fits_and_longer_is_refused);
    return pp_test_finish();
}
