/* strtab.h — an interning string table: text -> dense id, id -> text.
 *
 * Used by the process-wide name table (pp_intern) and by every trace model.
 * Id 0 is always the empty string. Not thread-safe: callers lock. Texts live
 * in chunked arenas, so pointers returned by pp_strtab_text stay valid until
 * pp_strtab_free. */
#ifndef PP_CORE_STRTAB_H
#define PP_CORE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_strtab {
    char **texts;        /* id -> NUL-terminated text */
    uint32_t *lens;      /* id -> length */
    size_t count, cap;
    uint32_t *slots;     /* open addressing: id + 1, 0 = empty */
    size_t nslots;
    char *arena;         /* current arena chunk */
    size_t arena_used, arena_cap;
    char **chunks;       /* every arena chunk, for freeing */
    size_t nchunks;
} pp_strtab;

int pp_strtab_init(pp_strtab *t);
void pp_strtab_free(pp_strtab *t);
/* Stores the id of `len` bytes of `text` in *id, adding it when new. 0 or
 * PP_ENOMEM (or PP_EINVAL for text containing a NUL byte). */
int pp_strtab_intern(pp_strtab *t, const char *text, size_t len, uint32_t *id);
/* The id of the text if present, else 0. */
uint32_t pp_strtab_find(const pp_strtab *t, const char *text, size_t len);
/* The text of an id; "" for unknown ids. */
const char *pp_strtab_text(const pp_strtab *t, uint32_t id);

#endif
