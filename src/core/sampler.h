/* sampler.h — the whole-process scheduler sampler of a session
 * (PP_COLLECT_THREADS). Not public. */
#ifndef PP_CORE_SAMPLER_H
#define PP_CORE_SAMPLER_H

#include "core/session.h"

/* Starts the sampler thread when the session collects PP_COLLECT_THREADS
 * (pp_session_start); 0, or PP_ENOMEM / PP_EIO when the thread cannot be
 * made (the session then records without it). */
int pp_sampler_start(pp_session *s);
/* Stops and joins it (stop, close); nothing when none runs, or in a child
 * forked since (the thread is not there). Not from a signal handler. */
void pp_sampler_stop(pp_session *s);

#endif
