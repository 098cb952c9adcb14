/* memory.c — the analysis's large tables and reused buffers.
 *
 * A 10M-event report fills a few hundred MB of tables once each, so its cost
 * is as much in page faults as in arithmetic: every fresh 4 KiB page is a
 * trap and a clear. Large tables are therefore advised into transparent huge
 * pages (2 MiB: one fault where there were 512), where the kernel offers
 * them; the advice is only a hint, and everything works the same without
 * it. Not a table above HUGE_ADVISED_MAX: it needs that many free 2 MiB
 * blocks at once, and on a machine whose memory is full of page cache (as
 * after writing or copying a large trace) the kernel compacts memory for
 * them while the fault waits (THP "defrag" madvise, the default). Measured
 * on bench_pptrace's trace: 100M events analyzed in 9.2-9.9 s with every
 * table advised, 7.1-7.2 s with this bound, 6.7-7.4 s with none; 10M events in
 * 0.56 s advised (every table is below the bound) and 0.67-0.70 s not.
 * Scratch buffers are reused from step to step (an_buf), so their pages
 * fault in once per report. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "analyze/report.h"

#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HUGE_ADVISED_MAX ((size_t)256 << 20)

/* Advises the whole 2 MiB pages inside [p, p+bytes) into huge pages,
 * for a table of at most HUGE_ADVISED_MAX bytes. */
static void advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
    if (!p || bytes < 2 * HUGE_PAGE || bytes > HUGE_ADVISED_MAX)
        return;
    uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: failure changes nothing */
#else
    (void)p, (void)bytes;
#endif
}

void *an_alloc(size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    void *p = malloc(bytes ? bytes : 1);
    advise_huge(p, bytes);
    return p;
}

void *an_calloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p && n)
        advise_huge(p, n * size); /* calloc checked n * size */
    return p;
}

void *an_buf_get(an_buf *b, size_t bytes) {
    if (bytes <= b->cap)
        return b->p;
    void *p = an_alloc(bytes, 1); /* the old contents need not be kept */
    if (!p)
        return NULL;
    free(b->p);
    b->p = p;
    b->cap = bytes;
    return p;
}
