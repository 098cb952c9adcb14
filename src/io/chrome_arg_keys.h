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

/* What a foreign event carries beyond the model's fields, kept as string
 * annotations under keys of a reserved namespace, so that a converted trace
 * writes back what it read (docs/format-chrome-json.md, "What a conversion
 * keeps"):
 *   CHROME_CAT_KEY      the event's "cat" when it is not the one the writer
 *                       would give it ("" for an event that had none);
 *   CHROME_JSON_PREFIX  + K: an args value that is not a number or a string
 *                       (array, object, true, false, null), as its JSON text;
 *   CHROME_KEY_PREFIX   + K: an arg whose own key K starts with "chrome:",
 *                       so that it never reads back as one of the above. */
#define CHROME_RESERVED "chrome:"
#define CHROME_CAT_KEY "chrome:cat"
#define CHROME_JSON_PREFIX "chrome:json:"
#define CHROME_KEY_PREFIX "chrome:key:"

/* The "cat" the writer gives a span of each pp_role (indexed by role). */
static const char *const chrome_role_cats[] = {"span", "exec", "partition", "merge",
                                               "stage", "op",   "user"};

static inline int chrome_key_reserved(const char *key, size_t n) {
    return n >= sizeof CHROME_RESERVED - 1 && memcmp(key, CHROME_RESERVED, sizeof CHROME_RESERVED - 1) == 0;
}

#endif
