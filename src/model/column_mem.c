/* Column memory (column_mem.h): heap below a size, fresh pages above.
 *
 * The pages are not advised into transparent huge pages: on the
 * development VM that made the best of three reads of a 10M-event .pptrace
 * faster (0.34 against 0.55 s of CPU) but the first read in a process, the
 * one a user waits for, slower and erratic (0.48-1.36 s, median 0.86,
 * against 0.56-0.92 s, median 0.62). */
#include "model/column_mem.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* Columns from this size on are mapped pages: below it the memory a column
 * could leave untouched is too small to matter. */
#define MAPPED_MIN ((size_t)1 << 20)

#if defined(__linux__) && defined(MREMAP_MAYMOVE)
static size_t page_round(size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + page - 1) / page * page;
}

void *pp_column_grow(void *p, size_t old_bytes, size_t new_bytes) {
    if (new_bytes < MAPPED_MIN) {
        unsigned char *q = realloc(p, new_bytes);
        if (q)
            memset(q + old_bytes, 0, new_bytes - old_bytes);
        return q;
    }
    size_t size = page_round(new_bytes);
    void *q;
    if (old_bytes >= MAPPED_MIN) { /* the pages added read zero */
        q = mremap(p, page_round(old_bytes), size, MREMAP_MAYMOVE);
        return q == MAP_FAILED ? NULL : q;
    }
    q = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED)
        return NULL;
    if (old_bytes)
        memcpy(q, p, old_bytes);
    free(p);
    return q;
}

void *pp_column_shrink(void *p, size_t old_bytes, size_t new_bytes) {
    if (old_bytes < MAPPED_MIN)
        return realloc(p, new_bytes);
    if (new_bytes >= MAPPED_MIN) {
        size_t keep = page_round(new_bytes), had = page_round(old_bytes);
        if (had > keep)
            munmap((unsigned char *)p + keep, had - keep);
        return p;
    }
    void *q = malloc(new_bytes); /* below the mapped size: the heap's, as pp_column_free expects */
    if (!q)
        return NULL;
    memcpy(q, p, new_bytes);
    munmap(p, page_round(old_bytes));
    return q;
}

void pp_column_free(void *p, size_t bytes) {
    if (bytes >= MAPPED_MIN)
        munmap(p, page_round(bytes));
    else
        free(p);
}
#else
/* Elsewhere: calloc, whose large blocks are fresh pages on most systems. */
void *pp_column_grow(void *p, size_t old_bytes, size_t new_bytes) {
    unsigned char *q = calloc(1, new_bytes);
    if (q && old_bytes)
        memcpy(q, p, old_bytes);
    if (q)
        free(p);
    return q;
}

void *pp_column_shrink(void *p, size_t old_bytes, size_t new_bytes) {
    (void)old_bytes;
    return realloc(p, new_bytes);
}

void pp_column_free(void *p, size_t bytes) {
    (void)bytes;
    free(p);
}
#endif
