/* clock_id.h — which clock a recording's timestamps are on, so that traces
 * of several processes can be put on one timeline (docs/merging.md). */
#ifndef PP_CORE_CLOCK_ID_H
#define PP_CORE_CLOCK_ID_H

#include <stddef.h>

/* The name of the clock pp_now() reads. */
#define PP_CLOCK_NAME "CLOCK_MONOTONIC"

/* This host's name and the kernel's boot id (a UUID that changes at every
 * boot: CLOCK_MONOTONIC restarts then). "" for what cannot be read. */
void pp_clock_identity(char *host, size_t host_cap, char *boot_id, size_t boot_cap);

#endif
