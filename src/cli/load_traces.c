/* load_traces.c — the traces a command names, read into the one model it
 * analyzes or writes.
 *
 * Commands that take TRACE... read their input here, so that reading
 * several traces onto one timeline is one change for all of them. This
 * build reads one: several are refused as bad input. */
#include "cli/cli.h"
#include "pipeprof/io.h"

int cli_load_traces(const char *cmd, char *const *paths, size_t n, pp_model **out) {
    *out = NULL;
    if (n == 0) {
        cli_error("%s: expected a TRACE", cmd);
        return CLI_BADINPUT;
    }
    if (n > 1) {
        cli_error("%s: %zu traces given (%s, %s%s): this build reads one TRACE; give one",
                  cmd, n, paths[0], paths[1], n > 2 ? ", ..." : "");
        return CLI_BADINPUT;
    }
    pp_model *m = NULL;
    pp_error err = {{0}};
    int rc = pp_trace_read(paths[0], &m, &err);
    if (rc == PP_ETRUNCATED && m) {
        cli_error("warning: %s (using the rest; every output states the loss)", err.msg);
    } else if (rc != PP_OK) {
        pp_model_free(m);
        cli_error("%s: %s", cmd, err.msg[0] ? err.msg : pp_strerror(rc));
        return cli_exit_code(rc);
    }
    *out = m;
    return CLI_OK;
}
