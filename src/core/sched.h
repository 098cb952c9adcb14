/* sched.h — the scheduler counters' internals. Not public. */
#ifndef PP_CORE_SCHED_H
#define PP_CORE_SCHED_H

#include "pipeprof/sched.h"

/* Makes every later read use `m` (tests of the fallback); PP_SCHED_NONE
 * goes back to choosing by what the system offers. Call it before any
 * thread reads. */
void pp_sched_force(pp_sched_method m);

#endif
