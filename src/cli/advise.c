/* advise.c — one call for the commands that print findings: the what-if
 * layer fills in what each piece of advice would do. */
#include "cli/advise.h"

#include "cli/cli.h"
#include "pipeprof/whatif.h"

int cli_advise(const char *cmd, pp_report *r, const pp_model *m) {
    pp_whatif_options o;
    pp_whatif_options_init(&o);
    pp_error err = {{0}};
    int rc = pp_whatif_advise(r, m, &o, &err);
    if (rc == PP_OK)
        return CLI_OK;
    cli_error("%s: predicting the advice's effect: %s", cmd, err.msg[0] ? err.msg : pp_strerror(rc));
    return cli_exit_code(rc);
}
