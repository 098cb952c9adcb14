/* error.h — filling a caller's pp_error. */
#ifndef PP_CORE_ERROR_H
#define PP_CORE_ERROR_H

#include "pipeprof/common.h"

/* Formats the message into err (if not NULL) and returns `code`, so that a
 * failing function can `return pp_set_error(err, PP_EFORMAT, "...", ...)`. */
int pp_set_error(pp_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
