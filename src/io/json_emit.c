/* JSON number and string formatting for the writers (json_emit.h). */
#include "io/json_emit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "00" "01" ... "99": two digits per division by 100 halves the divisions. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static int digit_count(uint64_t v) {
    int n = 1;
    for (;;) {
        if (v < 10)
            return n;
        if (v < 100)
            return n + 1;
        if (v < 1000)
            return n + 2;
        if (v < 10000)
            return n + 3;
        v /= 10000;
        n += 4;
    }
}

char *json_put_u64(char *p, uint64_t v) {
    char *end = p + digit_count(v), *q = end;
    while (v >= 100) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    return end;
}

char *json_put_i64(char *p, int64_t v) {
    uint64_t magnitude = (uint64_t)v;
    if (v < 0) {
        *p++ = '-';
        magnitude = 0 - magnitude; /* well defined for INT64_MIN too */
    }
    return json_put_u64(p, magnitude);
}

char *json_put_us(char *p, int64_t ns) {
    uint64_t magnitude = (uint64_t)ns;
    if (ns < 0) {
        *p++ = '-';
        magnitude = 0 - magnitude;
    }
    p = json_put_u64(p, magnitude / 1000);
    unsigned frac = (unsigned)(magnitude % 1000);
    p[0] = '.';
    p[1] = (char)('0' + frac / 100);
    memcpy(p + 2, digit_pairs + 2 * (frac % 100), 2);
    return p + 4;
}

static int is_number_char(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e';
}

char *json_put_double(char *p, double v) {
    if (!isfinite(v)) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    /* Whole numbers (counter values mostly are) skip printf entirely. */
    if (fabs(v) < 0x1p53 && v == (double)(int64_t)v) {
        if (v == 0 && signbit(v))
            *p++ = '-';
        p = json_put_i64(p, (int64_t)v);
        memcpy(p, ".0", 2);
        return p + 2;
    }
    char text[48];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v) /* same locale as snprintf, so they agree */
            break;
    }
    /* printf writes the locale's decimal point (',' under de_DE, possibly
     * several bytes); JSON wants '.'. */
    int marked = 0;
    for (const char *s = text; *s;) {
        if (is_number_char(*s)) {
            marked |= *s == 'e';
            *p++ = *s++;
            continue;
        }
        *p++ = '.';
        marked = 1;
        while (*s && !is_number_char(*s))
            s++;
    }
    if (!marked) { /* %g drops the point of large whole numbers: 9007199254740994 */
        memcpy(p, ".0", 2);
        p += 2;
    }
    return p;
}

/* Length of the valid UTF-8 sequence at s (1 to 4 bytes, s[0] >= 0x80), or
 * 0 if it is not one: overlong forms, surrogates and code points above
 * U+10FFFF are invalid (Unicode Table 3-7). */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    size_t len;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    return len;
}

char *json_put_string(char *p, const char *text, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)text;
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            *p++ = (char)c;
        } else if (c == '"' || c == '\\') {
            p[0] = '\\';
            p[1] = (char)c;
            p += 2;
        } else if (c < 0x20) {
            memcpy(p, "\\u00", 4);
            p[4] = hex[c >> 4];
            p[5] = hex[c & 15];
            p += 6;
        } else {
            size_t len = utf8_sequence(s + i, n - i);
            if (len) {
                memcpy(p, s + i, len);
                p += len;
                i += len - 1;
            } else {
                memcpy(p, "\\ufffd", 6);
                p += 6;
            }
        }
    }
    *p++ = '"';
    return p;
}
