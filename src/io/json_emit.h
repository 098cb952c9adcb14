/* json_emit.h — formatting JSON numbers and strings straight into a buffer.
 *
 * The writers call these once per field of millions of events, so they take
 * a pointer to enough free space and return the pointer past what they wrote:
 * no length checks, no locale, no printf on the common paths. Each function
 * states the most bytes it may write; the caller reserves that much. */
#ifndef PP_IO_JSON_EMIT_H
#define PP_IO_JSON_EMIT_H

#include <stddef.h>
#include <stdint.h>

#define JSON_INT_MAX 20    /* "-9223372036854775808", "18446744073709551615" */
#define JSON_US_MAX 24     /* "-9223372036854775.808" */
#define JSON_DOUBLE_MAX 32 /* "-2.2250738585072014e-308" and the like */

/* Decimal integers. */
char *json_put_u64(char *p, uint64_t v);
char *json_put_i64(char *p, int64_t v);

/* Nanoseconds as microseconds with exactly three decimals: 1234567 ->
 * "1234.567", -250 -> "-0.250". Integer arithmetic only, so every
 * nanosecond survives at any magnitude. */
char *json_put_us(char *p, int64_t ns);

/* A double that reads back to the same bits (the shortest of 15, 16 or 17
 * significant digits that does) and always holds a '.' or an exponent, so a
 * reader can tell it from an integer: 3.0, 0.1, 1e+300. NaN and infinities,
 * which JSON cannot hold, become null. */
char *json_put_double(char *p, double v);

/* The most bytes json_put_string writes for `n` bytes of text. */
#define JSON_STRING_MAX(n) (6 * (size_t)(n) + 2)

/* A quoted JSON string: '"' and '\\' escaped, control characters as
 * \u00XX, valid UTF-8 passed through, and every byte that is not part of
 * valid UTF-8 replaced by \ufffd (JSON text must be UTF-8; viewers and
 * parsers reject anything else). */
char *json_put_string(char *p, const char *s, size_t n);

#endif
