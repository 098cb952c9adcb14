/* names.h — what the process-wide name table (pp_intern) tells the writers. */
#ifndef PP_CORE_NAMES_H
#define PP_CORE_NAMES_H

#include <stdint.h>

/* Bytes cut from names longer than PP_NAME_MAX_BYTES so far in this
 * process: a session adds them to its trace's meta.truncated_bytes. */
uint64_t pp_names_cut_bytes(void);

#endif
