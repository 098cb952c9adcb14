/* json_scan.h — the streaming half of the Chrome JSON reader.
 *
 * A jreader keeps a sliding window over the (possibly gzip-compressed:
 * inflated on a thread of its own, io/gz_pipe.h) file, or maps a plain
 * regular file whole (json_scan.c, map_file). jreader_value finds the end
 * of the JSON value starting at the
 * cursor, refilling and growing the window as needed, so the caller can
 * parse that one value (an event) from contiguous memory with the jcur_*
 * functions. Memory is bounded by the largest single value, not the file.
 *
 * The window always ends in a NUL byte (buf[len] == 0), so scanning loops
 * may run on a byte table and check their bound once at the end, and is
 * followed by JSCAN_PAD readable bytes, so that numbers and names can be
 * read a word at a time without checking where the window ends first.
 *
 * Every error names the file, line:column and byte offset. */
#ifndef PP_IO_JSON_SCAN_H
#define PP_IO_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "io/gz_pipe.h"
#include "pipeprof/common.h"

typedef struct jreader {
    int fd;              /* plain files */
    gzFile gz;           /* gzip files */
    gz_pipe *inflater;   /* gzip files: inflating on a thread ahead, or NULL */
    gz_pipe_error gz_error; /* what the failed read of a gzip file said */
    const char *path;
    pp_error *err;
    char *buf;           /* the window, or the whole file when it is mapped */
    size_t map_bytes;    /* bytes mapped at buf (a regular file), 0: buf is allocated */
    size_t cap, len;
    size_t pos;          /* cursor: next unread byte */
    uint64_t base;       /* file offset of buf[0] */
    uint64_t line;       /* line number (1-based) at buf[0] */
    uint64_t line_start; /* file offset where that line starts */
    int eof;
    int failed;          /* an error was reported; status in rc */
    int rc;
} jreader;

/* The largest single JSON value (an event, or a top-level member other than
 * traceEvents) the reader holds in its window: a bound on the memory a small
 * (compressed) file can make the reader take. */
#define JSON_MAX_VALUE_BYTES (64u << 20)

/* Bytes readable past buf[len] (zeros): an 8-byte load from any byte
 * before buf[len]. */
#define JSCAN_PAD 16

/* For the small functions that read one field of every event: inlined
 * into their caller, the cursor stays in a register instead of going
 * through memory at every call (about 8% of the read, measured). */
#if defined(__GNUC__)
#define JSCAN_HOT __attribute__((always_inline)) static inline
#else
#define JSCAN_HOT static inline
#endif

static inline uint64_t jscan_load8(const char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Starts reading the open descriptor `fd` (the jreader owns it from now on,
 * also on failure); `path` names it in messages. */
int jreader_open(jreader *r, int fd, const char *path, pp_error *err);
void jreader_close(jreader *r);

/* Reports an error at buffer index `at`: "path:L:C (byte N): message". */
int jreader_fail(jreader *r, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Skips whitespace; returns the next byte (refilling), or -1 at end of file. */
int jreader_peek(jreader *r);
/* Makes at least `n` bytes after the cursor available in the window (fewer
 * only at end of file), so that most events can be parsed in place. */
int jreader_ensure(jreader *r, size_t n);
/* Forgets a reported error, to retry a value the slow way. */
void jreader_clear_error(jreader *r);
/* Finds the value at the cursor; on success [*start, *end) holds it in
 * r->buf (valid until the next jreader call) and the cursor moves past it. */
int jreader_value(jreader *r, size_t *start, size_t *end);

/* An in-memory cursor over one complete value (from jreader_value). Errors
 * are reported through the jreader with the right file position. */
typedef struct jcur {
    jreader *r;
    const char *p, *end;
} jcur;

/* A string token: raw bytes between the quotes; `escaped` if it holds
 * backslash escapes (jstr_text then decodes them). */
typedef struct jstr {
    const char *s;
    size_t len;
    int escaped;
} jstr;

/* 1 for the four JSON whitespace bytes. */
extern const unsigned char jscan_space[256];
/* Skips whitespace. A table lookup first: most calls meet none (compact
 * files), and the bound is checked only past a space (the byte at end is
 * readable: the window ends in its NUL sentinel, which is no space). */
static inline void jcur_ws(jcur *c) {
    while (jscan_space[(unsigned char)*c->p] && c->p < c->end)
        c->p++;
}
int jcur_expect_slow(jcur *c, char ch, const char *context);
/* Consumes `ch` (after whitespace) or reports "expected 'ch' context". */
static inline int jcur_expect(jcur *c, char ch, const char *context) {
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return PP_OK;
    }
    return jcur_expect_slow(c, ch, context);
}
/* Bytes that end a run of plain string characters: '"', '\\' and NUL
 * (the window's sentinel). */
extern const unsigned char jscan_string_stop[256];

/* The first of '"', '\\' or NUL at or after p. A byte at a time: the
 * strings of a trace are short and of lengths that repeat, which the
 * branch predictor learns, while eight or sixteen bytes a step (SWAR,
 * SSE2) put a chain of dependent instructions before every string's end
 * and measured slower (2026-12-07). */
static inline const char *jscan_string_end(const char *p) {
    while (!jscan_string_stop[(unsigned char)*p])
        p++;
    return p;
}

/* Reads a string token. Raw control characters are let through, as
 * Chrome's own parser does. The inline part takes the common case (no
 * whitespace before it, no escapes in it). */
int jcur_string_slow(jcur *c, jstr *out);
static inline int jcur_string(jcur *c, jstr *out) {
    const char *p = c->p;
    if (p < c->end && *p == '"') {
        const char *s = ++p;
        p = jscan_string_end(p);
        if (*p == '"' && p < c->end) {
            out->s = s;
            out->len = (size_t)(p - s);
            out->escaped = 0;
            c->p = p + 1;
            return PP_OK;
        }
    }
    return jcur_string_slow(c, out);
}
/* Reads a number token's text. */
int jcur_number(jcur *c, const char **text, size_t *len);
/* Fast paths for the common number shapes, parsed straight from the
 * cursor: an integer of at most 18 digits ("-12"), and microseconds with at
 * most 16 integer digits and 3 decimals ("1234.567" -> ns). They return 0
 * and move the cursor, or -1 without moving it (the caller then takes the
 * general path, which gives the same value or the error). Inline: pid,
 * tid, ts and dur of every event come this way. */
extern const unsigned char jscan_number_char[256];

/* Eight ASCII digits at p as a number, with a handful of multiplies
 * instead of eight steps (the SWAR method of simdjson / D. Lemire); 0 when
 * they are not all digits. Little-endian loads only. */
static inline int jscan_eight_digits(const char *p, uint64_t *out) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v = jscan_load8(p);
    if (((v & 0xF0F0F0F0F0F0F0F0ull) | (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) !=
        0x3333333333333333ull)
        return 0;
    v -= 0x3030303030303030ull;
    v = (v * 10) + (v >> 8);
    v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
    *out = v;
    return 1;
#else
    (void)p;
    (void)out;
    return 0;
#endif
}

/* The digits from *p on as a number, *p moved past them (the NUL sentinel
 * stops them). A run too long to fit wraps (unsigned); callers refuse runs
 * that long. */
static inline uint64_t jscan_digits(const char **p) {
    const char *q = *p;
    uint64_t v = 0;
    for (unsigned d; (d = (unsigned)((unsigned char)*q - '0')) < 10; q++)
        v = v * 10 + d;
    *p = q;
    return v;
}

static inline int jcur_small_int(jcur *c, int64_t *out) {
    int neg = *c->p == '-';
    const char *digits = c->p + neg, *p = digits;
    uint64_t v = jscan_digits(&p);
    if (p == digits || p - digits > 18 || jscan_number_char[(unsigned char)*p] || p > c->end)
        return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    c->p = p;
    return 0;
}

static inline int jcur_small_us(jcur *c, int64_t *ns) {
    const char *p = c->p;
    uint64_t v = 0, eight;
    if (jscan_eight_digits(p, &eight)) { /* epoch-scale times: 16 digits in two steps */
        v = eight;
        p += 8;
        if (jscan_eight_digits(p, &eight)) {
            v = v * 100000000 + eight;
            p += 8;
        }
    }
    const char *rest = p;
    uint64_t low = jscan_digits(&p);
    for (const char *q = rest; q < p; q++)
        v *= 10;
    v += low;
    if (p == c->p || p - c->p > 16)
        return -1;
    int frac = 0;
    if (*p == '.') {
        unsigned d1 = (unsigned)((unsigned char)p[1] - '0'), d2 = (unsigned)((unsigned char)p[2] - '0'),
                 d3 = (unsigned)((unsigned char)p[3] - '0');
        if (d1 < 10 && d2 < 10 && d3 < 10) { /* the writers' three decimals, in one step */
            v = v * 1000 + d1 * 100 + d2 * 10 + d3;
            frac = 3;
            p += 3;
        } else {
            for (unsigned d; frac < 3 && (d = (unsigned)((unsigned char)p[1] - '0')) < 10; frac++, p++)
                v = v * 10 + d;
        }
        if (frac == 0)
            return -1;
        p++;
    }
    if (jscan_number_char[(unsigned char)*p] || p > c->end)
        return -1; /* more digits, an exponent: the general path */
    for (; frac < 3; frac++)
        v *= 10; /* at most 16 + 3 digits: fits in a uint64 */
    if (v > (uint64_t)INT64_MAX)
        return -1;
    *ns = (int64_t)v;
    c->p = p;
    return 0;
}

/* Skips any value. */
int jcur_skip(jcur *c);
/* Reports an error at the cursor. */
int jcur_fail(jcur *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Decodes a string token into `scratch` (escapes, \uXXXX and surrogate
 * pairs to UTF-8) and returns its text and length. The result is valid until
 * the scratch buffer is reused. PP_EFORMAT for a bad escape (no message). */
typedef struct jscratch {
    char *buf;
    size_t cap;
} jscratch;
int jstr_text(const jstr *s, jscratch *scratch, const char **text, size_t *len);
/* memcmp(a, b, n) == 0 for the few bytes of a key or a name, without the
 * library call that costs more than the comparison. */
static inline int jscan_same(const char *a, const char *b, size_t n) {
    for (; n >= 8; a += 8, b += 8, n -= 8)
        if (jscan_load8(a) != jscan_load8(b))
            return 0;
    while (n--)
        if (*a++ != *b++)
            return 0;
    return 1;
}
static inline int jstr_eq_n(const jstr *s, const char *lit, size_t n) {
    return !s->escaped && s->len == n && jscan_same(s->s, lit, n);
}
/* True when the token is exactly the literal (no escapes). */
#define jstr_eq(s, lit) jstr_eq_n((s), (lit), sizeof(lit) - 1)

/* The first eight bytes of a string token as a word, byte i in bits
 * 8i..8i+7 (all of a shorter one, zero-filled; 0 when it has escapes).
 * Read once a key, it tells the keys an event may have apart with one
 * compare each against a constant (jstr_word_is), instead of a byte loop a
 * candidate. Loads past a short key are safe: the window's padding. */
static inline uint64_t jstr_word(const jstr *s) {
    if (s->escaped)
        return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w = jscan_load8(s->s);
    return s->len >= 8 ? w : w & ((1ull << (8 * s->len)) - 1);
#else
    uint64_t w = 0;
    for (size_t i = 0; i < s->len && i < 8; i++)
        w |= (uint64_t)(unsigned char)s->s[i] << (8 * i);
    return w;
#endif
}
/* Byte i of a literal in its place in a jstr_word (an integer constant;
 * the index stays inside the literal). */
#define JSCAN_WORD_BYTE(lit, i)                                                                \
    ((i) < sizeof(lit) - 1 ? (uint64_t)(unsigned char)(lit)[(i) < sizeof(lit) ? (i) : 0] << (8 * (i)) \
                           : 0)
/* The jstr_word of a literal of at most eight bytes, as a constant. */
#define JSCAN_WORD(lit)                                                                        \
    (JSCAN_WORD_BYTE(lit, 0) | JSCAN_WORD_BYTE(lit, 1) | JSCAN_WORD_BYTE(lit, 2) |             \
     JSCAN_WORD_BYTE(lit, 3) | JSCAN_WORD_BYTE(lit, 4) | JSCAN_WORD_BYTE(lit, 5) |             \
     JSCAN_WORD_BYTE(lit, 6) | JSCAN_WORD_BYTE(lit, 7))
/* True when the token whose jstr_word is `w` is exactly `lit`, a literal
 * of at most eight bytes. */
#define jstr_word_is(s, w, lit) ((s)->len == sizeof(lit) - 1 && (w) == JSCAN_WORD(lit))

/* Exact decimal microseconds -> integer nanoseconds (rounded half away
 * from zero). PP_EFORMAT when not a number or out of range. */
int json_us_to_ns(const char *text, size_t len, int64_t *ns);
/* Integer token -> int64 / uint64; PP_EFORMAT for fractions or overflow. */
int json_to_i64(const char *text, size_t len, int64_t *out);
int json_to_u64(const char *text, size_t len, uint64_t *out);
/* Any number token -> double. */
int json_to_double(const char *text, size_t len, double *out);
/* True if the token has a fraction or an exponent. */
int json_is_fractional(const char *text, size_t len);

#endif
