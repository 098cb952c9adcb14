#include "core/grow.h"

#include <stdlib.h>

#include "pipeprof/common.h"

int pp_grow(void **items, size_t *cap, size_t count, size_t elem) {
    if (count < *cap)
        return PP_OK;
    size_t ncap = *cap ? *cap * 2 : 32;
    while (ncap <= count)
        ncap *= 2;
    void *p = realloc(*items, ncap * elem);
    if (!p)
        return PP_ENOMEM;
    *items = p;
    *cap = ncap;
    return PP_OK;
}
