/* clock.h — what the core (and its tests and benchmarks) may ask of the
 * session clock beyond pp_now (clock.c). Not public. */
#ifndef PP_CORE_CLOCK_H
#define PP_CORE_CLOCK_H

#include <stdint.h>

/* Takes a fresh (ticks, CLOCK_MONOTONIC) pair and refits the tick map now
 * (a slow path: session start, snapshot and stop call it). Decides the
 * clock's source on first use. */
void pp_clock_calibrate(void);

/* "tsc" when pp_now reads the invariant TSC, "monotonic" when it calls
 * clock_gettime; the reason follows for the fallback ("monotonic: the TSC
 * is not invariant", ...). Decides the source on first use. */
const char *pp_clock_source(void);

/* The largest |pp_now - CLOCK_MONOTONIC| found at any refit so far, in ns
 * (0 under the fallback). */
int64_t pp_clock_max_error_ns(void);

#endif
