/* column_mem.h — the memory of the model's event columns. Not public.
 *
 * A column grows with its contents kept and every byte past them reading
 * zero. Large columns are fresh anonymous pages (Linux: mmap, grown by
 * mremap without copying), so that a
 * column nothing nonzero is ever written to, such as hw_ns and xfer_ns of a
 * foreign trace or id of one without flows, takes address space and no
 * memory: model.c writes the sparse columns only where a value is nonzero.
 * Small columns stay on the heap (where sanitizers watch them). */
#ifndef PP_MODEL_COLUMN_MEM_H
#define PP_MODEL_COLUMN_MEM_H

#include <stddef.h>

/* Grows the column at p (NULL when old_bytes is 0) from old_bytes to
 * new_bytes (> old_bytes); bytes [old_bytes, new_bytes) read zero. The new
 * address, or NULL when out of memory, leaving p as it was. */
void *pp_column_grow(void *p, size_t old_bytes, size_t new_bytes);
/* Shrinks the column at p from old_bytes to new_bytes (< old_bytes, > 0),
 * keeping its first new_bytes: in place where its pages are mapped (the
 * pages past them go back), else moved. The new address, or NULL when out
 * of memory for the move, leaving p as it was. */
void *pp_column_shrink(void *p, size_t old_bytes, size_t new_bytes);
/* Releases a column of `bytes` (its size when last grown or shrunk). Accepts
 * NULL. */
void pp_column_free(void *p, size_t bytes);

#endif
