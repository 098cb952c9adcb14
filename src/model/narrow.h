/* narrow.h — narrowing one column of a model in place, for pp_model_narrow
 * (model/columns.h). Not public. */
#ifndef PP_MODEL_NARROW_H
#define PP_MODEL_NARROW_H

#include <stddef.h>
#include <stdint.h>

#include "model/columns.h"

/* One column: its slots and their allocation (column_mem.h), the log2 of
 * a slot's bytes, its side table; for the batch column (signed deltas
 * from their page's base) its pages. */
typedef struct pp_narrow_col {
    void *p;
    size_t bytes;
    unsigned shift;
    int is_batch;
    pp_wide_col *wide;
    const pp_page_bases *pages;
} pp_narrow_col;

/* Narrows the first `count` slots of each of the n columns to the fewest
 * bytes a slot that leave at most one in 64 escaped, moving the values
 * that no longer fit into its side table, and gives the pages past them
 * back; a column's fields become its new ones. A column whose side table
 * cannot grow stays as it was. The columns are shared between this thread
 * and one more where one can be made: each is read and written once, and
 * they are independent. */
void pp_columns_narrow(pp_narrow_col *c, size_t n, size_t count);

#endif
