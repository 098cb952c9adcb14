/* cpus.h — how many CPUs this process can keep busy. Not public.
 *
 * The readers and the analysis give work to spare CPUs (io/pptrace_read_ahead.h,
 * io/gz_pipe.h, analyze/beside.c) and do it all in the calling thread on
 * a machine of one. */
#ifndef PP_CORE_CPUS_H
#define PP_CORE_CPUS_H

/* The CPUs online, at least 1. */
unsigned pp_cpus_online(void);

#endif
