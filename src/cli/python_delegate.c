/* Running a subcommand of the Python package (cli/python_delegate.h). The
 * CLI stays free of Python's data stack (pyarrow, DuckDB): a command that
 * needs it runs in a Python child, which reports a missing package apart
 * (exit 3 of the bootstrap below) so that the message here can say how to
 * get it. */
#include "cli/python_delegate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

/* Exit 3: an import failed (its message on stderr); else main's status. */
static const char bootstrap[] =
    "import sys\n"
    "try:\n"
    "    import pipeprof.__main__ as m\n"
    "except ImportError as e:\n"
    "    print(f'pipeprof: {e}', file=sys.stderr)\n"
    "    sys.exit(3)\n"
    "sys.exit(m.main(sys.argv[1:]))\n";

enum { MISSING = 3, NO_PYTHON = 127 };

int cli_python_delegate(const char *command, const char *extra, int argc, char **argv) {
    const char *python = getenv("PIPEPROF_PYTHON");
#ifdef PP_BUILD_PYTHON
    if ((!python || !*python) && access(PP_BUILD_PYTHON, X_OK) == 0)
        python = PP_BUILD_PYTHON; /* the build's venv (CMakeLists.txt) */
#endif
    if (!python || !*python)
        python = "python3";
    char **args = calloc((size_t)argc + 5, sizeof *args);
    if (!args) {
        cli_error("%s: out of memory", command);
        return CLI_FAIL;
    }
    int n = 0;
    args[n++] = (char *)python;
    args[n++] = "-c";
    args[n++] = (char *)bootstrap;
    args[n++] = (char *)command;
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(python, args);
        _exit(NO_PYTHON);
    }
    free(args);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
        cli_error("%s: cannot run %s: %s", command, python, strerror(errno));
        return CLI_FAIL;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_FAIL;
    if (code == NO_PYTHON)
        cli_error("%s runs in Python: cannot run \"%s\" (PIPEPROF_PYTHON names the Python, "
                  "default: the build's venv Python, else python3)", command, python);
    if (code == NO_PYTHON || code == MISSING) {
        cli_error("%s needs a Python with the pipeprof package and its extras (pip install "
                  "\"pipeprof[%s]\", or scripts/setup for the project venv)", command, extra);
        return CLI_FAIL;
    }
    return code;
}
