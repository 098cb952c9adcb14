/* index.c — open-addressing indexes over a step's items (report.h), for
 * the steps that find an item by its key in a table that grows as the
 * items come (the wall decomposition's cells, the op groups). */
#include <stdlib.h>

#include "analyze/report.h"
#include "core/error.h"

int an_index_rebuild(an_index *x, size_t nslot, size_t n,
                     size_t (*hash_of)(const void *items, size_t i), const void *items) {
    uint32_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return PP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        size_t h = hash_of(items, i) & (nslot - 1);
        while (slot[h])
            h = (h + 1) & (nslot - 1);
        slot[h] = (uint32_t)i + 1;
    }
    free(x->slot);
    x->slot = slot;
    x->nslot = nslot;
    return PP_OK;
}
