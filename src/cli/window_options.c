/* window_options.c — the analysis options that analyze and export share:
 * the window's region and the foreign-batch pattern, parsed and checked the
 * same way by both. */
#include "cli/cli.h"
#include "pipeprof/analyze.h"

int cli_window_option(int argc, char **argv, int *i, pp_analyze_options *opt) {
    static const char *const names[] = {"--region", "--exclude-region", "--batch-pattern"};
    const char **fields[] = {&opt->region, &opt->exclude_region, &opt->batch_pattern};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *v = NULL;
        int got = cli_option(argc, argv, i, names[k], &v);
        if (got > 0)
            *fields[k] = v;
        if (got != 0)
            return got;
    }
    return 0;
}

int cli_window_check(const char *cmd, const pp_analyze_options *opt) {
    if (opt->region && opt->exclude_region) {
        cli_error("%s: --region and --exclude-region exclude each other", cmd);
        return -1;
    }
    return 0;
}
