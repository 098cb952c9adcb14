/* window_options.c — the analysis options that analyze and export share:
 * the window's region and the name patterns that label foreign traces,
 * parsed and checked the same way by both. */
#include "cli/cli.h"
#include "pipeprof/analyze.h"

int cli_window_option(int argc, char **argv, int *i, pp_analyze_options *opt) {
    static const char *const names[] = {"--region",        "--exclude-region",
                                        "--batch-pattern", "--stage-pattern",
                                        "--partition-pattern", "--merge-pattern"};
    const char **fields[] = {&opt->region,        &opt->exclude_region,
                             &opt->batch_pattern, &opt->stage_pattern,
                             &opt->partition_pattern, &opt->merge_pattern};
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
    if ((opt->partition_pattern || opt->merge_pattern) && !opt->batch_pattern &&
        !opt->stage_pattern) {
        cli_error("%s: --partition-pattern and --merge-pattern apply with --batch-pattern or "
                  "--stage-pattern",
                  cmd);
        return -1;
    }
    return 0;
}
