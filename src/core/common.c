/* Status messages and version strings. */
#include "pipeprof/common.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"
#include "pp_version.h"

const char *pp_strerror(int code) {
    switch (code) {
    case PP_OK: return "success";
    case PP_EINVAL: return "invalid argument";
    case PP_ESTATE: return "call out of order for the session's state";
    case PP_ENOMEM: return "out of memory";
    case PP_EFULL: return "record budget spent: record dropped";
    case PP_EIO: return "input/output error";
    case PP_EFORMAT: return "malformed input";
    case PP_ETRUNCATED: return "input truncated";
    case PP_ENOTFOUND: return "not found";
    case PP_EUNSUPPORTED: return "not supported";
    default: return "unknown error";
    }
}

const char *pp_version(void) {
    return PP_VERSION_STRING;
}

const char *pp_features(void) {
    return PP_FEATURES_STRING;
}

int pp_set_error(pp_error *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}
