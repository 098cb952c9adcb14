/* Streaming JSON scanning over a sliding window (see json_scan.h). */
#include "io/json_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

#define READ_CHUNK (1u << 20)

/* A plain regular file is mapped whole instead of read into the window:
 * no copy of every byte out of the page cache, no refills. Its pages are
 * the page cache's (clean, dropped under memory pressure), not the
 * process's own memory, so the bound of the window still holds for what
 * the reader allocates. The file is mapped over a reservation one page
 * longer, so at least a page of zeros follows it: the window's NUL sentinel
 * and JSCAN_PAD. 0 when mapped, -1 to read it instead (a pipe, an empty
 * file, no address space). */
static int map_file(jreader *r) {
    struct stat st;
    long page = sysconf(_SC_PAGESIZE);
    if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || page <= 0 ||
        (uint64_t)st.st_size > SIZE_MAX / 2)
        return -1;
    size_t size = (size_t)st.st_size, span = (size + 2 * (size_t)page - 1) / (size_t)page * (size_t)page;
    char *base = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return -1;
    if (mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, r->fd, 0) == MAP_FAILED) {
        munmap(base, span);
        return -1;
    }
    madvise(base, size, MADV_SEQUENTIAL);
    r->buf = base;
    r->map_bytes = span;
    r->len = r->cap = size;
    r->eof = 1;
    return 0;
}

int jreader_open(jreader *r, int fd, const char *path, pp_error *err) {
    memset(r, 0, sizeof *r);
    r->path = path;
    r->err = err;
    r->line = 1;
    r->fd = fd;
    /* gzip by content, whatever the name; plain files are read directly
     * (zlib's transparent mode would copy every byte once more) */
    unsigned char magic[2] = {0, 0};
    ssize_t got = pread(r->fd, magic, 2, 0);
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        r->gz = gzdopen(r->fd, "rb");
        if (!r->gz)
            close(r->fd);
        r->fd = -1;
        if (r->gz) {
            gzbuffer(r->gz, READ_CHUNK);
            r->inflater = gz_pipe_start(r->gz, READ_CHUNK);
        }
    }
    if (r->gz || map_file(r) != 0) {
        r->cap = 2 * READ_CHUNK + 1;
        r->buf = malloc(r->cap + JSCAN_PAD);
    }
    if ((r->fd < 0 && !r->gz) || !r->buf) {
        jreader_close(r);
        return pp_set_error(err, PP_ENOMEM, "%s: cannot open: out of memory", path);
    }
    /* A UTF-8 byte order mark (some editors and Windows tools write one) is
     * not JSON, but it says nothing either: skip it. */
    int rc = jreader_ensure(r, 3);
    if (rc != PP_OK) {
        jreader_close(r);
        return rc;
    }
    if (r->len >= 3 && memcmp(r->buf, "\xef\xbb\xbf", 3) == 0)
        r->pos = 3;
    return PP_OK;
}

void jreader_close(jreader *r) {
    gz_pipe_stop(r->inflater);
    r->inflater = NULL;
    if (r->gz)
        gzclose(r->gz);
    else if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    if (r->map_bytes)
        munmap(r->buf, r->map_bytes);
    else
        free(r->buf);
    r->map_bytes = 0;
    r->gz = NULL;
    r->buf = NULL;
}

/* Counts the lines of buf[0..n) on from (*line, *line_start); memchr skips
 * whole lines at vector speed. */
static void count_lines(const jreader *r, size_t n, uint64_t *line, uint64_t *line_start) {
    for (const char *p = r->buf, *end = r->buf + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL;) {
        ++*line;
        *line_start = r->base + (uint64_t)(++p - r->buf);
    }
}

int jreader_fail(jreader *r, size_t at, const char *fmt, ...) {
    if (r->failed)
        return r->rc;
    uint64_t line = r->line, line_start = r->line_start;
    count_lines(r, at < r->len ? at : r->len, &line, &line_start);
    uint64_t off = r->base + at;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->failed = 1;
    r->rc = PP_EFORMAT;
    return pp_set_error(r->err, PP_EFORMAT, "%s:%llu:%llu (byte %llu): %s", r->path,
                        (unsigned long long)line, (unsigned long long)(off - line_start + 1),
                        (unsigned long long)off, msg);
}

/* The next READ_CHUNK bytes (fewer at the end) of a gzip file into dst,
 * from the inflating thread or from gzread here: the count, 0 at the end,
 * -1 on an error (r->gz_error says which). */
static long inflate_chunk(jreader *r, char *dst) {
    if (r->inflater)
        return gz_pipe_read(r->inflater, dst, READ_CHUNK, &r->gz_error);
    long n = gzread(r->gz, dst, READ_CHUNK);
    if (n < 0)
        gz_pipe_error_read(r->gz, &r->gz_error);
    return n;
}

/* Drops buf[0..keep) (counting its lines) and reads more. Returns bytes
 * read, 0 at end of file, -1 on error (reported). */
static long refill(jreader *r, size_t keep) {
    if (r->map_bytes)
        return 0; /* a mapped file is all there from the start */
    /* line numbers are only for error messages, but the bytes are about to
     * go: count them now */
    count_lines(r, keep, &r->line, &r->line_start);
    memmove(r->buf, r->buf + keep, r->len - keep);
    r->len -= keep;
    r->pos -= keep;
    r->base += keep;
    memset(r->buf + r->len, 0, JSCAN_PAD); /* the sentinel, also for the window left at end of file */
    if (r->eof)
        return 0;
    if (r->cap - r->len < READ_CHUNK + 1) {
        size_t cap = r->cap * 2;
        char *b = realloc(r->buf, cap + JSCAN_PAD);
        if (!b) {
            r->failed = 1;
            r->rc = PP_ENOMEM;
            pp_set_error(r->err, PP_ENOMEM, "%s: out of memory", r->path);
            return -1;
        }
        r->buf = b;
        r->cap = cap;
    }
    long n;
    if (!r->gz) {
        do
            n = (long)read(r->fd, r->buf + r->len, READ_CHUNK);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
            r->failed = 1;
            r->rc = PP_EIO;
            pp_set_error(r->err, PP_EIO, "%s: byte %llu: read failed: %s", r->path,
                         (unsigned long long)(r->base + r->len), strerror(errno));
            return -1;
        }
    } else {
        n = inflate_chunk(r, r->buf + r->len);
    }
    if (r->gz && n < 0) {
        r->failed = 1;
        r->rc = r->gz_error.zerr == Z_ERRNO ? PP_EIO : PP_EFORMAT;
        pp_set_error(r->err, r->rc, "%s: byte %llu: %s: %s", r->path,
                     (unsigned long long)(r->base + r->len),
                     r->gz_error.zerr == Z_ERRNO ? "read failed" : "corrupt gzip data",
                     r->gz_error.zerr == Z_ERRNO ? strerror(r->gz_error.err_no)
                                                 : r->gz_error.why);
        return -1;
    }
    if (n == 0)
        r->eof = 1;
    r->len += (size_t)n;
    memset(r->buf + r->len, 0, JSCAN_PAD); /* sentinel: scanning loops stop here without a bounds check */
    return n;
}

int jreader_ensure(jreader *r, size_t n) {
    while (!r->eof && r->len - r->pos < n) {
        if (refill(r, r->pos) < 0)
            return r->rc;
    }
    return PP_OK;
}

void jreader_clear_error(jreader *r) {
    r->failed = 0;
    r->rc = PP_OK;
    if (r->err)
        r->err->msg[0] = 0;
}

int jreader_peek(jreader *r) {
    for (;;) {
        while (r->pos < r->len) {
            char c = r->buf[r->pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                return (unsigned char)c;
            r->pos++;
        }
        long n = refill(r, r->pos);
        if (n < 0)
            return -2;
        if (n == 0)
            return -1;
    }
}

static int too_long(jreader *r, size_t start) {
    return jreader_fail(r, start, "the value that starts here is longer than %u MiB (no trace "
                        "event is that large; the file is damaged or not a trace)",
                        JSON_MAX_VALUE_BYTES >> 20);
}

/* Bytes that matter when looking for the end of an object or array. */
static const unsigned char structural[256] = {['"'] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1};

int jreader_value(jreader *r, size_t *start, size_t *end) {
    size_t s = r->pos, i = s;
    int depth = 0, in_string = 0, scalar = 0;
    char first = r->buf[s];
    if (first == '"') {
        in_string = 1;
        i++;
    } else if (first != '{' && first != '[') {
        scalar = 1;
    }
    for (;;) {
        while (i < r->len) {
            if (in_string) {
                const char *q = memchr(r->buf + i, '"', r->len - i);
                if (!q) {
                    i = r->len;
                    break;
                }
                size_t qi = (size_t)(q - r->buf), bs = 0;
                while (qi - bs > s && r->buf[qi - bs - 1] == '\\')
                    bs++;
                i = qi + 1;
                if (bs % 2 == 0) {
                    in_string = 0;
                    if (first == '"')
                        goto done;
                }
                continue;
            }
            if (!scalar) {
                while (i < r->len && !structural[(unsigned char)r->buf[i]])
                    i++;
                if (i == r->len)
                    break;
            }
            char c = r->buf[i];
            if (scalar) {
                if (c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t')
                    goto done;
                i++;
                continue;
            }
            i++;
            if (c == '"')
                in_string = 1;
            else if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                goto done;
        }
        size_t rel = i - s;
        if (rel > JSON_MAX_VALUE_BYTES)
            return too_long(r, s);
        uint64_t base = r->base;
        long n = refill(r, s);
        if (n < 0)
            return r->rc;
        s -= (size_t)(r->base - base); /* what refill dropped before the value */
        i = s + rel;
        if (n == 0) {
            if (scalar)
                goto done;
            return jreader_fail(r, s, "unexpected end of file inside the value that starts here (the file may be truncated)");
        }
    }
done:
    if (i - s > JSON_MAX_VALUE_BYTES) /* a mapped file is never refilled: the same bound */
        return too_long(r, s);
    *start = s;
    *end = i;
    r->pos = i;
    return PP_OK;
}

/* ---- in-memory cursor ---- */

int jcur_fail(jcur *c, const char *fmt, ...) {
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return jreader_fail(c->r, (size_t)(c->p - c->r->buf), "%s", msg);
}


static const char *describe(const jcur *c, char *buf, size_t n) {
    if (c->p >= c->end)
        return "end of value";
    unsigned char ch = (unsigned char)*c->p;
    if (ch >= 0x20 && ch < 0x7f)
        snprintf(buf, n, "'%c'", ch);
    else
        snprintf(buf, n, "byte 0x%02x", ch);
    return buf;
}

int jcur_expect_slow(jcur *c, char ch, const char *context) {
    jcur_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return PP_OK;
    }
    char got[24];
    return jcur_fail(c, "expected '%c' %s (got %s)", ch, context, describe(c, got, sizeof got));
}

const unsigned char jscan_string_stop[256] = {['"'] = 1, ['\\'] = 1, [0] = 1};
const unsigned char jscan_space[256] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1};
const unsigned char jscan_number_char[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, ['-'] = 1, ['+'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1};


int jcur_string_slow(jcur *c, jstr *out) {
    jcur_ws(c);
    if (c->p >= c->end || *c->p != '"') {
        char got[24];
        return jcur_fail(c, "expected a string (got %s)", describe(c, got, sizeof got));
    }
    const char *s = ++c->p, *p = s;
    out->escaped = 0;
    for (;;) {
        p = jscan_string_end(p);
        if (*p != '\\' || p + 1 >= c->end)
            break;
        out->escaped = 1;
        p += 2;
    }
    if (p >= c->end || *p != '"') {
        c->p = c->end;
        return jcur_fail(c, "unterminated string");
    }
    out->s = s;
    out->len = (size_t)(p - s);
    c->p = p + 1;
    return PP_OK;
}

int jcur_number(jcur *c, const char **text, size_t *len) {
    jcur_ws(c);
    const char *s = c->p;
    while (jscan_number_char[(unsigned char)*c->p])
        c->p++;
    if (c->p > c->end)
        c->p = c->end;
    if (c->p == s) {
        char got[24];
        return jcur_fail(c, "expected a number (got %s)", describe(c, got, sizeof got));
    }
    *text = s;
    *len = (size_t)(c->p - s);
    return PP_OK;
}

static int skip_depth(jcur *c, int depth) {
    jstr s;
    jcur_ws(c);
    if (c->p >= c->end)
        return jcur_fail(c, "expected a value (got end of value)");
    if (depth > 64)
        return jcur_fail(c, "values nested more than 64 deep");
    char ch = *c->p;
    if (ch == '"')
        return jcur_string(c, &s);
    if (ch == '{' || ch == '[') {
        char close = ch == '{' ? '}' : ']';
        c->p++;
        jcur_ws(c);
        if (c->p < c->end && *c->p == close) {
            c->p++;
            return PP_OK;
        }
        for (;;) {
            int rc;
            if (ch == '{' && ((rc = jcur_string(c, &s)) || (rc = jcur_expect(c, ':', "after a key"))))
                return rc;
            if ((rc = skip_depth(c, depth + 1)))
                return rc;
            jcur_ws(c);
            if (c->p < c->end && *c->p == ',') {
                c->p++;
                continue;
            }
            return jcur_expect(c, close, ch == '{' ? "or ',' in an object" : "or ',' in an array");
        }
    }
    const char *word = ch == 't' ? "true" : ch == 'f' ? "false" : ch == 'n' ? "null" : NULL;
    size_t n = word ? strlen(word) : 0;
    if (word && (size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return PP_OK;
    }
    const char *t;
    return jcur_number(c, &t, &n);
}

int jcur_skip(jcur *c) {
    return skip_depth(c, 0);
}

/* ---- strings ---- */

static int hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char h = p[i];
        v <<= 4;
        if (h >= '0' && h <= '9')
            v |= (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f')
            v |= (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F')
            v |= (unsigned)(h - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int jstr_text(const jstr *s, jscratch *scratch, const char **text, size_t *len) {
    if (!s->escaped) {
        *text = s->s;
        *len = s->len;
        return PP_OK;
    }
    if (scratch->cap < s->len + 1) {
        char *b = realloc(scratch->buf, s->len + 1);
        if (!b)
            return PP_ENOMEM;
        scratch->buf = b;
        scratch->cap = s->len + 1;
    }
    char *o = scratch->buf;
    const char *p = s->s, *end = s->s + s->len;
    while (p < end) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        if (++p >= end)
            return PP_EFORMAT;
        char e = *p++;
        unsigned cp, lo;
        switch (e) {
        case '"': case '\\': case '/': *o++ = e; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u':
            if (end - p < 4 || hex4(p, &cp))
                return PP_EFORMAT;
            p += 4;
            if (cp >= 0xD800 && cp < 0xDC00) {
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) || lo < 0xDC00 ||
                    lo > 0xDFFF)
                    return PP_EFORMAT;
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                return PP_EFORMAT;
            }
            if (cp == 0)
                return PP_EFORMAT; /* names are C strings */
            o += put_utf8(o, cp); /* never longer than the 6+ bytes it replaces */
            break;
        default:
            return PP_EFORMAT;
        }
    }
    *text = scratch->buf;
    *len = (size_t)(o - scratch->buf);
    return PP_OK;
}



/* ---- numbers ---- */

/* Splits a JSON number into sign, significant digits and a decimal
 * exponent: value = sign * digits * 10^exp10. */
typedef struct decimal {
    int negative;
    char digits[40];
    int ndigits;  /* significant digits kept (leading zeros dropped) */
    int exp10;
    int fraction; /* had '.' or an exponent */
} decimal;

static int parse_decimal(const char *t, size_t len, decimal *d) {
    const char *p = t, *end = t + len;
    memset(d, 0, sizeof *d);
    if (p < end && *p == '-') {
        d->negative = 1;
        p++;
    }
    int seen = 0, dropped = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        seen = 1;
        if (d->ndigits || *p != '0') {
            if (d->ndigits < (int)sizeof d->digits)
                d->digits[d->ndigits++] = *p;
            else
                dropped++;
        }
        p++;
    }
    d->exp10 = dropped;
    if (p < end && *p == '.') {
        d->fraction = 1;
        p++;
        int frac = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            frac = 1;
            if (d->ndigits || *p != '0') {
                if (d->ndigits < (int)sizeof d->digits) {
                    d->digits[d->ndigits++] = *p;
                    d->exp10--;
                }
            } else {
                d->exp10--;
            }
            p++;
        }
        if (!frac)
            return PP_EFORMAT;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        d->fraction = 1;
        p++;
        int eneg = 0, e = 0, edigits = 0;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        while (p < end && *p >= '0' && *p <= '9') {
            if (e < 100000)
                e = e * 10 + (*p - '0');
            edigits = 1;
            p++;
        }
        if (!edigits)
            return PP_EFORMAT;
        d->exp10 += eneg ? -e : e;
    }
    return seen && p == end ? PP_OK : PP_EFORMAT;
}

/* digits * 10^shift as an unsigned magnitude, rounded half up on the
 * digits cut off; PP_EFORMAT on overflow. */
static int scaled_magnitude(const decimal *d, int shift, uint64_t *out) {
    int keep = d->ndigits + shift; /* digits left of the decimal point */
    uint64_t v = 0;
    for (int i = 0; i < keep; i++) {
        unsigned digit = i < d->ndigits ? (unsigned)(d->digits[i] - '0') : 0;
        if (v > (UINT64_MAX - digit) / 10)
            return PP_EFORMAT;
        v = v * 10 + digit;
    }
    if (keep >= 0 && keep < d->ndigits && d->digits[keep] >= '5') {
        if (v == UINT64_MAX)
            return PP_EFORMAT;
        v++;
    }
    *out = v;
    return PP_OK;
}

/* The common shapes "123", "123.4", "123.456" in one pass; 0 if taken. */
static int us_to_ns_fast(const char *t, size_t len, int64_t *ns) {
    size_t i = 0;
    int digits = 0, frac = 0;
    uint64_t v = 0;
    for (; i < len && t[i] >= '0' && t[i] <= '9'; i++, digits++)
        v = v * 10 + (uint64_t)(t[i] - '0');
    if (digits == 0)
        return -1;
    if (i < len && t[i] == '.') {
        for (i++; i < len && frac < 3 && t[i] >= '0' && t[i] <= '9'; i++, frac++)
            v = v * 10 + (uint64_t)(t[i] - '0');
        if (frac == 0)
            return -1;
    }
    /* 19 digits always fit in a uint64 */
    if (i != len || digits + frac > 19)
        return -1;
    for (; frac < 3; frac++) {
        if (v > (uint64_t)INT64_MAX / 10)
            return -1;
        v *= 10;
    }
    if (v > (uint64_t)INT64_MAX)
        return -1;
    *ns = (int64_t)v;
    return 0;
}

int json_us_to_ns(const char *text, size_t len, int64_t *ns) {
    decimal d;
    if (us_to_ns_fast(text, len, ns) == 0)
        return PP_OK;
    uint64_t mag;
    if (parse_decimal(text, len, &d) || scaled_magnitude(&d, d.exp10 + 3, &mag) ||
        mag > (uint64_t)INT64_MAX)
        return PP_EFORMAT;
    *ns = d.negative ? -(int64_t)mag : (int64_t)mag;
    return PP_OK;
}

int json_to_u64(const char *text, size_t len, uint64_t *out) {
    decimal d;
    int64_t v;
    if (len < 19 && text[0] != '-' && json_to_i64(text, len, &v) == PP_OK) {
        *out = (uint64_t)v;
        return PP_OK;
    }
    if (parse_decimal(text, len, &d) || d.fraction || (d.negative && d.ndigits))
        return PP_EFORMAT;
    return scaled_magnitude(&d, d.exp10, out);
}

int json_to_i64(const char *text, size_t len, int64_t *out) {
    decimal d;
    if (len > 0 && len < 19 && (text[0] != '-' || len > 1)) { /* plain integers: no overflow possible */
        size_t i = text[0] == '-';
        int64_t v = 0;
        while (i < len && text[i] >= '0' && text[i] <= '9')
            v = v * 10 + (text[i++] - '0');
        if (i == len) {
            *out = text[0] == '-' ? -v : v;
            return PP_OK;
        }
    }
    uint64_t mag;
    if (parse_decimal(text, len, &d) || d.fraction || scaled_magnitude(&d, d.exp10, &mag))
        return PP_EFORMAT;
    if (d.negative ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
        return PP_EFORMAT;
    *out = d.negative ? (int64_t)(0 - mag) : (int64_t)mag;
    return PP_OK;
}

/* Decimals without an exponent and with at most 15 significant digits
 * ("1.0", "-0.25", "3"): the digits and 10^fraction are both exact
 * doubles, so one division is correctly rounded (Clinger's fast path).
 * 0 if taken. */
static int double_fast(const char *t, size_t len, double *out) {
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
                                   1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    size_t i = t[0] == '-';
    int digits = 0, frac = -1;
    uint64_t v = 0;
    for (; i < len; i++) {
        if (t[i] >= '0' && t[i] <= '9') {
            v = v * 10 + (uint64_t)(t[i] - '0');
            if (++digits > 15)
                return -1;
            if (frac >= 0)
                frac++;
        } else if (t[i] == '.' && frac < 0 && digits > 0) {
            frac = 0;
        } else {
            return -1;
        }
    }
    if (digits == 0 || frac == 0)
        return -1;
    double d = (double)v / pow10[frac < 0 ? 0 : frac];
    *out = t[0] == '-' ? -d : d;
    return 0;
}

int json_to_double(const char *text, size_t len, double *out) {
    char buf[64];
    decimal d;
    if (len > 0 && double_fast(text, len, out) == 0)
        return PP_OK;
    if (len >= sizeof buf || parse_decimal(text, len, &d))
        return PP_EFORMAT;
    memcpy(buf, text, len);
    buf[len] = 0;
    *out = strtod(buf, NULL);
    return PP_OK;
}

int json_is_fractional(const char *text, size_t len) {
    return memchr(text, '.', len) || memchr(text, 'e', len) || memchr(text, 'E', len);
}
