/* advise.h — the report of `analyze` and `report` with the what-if
 * model's predicted effect on every piece of advice (docs/whatif.md,
 * "Advice"). */
#ifndef PP_CLI_ADVISE_H
#define PP_CLI_ADVISE_H

#include "pipeprof/analyze.h"

/* Up to this many events `analyze` keeps the model beside the report, which
 * the prediction reads again (about 60 bytes an event instead of 40); a
 * larger trace gets the owned build, and its advice "not computed". */
#define CLI_ADVISE_MAX_EVENTS 4000000u

/* Fills the predicted effect of r's advice from model m (which r was built
 * from with pp_report_build). On failure prints "CMD: ..." and returns the
 * exit code; CLI_OK otherwise. */
int cli_advise(const char *cmd, pp_report *r, const pp_model *m);

#endif
