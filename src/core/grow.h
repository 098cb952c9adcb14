/* grow.h — the one growable-array helper every layer uses. */
#ifndef PP_CORE_GROW_H
#define PP_CORE_GROW_H

#include <stddef.h>

/* Makes room in *items (of `elem`-byte items, *cap allocated) for the item
 * at index `count`, doubling the allocation when full. 0 or PP_ENOMEM; on
 * failure *items and *cap are unchanged. */
int pp_grow(void **items, size_t *cap, size_t count, size_t elem);

#endif
