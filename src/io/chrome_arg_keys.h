/* chrome_arg_keys.h — keeping annotations apart from an event's own fields
 * in Chrome JSON `args` (docs/format-chrome-json.md).
 *
 * The writer puts a span's pipeline fields (stage, batch_id, ...) and its
 * annotations into one `args` object. An annotation whose key is a field's
 * name would make a duplicate key (which JSON readers refuse or resolve
 * arbitrarily) or read back as the field. So such a key, and any key that
 * already starts with the prefix, is written with ANNOTATION_PREFIX in front,
 * and the reader takes one prefix off: every key round-trips exactly. */
#ifndef PP_IO_CHROME_ARG_KEYS_H
#define PP_IO_CHROME_ARG_KEYS_H

#include <stddef.h>
#include <string.h>

#define ANNOTATION_PREFIX "annotation."
#define ANNOTATION_PREFIX_LEN (sizeof ANNOTATION_PREFIX - 1)

static inline int chrome_key_is(const char *key, size_t n, const char *lit) {
    return n == strlen(lit) && memcmp(key, lit, n) == 0;
}

/* True when the `n` bytes of `key` start with ANNOTATION_PREFIX. */
static inline int chrome_key_prefixed(const char *key, size_t n) {
    return n >= ANNOTATION_PREFIX_LEN && memcmp(key, ANNOTATION_PREFIX, ANNOTATION_PREFIX_LEN) == 0;
}

/* True when an annotation key must be written with ANNOTATION_PREFIX: it
 * names a field the reader takes from args, or it starts with the prefix. */
static inline int chrome_key_needs_prefix(const char *key, size_t n) {
    return chrome_key_is(key, n, "stage") || chrome_key_is(key, n, "batch_id") ||
           chrome_key_is(key, n, "batch") || chrome_key_is(key, n, "hw_ns") ||
           chrome_key_is(key, n, "transfer_ns") || chrome_key_is(key, n, "role") ||
           chrome_key_is(key, n, "region_id") || chrome_key_prefixed(key, n);
}

#endif
