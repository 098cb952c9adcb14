/* die_with_parent.c — the rule every command that runs a program (record,
 * top) gives its child: when pipeprof dies, of any signal, SIGKILL
 * included, the child gets SIGTERM, so no orphan keeps running (and
 * recording) under init. SIGTERM lets a recording program write its trace. */
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli/cli.h"

void cli_die_with_parent(pid_t parent) {
    /* a parent gone between fork and prctl is seen as a new parent */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
        _exit(127);
}
