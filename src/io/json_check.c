/* json_check.c — a strict check that a text is one JSON value (RFC 8259):
 * literals, numbers, strings with valid escapes and no control characters,
 * arrays and objects, nested at most MAX_DEPTH deep. */
#include "io/json_check.h"

#include <string.h>

#define MAX_DEPTH 256

typedef struct cur {
    const char *p, *end;
} cur;

static void ws(cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int digits(cur *c) {
    const char *from = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > from;
}

static int number(cur *c) {
    if (c->p < c->end && *c->p == '-')
        c->p++;
    if (c->p < c->end && *c->p == '0')
        c->p++;
    else if (!digits(c))
        return 0;
    if (c->p < c->end && *c->p == '.' && (c->p++, !digits(c)))
        return 0;
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        return digits(c);
    }
    return 1;
}

static int string(cur *c) {
    c->p++; /* '"' */
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == '"')
            return 1;
        if (ch < 0x20)
            return 0;
        if (ch != '\\')
            continue;
        if (c->p >= c->end)
            return 0;
        ch = (unsigned char)*c->p++;
        if (ch == 'u') {
            for (int k = 0; k < 4; k++, c->p++)
                if (c->p >= c->end || !strchr("0123456789abcdefABCDEF", *c->p) || !*c->p)
                    return 0;
        } else if (!strchr("\"\\/bfnrt", ch) || !ch) {
            return 0;
        }
    }
    return 0;
}

static int literal(cur *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return 0;
    c->p += n;
    return 1;
}

static int value(cur *c, int depth);

/* The elements of an array (close ']') or members of an object ('}'). */
static int items(cur *c, char close, int depth) {
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 1;
    }
    for (;;) {
        ws(c);
        if (close == '}') {
            if (c->p >= c->end || *c->p != '"' || !string(c))
                return 0;
            ws(c);
            if (c->p >= c->end || *c->p++ != ':')
                return 0;
        }
        if (!value(c, depth + 1))
            return 0;
        ws(c);
        if (c->p >= c->end)
            return 0;
        char ch = *c->p++;
        if (ch == close)
            return 1;
        if (ch != ',')
            return 0;
    }
}

static int value(cur *c, int depth) {
    ws(c);
    if (c->p >= c->end || depth > MAX_DEPTH)
        return 0;
    switch (*c->p) {
    case '{': return items(c, '}', depth);
    case '[': return items(c, ']', depth);
    case '"': return string(c);
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    default: return number(c);
    }
}

int json_value_ok(const char *text, size_t len) {
    cur c = {text, text + len};
    if (!value(&c, 0))
        return 0;
    ws(&c);
    return c.p == c.end;
}
