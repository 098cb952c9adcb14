/* subrec.h — writing one live-subscription record (PP_SUBREC_SIZE bytes,
 * little-endian; the layout is in subrec.c and docs/recording.md). */
#ifndef PP_CAPTURE_SUBREC_H
#define PP_CAPTURE_SUBREC_H

#include "pipeprof/subscribe.h"

typedef struct pp_subrec_fields {
    pp_subrec_kind kind;
    pp_role role;
    unsigned flags;
    int64_t start_ns, end_ns, batch;
    uint64_t hw_ns, xfer_ns; /* STATUS: lost and session-dropped totals */
    uint64_t seq;
    int32_t stream;
    const char *name, *type, *device, *stage, *track; /* NULL: "" */
} pp_subrec_fields;

/* Fills rec[0 .. PP_SUBREC_SIZE) from f; texts too long for their field are
 * cut at a character boundary and PP_SUBREC_TRUNCATED is set. */
void pp_subrec_encode(unsigned char *rec, const pp_subrec_fields *f);

#endif
