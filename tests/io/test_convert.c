/* pp_trace_convert: a .pptrace converted to .json or .pptrace chunk by
 * chunk gives the bytes that reading it whole and writing the model give,
 * across chunk boundaries (annotations, string values, stages), for files
 * in the flight recorder's block order, cut short or of version 1; a file
 * a chunk cannot carry is read whole; a damaged one is refused with the
 * whole read's message and leaves no output. Blocks are moved and damaged
 * by the framing docs/format-pptrace.md gives (u32 type, u32 length,
 * payload, u32 CRC over head and payload). */
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "io/trace_read.h"
#include "pipeprof/io.h"
#include "testutil.h"

#define NEVENTS 150000 /* three chunks of 65536 and a part */

static uint32_t intern(pp_model *m, const char *text) {
    uint32_t id = 0;
    EXPECT_EQ_I64(pp_model_intern(m, text, strlen(text), &id), PP_OK);
    return id;
}

static uint32_t add_track(pp_model *m, uint8_t kind, const char *process, const char *name) {
    pp_track_info t;
    pp_track_info_init(&t);
    t.kind = kind;
    t.process = intern(m, process);
    t.name = intern(m, name);
    uint32_t index = 0;
    EXPECT_EQ_I64(pp_model_add_track(m, &t, &index), PP_OK);
    return index;
}

/* Spans, counters and flows on three tracks, with stages, and annotations
 * of every type at strides that fall on both sides of each chunk boundary;
 * of those, the events whose time [ts, ts + max(dur, 1)) meets [from, to). */
static pp_model *trace_in(int64_t from, int64_t to) {
    pp_model *m;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    uint32_t tracks[3] = {add_track(m, PP_TRACK_KIND_DEVICE, "GPU.0", "stream 0"),
                          add_track(m, PP_TRACK_KIND_THREAD, "app", "main"),
                          add_track(m, PP_TRACK_KIND_THREAD, "app", "worker \"2\"")};
    uint32_t names[3] = {intern(m, "infer"), intern(m, "copy"), intern(m, "queue depth")};
    uint32_t stage = intern(m, "Stage1"), seq = intern(m, "seq"), note = intern(m, "note");
    uint32_t share = intern(m, "share"), labels[2] = {intern(m, "odd"), intern(m, "even")};
    pp_model_meta_mut(m)->level = 2;
    for (size_t i = 0; i < NEVENTS; i++) {
        pp_event e;
        pp_event_init(&e);
        e.ts_ns = (int64_t)i * 10;
        e.track = tracks[i % 3];
        e.name = names[i % 3];
        e.kind = i % 3 == 2 ? PP_EV_COUNTER : i % 97 == 0 ? PP_EV_FLOW : PP_EV_SPAN;
        e.dur_ns = e.kind == PP_EV_SPAN ? (int64_t)(i % 13) : 0;
        e.batch = e.kind == PP_EV_SPAN ? (int64_t)(i / 5) : -1;
        e.stage = i % 4 == 0 && e.kind == PP_EV_SPAN ? stage : 0;
        e.hw_ns = i % 3 == 0 ? i : 0;
        e.value = e.kind == PP_EV_COUNTER ? (double)i / 8 : 0;
        e.id = e.kind == PP_EV_FLOW ? i : 0;
        if (e.ts_ns >= to || e.ts_ns + (e.dur_ns ? e.dur_ns : 1) <= from)
            continue;
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
        pp_annotation a = {.event = pp_model_event_count(m) - 1};
        if (i % 7 == 0) {
            a.key = seq, a.type = PP_VALUE_INT, a.v.i = -(int64_t)i;
            EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
        }
        if (i % 11 == 0) {
            a.key = note, a.type = PP_VALUE_STR, a.v.s = labels[i % 2];
            EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
        }
        if (i % 13 == 0) {
            a.key = share, a.type = PP_VALUE_DOUBLE, a.v.d = 1.0 / (double)(i + 1);
            EXPECT_EQ_I64(pp_model_add_annotation(m, &a), PP_OK);
        }
    }
    return m;
}

/* The file `path` as bytes; fails the test when it cannot be read. */
static unsigned char *slurp(const char *path, size_t *len) {
    unsigned char *data = (unsigned char *)pp_test_read_file(path, len);
    if (!data)
        pp_test_fail(__FILE__, __LINE__, "cannot read %s", path);
    return data;
}

static int same_file(const char *a, const char *b) {
    size_t na, nb;
    unsigned char *da = slurp(a, &na), *db = slurp(b, &nb);
    int same = da && db && na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

/* Converts `in` to both writable formats, in `chunks` chunks (0: read
 * whole), and checks each against a whole read and write; returns the
 * convert status (both must agree). */
static int expect_converts_as_whole(const char *in_path, uint64_t chunks) {
    static const char *const exts[] = {"json", "pptrace"};
    char in[1024]; /* pp_test_path's buffers are reused */
    snprintf(in, sizeof in, "%s", in_path);
    int status = PP_OK;
    for (int k = 0; k < 2; k++) {
        char whole_path[512], chunk_path[512];
        snprintf(whole_path, sizeof whole_path, "%s.%s", pp_test_path("whole"), exts[k]);
        snprintf(chunk_path, sizeof chunk_path, "%s.%s", pp_test_path("chunks"), exts[k]);
        pp_model *m = NULL;
        pp_error read_err = {{0}}, err = {{0}};
        int read_rc = pp_trace_read(in, &m, &read_err);
        EXPECT(read_rc == PP_OK || read_rc == PP_ETRUNCATED);
        EXPECT_EQ_I64(pp_trace_write(m, whole_path, &err), PP_OK);
        pp_convert_info info;
        status = pp_trace_convert(in, chunk_path, NULL, &info, &err);
        EXPECT_EQ_I64(status, read_rc);
        EXPECT_STR(err.msg, read_err.msg);
        EXPECT_EQ_U64(info.chunks, chunks);
        EXPECT_EQ_U64(info.events, pp_model_event_count(m));
        EXPECT_EQ_U64(info.truncated_bytes, pp_model_meta_get(m)->truncated_bytes);
        if (!same_file(whole_path, chunk_path))
            pp_test_fail(__FILE__, __LINE__, "%s: chunked .%s differs from a whole write", in,
                         exts[k]);
        pp_model_free(m);
    }
    return status;
}

/* The blocks of a .pptrace: offsets of each head, and the file's end. */
typedef struct blocks {
    size_t at[64], n;
    uint32_t type[64];
} blocks;

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static blocks parse(const unsigned char *data, size_t len) {
    blocks b = {.n = 0};
    for (size_t at = 16; at + 12 <= len && b.n < 64; at += 12 + get32(data + at + 4)) {
        b.at[b.n] = at;
        b.type[b.n++] = get32(data + at);
    }
    b.at[b.n] = len;
    return b;
}

/* Writes the header and the blocks of `data` in the order `order` (block
 * numbers, -1 ends it) as the file `name`, whose path goes to `path`, and
 * frees data. */
static void write_reordered(const char *name, unsigned char *data, const blocks *b,
                            const int *order, char path[1024]) {
    size_t len = 16;
    unsigned char *out = malloc(b->at[b->n]);
    memcpy(out, data, 16);
    for (; *order >= 0; order++) {
        size_t n = b->at[*order + 1] - b->at[*order];
        memcpy(out + len, data + b->at[*order], n);
        len += n;
    }
    snprintf(path, 1024, "%s", pp_test_path(name));
    EXPECT_EQ_I64(pp_test_write_file(path, out, len), 0);
    free(out);
    free(data);
}

static const char *write_trace(void) {
    pp_model *m = trace_in(INT64_MIN, INT64_MAX);
    pp_error err = {{0}};
    const char *path = pp_test_path("chunks.pptrace");
    EXPECT_EQ_I64(pp_pptrace_write(m, path, &err), PP_OK);
    pp_model_free(m);
    return path;
}

static void test_chunks_write_the_bytes_of_a_whole_read(void) {
    EXPECT_EQ_I64(expect_converts_as_whole(write_trace(), 3), PP_OK);
}

/* What the tests of old files read (tests/io/data). */
static void test_old_files_convert_in_chunks(void) {
    char path[512];
    for (int v = 1; v <= 2; v++) {
        snprintf(path, sizeof path, "%s/tests/io/data/full_v%d.pptrace", getenv("PP_SOURCE_DIR"),
                 v);
        EXPECT_EQ_I64(expect_converts_as_whole(path, 1), PP_OK); /* 21 events */
    }
}

/* The flight recorder's order: META and THREADS come last, before END. */
static void test_recorder_block_order_converts(void) {
    size_t len;
    unsigned char *data = slurp(write_trace(), &len);
    blocks b = parse(data, len);
    int order[66], n = 0;
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < b.n; i++) {
            int late = b.type[i] == 2 || b.type[i] == 4 || b.type[i] == 0x80000001u;
            if ((pass == 0 && !late && b.type[i] != 7) || (pass == 1 && late) ||
                (pass == 2 && b.type[i] == 7))
                order[n++] = (int)i;
        }
    order[n] = -1;
    char path[1024];
    write_reordered("recorder.pptrace", data, &b, order, path);
    EXPECT_EQ_I64(expect_converts_as_whole(path, 3), PP_OK);
}

/* Annotations of the first EVENTS block after the second: valid, sorted,
 * but a chunk of the first block's events is written before they come.
 * The file's path goes to `path`. */
static void write_annotations_behind(char path[1024]) {
    size_t len;
    unsigned char *data = slurp(write_trace(), &len);
    blocks b = parse(data, len);
    int order[66], n = 0, first_events = -1, swapped = 0;
    for (size_t i = 0; i < b.n; i++) {
        if (b.type[i] == 5 && first_events < 0)
            first_events = (int)i;
        order[n++] = (int)i;
        /* E0 A0 E1 -> E0 E1 A0 */
        if (!swapped && first_events >= 0 && b.type[i] == 5 && (int)i > first_events) {
            order[n - 2] = (int)i, order[n - 1] = (int)i - 1;
            swapped = 1;
        }
    }
    order[n] = -1;
    EXPECT(swapped && b.type[first_events + 1] == 6);
    write_reordered("behind.pptrace", data, &b, order, path);
}

static void test_annotations_behind_their_block_read_whole(void) {
    char path[1024];
    write_annotations_behind(path);
    EXPECT_EQ_I64(expect_converts_as_whole(path, 0), PP_OK);
}

/* A file cut inside its third EVENTS block and one cut at a block boundary
 * convert every complete block and say what was lost. */
static void test_cut_files_convert_what_is_complete(void) {
    size_t len;
    unsigned char *data = slurp(write_trace(), &len);
    blocks b = parse(data, len);
    size_t cuts[2] = {0, 0};
    for (size_t i = 0, events = 0; i < b.n; i++)
        if (b.type[i] == 5 && ++events == 3)
            cuts[0] = b.at[i] + 100, cuts[1] = b.at[i + 1];
    const char *path = pp_test_path("cut.pptrace");
    for (int k = 0; k < 2; k++) { /* the third EVENTS block is lost, then kept */
        EXPECT_EQ_I64(pp_test_write_file(path, data, cuts[k]), 0);
        EXPECT_EQ_I64(expect_converts_as_whole(path, 2 + (uint64_t)k), PP_ETRUNCATED);
    }
    free(data);
}

/* Damage to the third EVENTS block: a bad checksum, which the first pass
 * finds (nothing is written; the whole read names it), and a track index
 * out of range under a good checksum, which only decoding finds, after two
 * chunks were written. Either way the whole read's message, and neither
 * OUT nor its temporary file. */
static void test_damage_in_a_later_chunk_leaves_no_output(void) {
    static const char *const found[2] = {"fails its checksum", "track index 127 out of range"};
    for (int k = 0; k < 2; k++) {
        size_t len;
        unsigned char *data = slurp(write_trace(), &len);
        blocks b = parse(data, len);
        for (size_t i = 0, events = 0; i < b.n; i++) {
            if (b.type[i] != 5 || ++events != 3)
                continue;
            unsigned char *payload = data + b.at[i] + 8;
            uint32_t plen = get32(data + b.at[i] + 4);
            if (k == 0) {
                payload[40] ^= 0x5a;
                continue;
            }
            /* version 2: row count, 11 column lengths, then the columns;
             * track is the 10th; its first varint becomes 127, one byte */
            size_t at = 48;
            for (int c = 0; c < 9; c++)
                at += get32(payload + 4 + 4 * c);
            payload[at] = 127;
            uint32_t crc = (uint32_t)crc32(0L, data + b.at[i], (uInt)(8 + plen));
            for (int j = 0; j < 4; j++)
                payload[plen + (size_t)j] = (unsigned char)(crc >> 8 * j);
        }
        const char *path = pp_test_path("damaged.pptrace");
        EXPECT_EQ_I64(pp_test_write_file(path, data, len), 0);
        free(data);
        pp_model *m = NULL;
        pp_error read_err = {{0}}, err = {{0}};
        EXPECT_EQ_I64(pp_trace_read(path, &m, &read_err), PP_EFORMAT);
        EXPECT_CONTAINS(read_err.msg, found[k]);
        char out[512], tmp[600];
        snprintf(out, sizeof out, "%s", pp_test_path("damaged.json"));
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
        pp_convert_info info;
        EXPECT_EQ_I64(pp_trace_convert(path, out, NULL, &info, &err), PP_EFORMAT);
        EXPECT_STR(err.msg, read_err.msg);
        EXPECT_EQ_U64(info.chunks, k == 0 ? 0 : 2);
        EXPECT(access(out, F_OK) != 0);
        EXPECT(access(tmp, F_OK) != 0);
    }
}

/* A window across the first chunk boundary (event 65536 starts at 655360
 * ns) whose start cuts span 60007 ([600070, 600082)) and falls on counter
 * 60008 (at 600080), both kept: chunked, and read whole (the file whose
 * annotations lie behind their block), both keep what the window meets. */
static void test_window_keeps_what_it_meets(void) {
    pp_convert_options opt = {.has_from = 1, .has_to = 1, .from_ns = 600080, .to_ns = 1000000};
    pp_model *want = trace_in(opt.from_ns, opt.to_ns);
    char in[2][1024];
    snprintf(in[0], sizeof in[0], "%s", write_trace());
    write_annotations_behind(in[1]);
    for (int k = 0; k < 2; k++) {
        char out[1024];
        snprintf(out, sizeof out, "%s", pp_test_path("window.pptrace"));
        pp_convert_info info;
        pp_error err = {{0}};
        EXPECT_EQ_I64(pp_trace_convert(in[k], out, &opt, &info, &err), PP_OK);
        EXPECT_EQ_U64(info.chunks, k == 0 ? 3 : 0);
        EXPECT_EQ_U64(info.events, pp_model_event_count(want));
        pp_model *got = NULL;
        EXPECT_EQ_I64(pp_trace_read(out, &got, &err), PP_OK);
        char why[256] = "";
        if (got && !pp_test_models_equal(want, got, why, sizeof why))
            pp_test_fail(__FILE__, __LINE__, "%s windowed: %s", in[k], why);
        pp_model_free(got);
    }
    pp_model_free(want);
}

static int count_chunk(void *ctx, const pp_model *chunk) {
    *(uint64_t *)ctx += pp_model_event_count(chunk);
    return 0;
}

/* A recording still being written grows between the two passes: the chunk
 * read stops where the first pass stopped, so both agree on what was
 * complete (and on the head they wrote). */
static void test_grown_file_reads_what_the_first_pass_saw(void) {
    size_t len;
    unsigned char *data = slurp(write_trace(), &len);
    blocks b = parse(data, len);
    size_t cut = 0;
    for (size_t i = 0, events = 0; i < b.n; i++)
        if (b.type[i] == 5 && ++events == 3)
            cut = b.at[i] + 100;
    char path[1024];
    snprintf(path, sizeof path, "%s", pp_test_path("growing.pptrace"));
    EXPECT_EQ_I64(pp_test_write_file(path, data, cut), 0);
    pp_model *whole = NULL;
    pp_error err = {{0}}, whole_err = {{0}};
    EXPECT_EQ_I64(pp_trace_read(path, &whole, &whole_err), PP_ETRUNCATED);
    pptrace_skeleton head;
    EXPECT_EQ_I64(pptrace_read_skeleton(path, &head, &err), PP_ETRUNCATED);
    EXPECT_EQ_U64(head.bytes, cut);
    EXPECT_EQ_I64(pp_test_write_file(path, data, len), 0); /* the rest arrives */
    uint64_t events = 0;
    EXPECT_EQ_I64(pptrace_read_chunks(path, &head, 65536, count_chunk, &events, &err),
                  PP_ETRUNCATED);
    EXPECT_STR(err.msg, whole_err.msg);
    EXPECT_EQ_U64(events, pp_model_event_count(whole));
    pp_model_free(whole);
    pp_model_free(head.model);
    free(data);
}

/* A file rewritten between the passes with more strings and tracks than
 * the first found: its chunks would name what the head lacks. */
static void test_rewritten_file_is_refused(void) {
    pp_model *m;
    EXPECT_EQ_I64(pp_model_create(&m), PP_OK);
    uint32_t track = add_track(m, PP_TRACK_KIND_THREAD, "app", "main");
    for (size_t i = 0; i < 300000; i++) {
        pp_event e;
        pp_event_init(&e);
        e.ts_ns = (int64_t)i, e.dur_ns = 1, e.track = track, e.name = 1;
        EXPECT_EQ_I64(pp_model_add_event(m, &e), PP_OK);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s", pp_test_path("rewritten.pptrace"));
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pptrace_write(m, path, &err), PP_OK);
    pp_model_free(m);
    pptrace_skeleton head;
    EXPECT_EQ_I64(pptrace_read_skeleton(path, &head, &err), PP_OK);
    size_t len;
    unsigned char *data = slurp(write_trace(), &len);
    EXPECT(len <= head.bytes); /* read whole under the first pass's size */
    EXPECT_EQ_I64(pp_test_write_file(path, data, len), 0);
    uint64_t events = 0;
    EXPECT_EQ_I64(pptrace_read_chunks(path, &head, 65536, count_chunk, &events, &err),
                  PP_EFORMAT);
    EXPECT_CONTAINS(err.msg, "the file changed while it was read");
    EXPECT_EQ_U64(events, 0);
    pp_model_free(head.model);
    free(data);
}

static void test_unwritable_output_is_named(void) {
    pp_error err = {{0}};
    pp_convert_info info;
    EXPECT_EQ_I64(pp_trace_convert(write_trace(), "/nonexistent-dir/x.json", NULL, &info, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "/nonexistent-dir/x.json");
    EXPECT_EQ_I64(pp_trace_convert(NULL, "x.json", NULL, NULL, &err), PP_EINVAL);
}

int main(void) {
    RUN(test_chunks_write_the_bytes_of_a_whole_read);
    RUN(test_old_files_convert_in_chunks);
    RUN(test_recorder_block_order_converts);
    RUN(test_annotations_behind_their_block_read_whole);
    RUN(test_cut_files_convert_what_is_complete);
    RUN(test_damage_in_a_later_chunk_leaves_no_output);
    RUN(test_window_keeps_what_it_meets);
    RUN(test_grown_file_reads_what_the_first_pass_saw);
    RUN(test_rewritten_file_is_refused);
    RUN(test_unwritable_output_is_named);
    return pp_test_finish();
}
