/* A deterministic mutation fuzzer for the .pptrace reader: whatever a file
 * holds, the reader returns PP_OK, PP_EFORMAT or PP_ETRUNCATED, fills a
 * message on error, hands back a model only when it may, and never crashes
 * (run it under ASan/UBSan to make "never" mean something).
 *
 * Mutations start from a valid file and mix blind damage (bit flips, byte
 * insertions and deletions, truncation) with damage that keeps the framing
 * plausible (a block's length field, or its type or payload with the CRC
 * recomputed, or whole blocks repeated or dropped) so that the decoders
 * behind the checksum get exercised too. PP_FUZZ_ITERATIONS overrides the
 * default of 20000 iterations; the seed is fixed, so a failure repeats. */
#include <stdlib.h>
#include <zlib.h>

#include "pipeprof/io.h"
#include "testutil.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t rng(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t below(size_t n) {
    return n ? (size_t)(rng() % n) : 0;
}

static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

typedef struct buf {
    unsigned char *p;
    size_t len, cap;
} buf;

/* Replaces bytes [at, at + del) with `ins` bytes of `src` (random if NULL). */
static void splice(buf *b, size_t at, size_t del, const unsigned char *src, size_t ins) {
    if (b->len - del + ins > b->cap) {
        b->cap = (b->len - del + ins) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memmove(b->p + at + ins, b->p + at + del, b->len - at - del);
    for (size_t i = 0; i < ins; i++)
        b->p[at + i] = src ? src[i] : (unsigned char)rng();
    b->len = b->len - del + ins;
}

/* Block head offsets of the framing as far as it holds together. */
static size_t list_blocks(const buf *b, size_t *at, size_t max) {
    size_t n = 0;
    for (size_t off = 16; off + 12 <= b->len && n < max;) {
        uint64_t end = off + 12 + (uint64_t)get32(b->p + off + 4);
        if (end > b->len)
            break;
        at[n++] = off;
        off = (size_t)end;
    }
    return n;
}

static void fix_crc(buf *b, size_t at) {
    uint32_t len = get32(b->p + at + 4);
    put32(b->p + at + 8 + len, (uint32_t)crc32(0L, b->p + at, (uInt)(8 + len)));
}

static const uint64_t interesting[] = {0, 1, 2, 3, 4, 5, 7, 8, 40, 41, 71, 0x7f, 0x80, 0xff,
                                       0xffff, 65536, 65537, 0x7fffffff, 0x80000000u,
                                       0xffffffffu, 0x4000001u, UINT64_MAX, INT64_MAX};

static uint64_t pick_value(void) {
    return rng() % 4 ? interesting[below(sizeof interesting / sizeof interesting[0])] : rng();
}

/* Applies one random mutation; returns its name for failure reports. */
static const char *mutate(buf *b) {
    size_t blocks[256], n = list_blocks(b, blocks, 256);
    size_t blk = n ? blocks[below(n)] : 0;
    uint32_t blen = n ? get32(b->p + blk + 4) : 0;
    switch (below(n ? 10 : 5)) {
    case 0:
        if (b->len)
            b->p[below(b->len)] ^= (unsigned char)(1u << below(8));
        return "bit flip";
    case 1:
        if (b->len)
            b->p[below(b->len)] = (unsigned char)pick_value();
        return "byte set";
    case 2:
        splice(b, below(b->len + 1), 0, NULL, 1 + below(16));
        return "insertion";
    case 3: {
        size_t at = below(b->len), del = 1 + below(64);
        splice(b, at, del < b->len - at ? del : b->len - at, NULL, 0);
        return "deletion";
    }
    case 4:
        b->len = below(b->len + 1);
        return "truncation";
    case 5:
        /* any value, or off by up to one event row either way */
        put32(b->p + blk + 4,
              rng() % 2 ? (uint32_t)pick_value() : blen + (uint32_t)below(143) - 71);
        return "length field";
    case 6:
        put32(b->p + blk, (uint32_t)(rng() % 3 ? below(10) : pick_value() | 0x80000000u));
        fix_crc(b, blk);
        return "block type (CRC fixed)";
    case 7: {
        size_t width = (size_t)1 << below(4), at = blk + 8 + below(blen);
        uint64_t v = pick_value();
        for (size_t i = 0; i < width && at + i < blk + 8 + blen; i++)
            b->p[at + i] = (unsigned char)(v >> 8 * i);
        fix_crc(b, blk);
        return "payload field (CRC fixed)";
    }
    case 8: {
        size_t whole = 12 + blen, to = blocks[below(n)];
        unsigned char *copy = malloc(whole);
        memcpy(copy, b->p + blk, whole);
        splice(b, to, 0, copy, whole);
        free(copy);
        return "block repeated";
    }
    default:
        splice(b, blk, 12 + blen, NULL, 0);
        return "block dropped";
    }
}

/* What the reader may hand back: a model only with OK or TRUNCATED, a
 * message exactly when it failed, and a model whose references hold. */
static int check_result(int rc, const pp_model *m, const pp_error *err, const char *path) {
    if (rc != PP_OK && rc != PP_EFORMAT && rc != PP_ETRUNCATED)
        return 0;
    if ((rc == PP_OK) != (err->msg[0] == 0) ||
        (rc != PP_OK && strncmp(err->msg, path, strlen(path)) != 0))
        return 0;
    if ((rc == PP_EFORMAT) != (m == NULL))
        return 0;
    if (rc == PP_EFORMAT)
        return strstr(err->msg, ": byte ") != NULL;
    pp_event_columns c;
    pp_model_columns(m, &c);
    for (size_t i = 0; i < c.count; i++)
        if (c.track[i] >= pp_model_track_count(m) || c.name[i] >= pp_model_string_count(m) ||
            c.dur_ns[i] < 0)
            return 0;
    size_t nanns;
    const pp_annotation *a = pp_model_annotations(m, &nanns);
    for (size_t i = 0; i < nanns; i++)
        if (a[i].event >= c.count || (i && a[i].event < a[i - 1].event))
            return 0;
    return 1;
}

/* A small model with every table filled, as the starting file. */
static pp_model *seed_model(void) {
    pp_model *m;
    uint32_t s[6], trk[3];
    const char *texts[] = {"demo", "GPU.0", "main", "infer", "Embedding", "slot"};
    pp_model_create(&m);
    for (int i = 0; i < 6; i++)
        pp_model_intern(m, texts[i], strlen(texts[i]), &s[i]);
    for (uint8_t k = 0; k < 3; k++) {
        pp_track_info t;
        pp_track_info_init(&t);
        t.kind = k;
        t.process = s[0];
        t.name = s[1 + k];
        pp_model_add_track(m, &t, &trk[k]);
    }
    pp_thread_info th = {7, s[2], 100, 3};
    pp_model_add_thread(m, &th);
    for (int i = 0; i < 40; i++) {
        pp_event e;
        pp_event_init(&e);
        e.kind = (uint8_t)(i % 6);
        e.role = (uint8_t)(i % 7);
        e.phase = (uint8_t)(i % 3);
        e.ts_ns = i * 100;
        e.dur_ns = i;
        e.value = i / 4.0;
        e.name = s[3];
        e.stage = i % 2 ? s[4] : 0;
        e.track = trk[i % 3];
        pp_model_add_event(m, &e);
        pp_annotation a = {.event = (uint64_t)i, .key = s[5], .type = (uint8_t)(i % 3)};
        a.v.s = s[i % 6];
        pp_model_add_annotation(m, &a);
    }
    pp_model_meta_mut(m)->level = 1;
    pp_model_meta_mut(m)->process_name = s[0];
    return m;
}

static long iterations(long fallback) {
    const char *env = getenv("PP_FUZZ_ITERATIONS");
    return env && atol(env) > 0 ? atol(env) : fallback;
}

/* Reads `iterations` mutations of the file `seed_data`. */
static void fuzz(const unsigned char *seed_data, size_t seed_len, long iterations) {
    const char *path = pp_test_path("fuzz.pptrace");
    pp_error err = {{0}};
    size_t outcomes[3] = {0};
    buf b = {malloc(seed_len * 4), 0, seed_len * 4};
    long it;
    for (it = 0; it < iterations; it++) {
        char what[160] = "";
        int nmut = 1 + (int)below(4);
        memcpy(b.p, seed_data, seed_len);
        b.len = seed_len;
        for (int k = 0; k < nmut; k++) {
            const char *name = mutate(&b);
            size_t used = strlen(what);
            snprintf(what + used, sizeof what - used, "%s%s", k ? ", " : "", name);
        }
        pp_test_write_file(path, b.p, b.len);
        pp_model *m = NULL;
        memset(&err, 0, sizeof err);
        int rc = pp_pptrace_read(path, &m, &err);
        int ok = check_result(rc, m, &err, path);
        pp_model_free(m);
        pp_test_checks++;
        if (!ok) {
            const char *keep = pp_test_path("fuzz_failure.pptrace");
            pp_test_write_file(keep, b.p, b.len);
            pp_test_fail(__FILE__, __LINE__, "iteration %ld (%s): rc %d, message \"%s\"; input in %s",
                         it, what, rc, err.msg, keep);
            break;
        }
        outcomes[rc == PP_OK ? 0 : rc == PP_EFORMAT ? 1 : 2]++;
    }
    fprintf(stderr, "%ld iterations: %zu ok, %zu format errors, %zu truncated\n", it, outcomes[0],
            outcomes[1], outcomes[2]);
    /* the mutations reach every outcome, or the fuzzer is not testing much */
    EXPECT(iterations < 1000 || (outcomes[0] && outcomes[1] && outcomes[2]));
    free(b.p);
}

/* The file the writer writes now (version 2). */
static void test_reader_survives_mutations(void) {
    const char *seed_path = pp_test_path("fuzz_seed.pptrace");
    pp_model *seed = seed_model();
    pp_error err = {{0}};
    size_t seed_len = 0;
    EXPECT_EQ_I64(pp_pptrace_write(seed, seed_path, &err), PP_OK);
    pp_model_free(seed);
    unsigned char *seed_data = (unsigned char *)pp_test_read_file(seed_path, &seed_len);
    fuzz(seed_data, seed_len, iterations(16000));
    free(seed_data);
}

/* A version-1 file (tests/io/data), whose fixed-width tables are still read. */
static void test_reader_survives_mutations_of_version_1(void) {
    char seed_path[1024];
    size_t seed_len = 0;
    snprintf(seed_path, sizeof seed_path, "%s/tests/io/data/full_v1.pptrace", getenv("PP_SOURCE_DIR"));
    unsigned char *seed_data = (unsigned char *)pp_test_read_file(seed_path, &seed_len);
    fuzz(seed_data, seed_len, iterations(4000));
    free(seed_data);
}

int main(void) {
    RUN(test_reader_survives_mutations);
    RUN(test_reader_survives_mutations_of_version_1);
    return pp_test_finish();
}
