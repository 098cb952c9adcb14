/* The .pptrace reader's shared helpers (io/pptrace_reader.h): its
 * messages, reads and the row count of a table block, used by the block
 * reader (pptrace_read.c) and the row decoders (pptrace_read_rows.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/pptrace_format.h"
#include "io/pptrace_read_ahead.h"
#include "io/pptrace_reader.h"

int rd_fail(reader *r, uint64_t at, const char *fmt, ...) {
    char problem[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    return pp_set_error(r->err, PP_EFORMAT, "%s: byte %llu: %s", r->path, (unsigned long long)at,
                        problem);
}

int rd_no_memory(reader *r) {
    return pp_set_error(r->err, PP_ENOMEM, "%s: out of memory", r->path);
}

int rd_read_bytes(reader *r, uint64_t from, void *dst, size_t n, size_t *got) {
    long k = pptrace_pread(r->fd, dst, n, from);
    *got = k < 0 ? 0 : (size_t)k;
    if (k < 0)
        return pp_set_error(r->err, PP_EIO, "%s: byte %llu: read failed: %s", r->path,
                            (unsigned long long)from, strerror(errno));
    return PP_OK;
}

int rd_table_rows(reader *r, const unsigned char *p, uint32_t len, uint32_t row, uint32_t *n) {
    if (len < 4)
        return rd_fail(r, r->block_at + 4, "%s block length %u is below its 4-byte row count",
                       pptrace_block_name(r->type), len);
    *n = pptrace_get32(p);
    if (*n > PPTRACE_ROWS_PER_BLOCK)
        return rd_fail(r, rd_at(r, p), "%s block holds %u rows (at most %u allowed)",
                       pptrace_block_name(r->type), *n, PPTRACE_ROWS_PER_BLOCK);
    if (len != 4 + (uint64_t)*n * row)
        return rd_fail(r, r->block_at + 4,
                       "%s block length %u does not match its %u rows of %u bytes",
                       pptrace_block_name(r->type), len, *n, row);
    return PP_OK;
}
