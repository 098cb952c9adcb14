/* window_options.c — the analysis options that analyze, export and report
 * share: the window's region and clip, and the name patterns that label
 * foreign traces, parsed and checked the same way by all. */
#include "cli/cli.h"
#include "pipeprof/analyze.h"

int cli_range_option(int argc, char **argv, int *i, int *has_from, int64_t *from_ns,
                     int *has_to, int64_t *to_ns) {
    static const char *const names[] = {"--from", "--to"};
    int *has[] = {has_from, has_to};
    int64_t *at[] = {from_ns, to_ns};
    for (size_t k = 0; k < 2; k++) {
        const char *v = NULL;
        uint64_t ns;
        int got = cli_option(argc, argv, i, names[k], &v);
        if (got < 0 || (got > 0 && cli_parse_u64(argv[0], names[k], v, 0, INT64_MAX, &ns) != 0))
            return -1;
        if (got > 0) {
            *has[k] = 1;
            *at[k] = (int64_t)ns;
            return 1;
        }
    }
    return 0;
}

int cli_window_option(int argc, char **argv, int *i, pp_analyze_options *opt) {
    int range = cli_range_option(argc, argv, i, &opt->has_from, &opt->from_ns, &opt->has_to,
                                 &opt->to_ns);
    if (range != 0)
        return range;
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
