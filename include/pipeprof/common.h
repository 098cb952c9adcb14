/* pipeprof/common.h — status codes, the error buffer and the version.
 *
 * Every pipeprof function that can fail returns 0 (PP_OK) or a negative PP_E*
 * code; pp_strerror() names it. Functions that read user input also take an
 * optional pp_error* that receives a one-line message naming the file, the
 * position and the problem ("trace.json:1:48213: expected ','"). The library
 * never prints and never exits. */
#ifndef PIPEPROF_COMMON_H
#define PIPEPROF_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PP_OK = 0,
    PP_EINVAL = -1,       /* a bad argument or option value */
    PP_ESTATE = -2,       /* call out of order (e.g. start before open, stop twice) */
    PP_ENOMEM = -3,       /* out of memory */
    PP_EFULL = -4,        /* record budget spent: the record was dropped and counted */
    PP_EIO = -5,          /* reading or writing a file failed */
    PP_EFORMAT = -6,      /* malformed input: the error buffer says where */
    PP_ETRUNCATED = -7,   /* input ends early: every complete part was read */
    PP_ENOTFOUND = -8,    /* a named thing (file, region, device) does not exist */
    PP_EUNSUPPORTED = -9  /* not available in this build or for this format */
};

/* The message for a status code; never NULL. */
const char *pp_strerror(int code);

/* Receives a one-line description of the last failure of the call it was
 * passed to. Zero-initialize it; msg stays "" on success. */
typedef struct pp_error {
    char msg[512];
} pp_error;

/* Library version ("0.1.0") and the optional features built in, comma
 * separated (e.g. "chrome-json-gz"). */
const char *pp_version(void);
const char *pp_features(void);

/* sizeof the public struct or union named `type` ("pp_session_config",
 * "pp_analyze_options", ...) as this library was built; 0 for a name it
 * does not know. Bindings that mirror the structs (python/pipeprof/_lib.py)
 * compare their sizes with these at load, so a mirror that drifted from
 * its header is an error, not memory corruption. */
size_t pp_struct_size(const char *type);

#ifdef __cplusplus
}
#endif
#endif
