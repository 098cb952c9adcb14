/* thread_names.h — names users give their threads (thread_names.c). */
#ifndef PP_CORE_THREAD_NAMES_H
#define PP_CORE_THREAD_NAMES_H

#include "pipeprof/trace.h"

/* The name given to OS thread `tid`, or 0 when none was. */
pp_str pp_thread_name_given(int64_t tid);
/* Renames tid's thread tracks and thread entry in `s`. */
void pp_session_rename_thread(pp_session *s, int64_t tid, pp_str name);
/* The same in every open session (session.c holds the registry). */
void pp_sessions_rename_thread(int64_t tid, pp_str name);

#endif
