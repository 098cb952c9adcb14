/* json_check.h — is a text one JSON value? For text kept from a read trace
 * (an args array or object, chrome_arg_keys.h) that a writer puts back
 * verbatim: a model may come from any .pptrace, so the text is checked
 * before it is written raw, and written as a string when it is not JSON. */
#ifndef PP_IO_JSON_CHECK_H
#define PP_IO_JSON_CHECK_H

#include <stddef.h>

/* 1 when text[0, len) is exactly one JSON value (white space around it
 * allowed), nested at most 256 deep; else 0. */
int json_value_ok(const char *text, size_t len);

#endif
