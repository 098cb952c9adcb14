/* The CPUs online (cpus.h). */
#include "core/cpus.h"

#include <unistd.h>

unsigned pp_cpus_online(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 1 ? (unsigned)n : 1u;
}
