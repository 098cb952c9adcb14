/* diff_inputs.c — the inputs of diff and gate (diff_inputs.h). */
#include "cli/diff_inputs.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/load_traces.h"

const char cli_diff_inputs_help[] =
    "  --region NAME, --exclude-region NAME, --from NS, --to NS, --batch-pattern RE,\n"
    "  --stage-pattern RE, --partition-pattern RE, --merge-pattern RE\n"
    "                         the window and labeling of `pipeprof analyze`, for both\n"
    "                         runs; prefix base- or new- for one run only\n"
    "                         (--new-exclude-region \"warm up\")\n"
    "  --map OLD=NEW          compare base device OLD with new device NEW (a stage\n"
    "                         moved from NPU to GPU: --map NPU=GPU)\n"
    "  --min-change PCT       the smallest change that can be significant, in %\n"
    "                         (default 1: smaller changes are negligible)\n";

void cli_diff_inputs_init(cli_diff_inputs *in) {
    memset(in, 0, sizeof *in);
    pp_analyze_options_init(&in->opt[0]);
    pp_analyze_options_init(&in->opt[1]);
    in->min_change = 0.01;
}

static int add_map(const char *cmd, cli_diff_inputs *in, const char *v) {
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1]) {
        cli_error("%s: --map \"%s\": expected OLD=NEW, e.g. --map NPU=GPU", cmd, v);
        return -1;
    }
    pp_diff_map *g = realloc(in->map, (in->nmap + 1) * sizeof *g);
    char *old = strndup(v, (size_t)(eq - v));
    if (!g || !old) {
        free(old);
        if (g)
            in->map = g;
        cli_error("%s: out of memory", cmd);
        return -1;
    }
    in->map = g;
    in->map[in->nmap++] = (pp_diff_map){old, eq + 1};
    return 1;
}

int cli_diff_inputs_option(int argc, char **argv, int *i, cli_diff_inputs *in) {
    const char *v = NULL;
    int got = cli_option(argc, argv, i, "--map", &v);
    if (got != 0)
        return got < 0 ? -1 : add_map(argv[0], in, v);
    if ((got = cli_option(argc, argv, i, "--min-change", &v)) != 0) {
        char *end = NULL;
        double pct = got > 0 ? strtod(v, &end) : 0;
        if (got > 0 && (end == v || *end || !(pct >= 0 && pct < 1000))) {
            cli_error("%s: --min-change \"%s\": expected a percentage, 0 or more (1 = 1%%)",
                      argv[0], v);
            return -1;
        }
        in->min_change = pct / 100;
        return got;
    }
    /* --base-X / --new-X: option --X for one side, parsed by the shared
     * window parser from a copy of argv with the prefix taken off */
    for (int k = 0; k < 2; k++) {
        const char *prefix = k ? "--new-" : "--base-";
        size_t len = strlen(prefix);
        if (strncmp(argv[*i], prefix, len) != 0)
            continue;
        char name[128];
        snprintf(name, sizeof name, "--%s", argv[*i] + len);
        char *sub[3] = {argv[0], name, *i + 1 < argc ? argv[*i + 1] : NULL};
        int j = 1;
        got = cli_window_option(*i + 1 < argc ? 3 : 2, sub, &j, &in->opt[k]);
        if (got > 0)
            *i += j - 1;
        return got;
    }
    int j = *i;
    got = cli_window_option(argc, argv, &j, &in->opt[0]);
    if (got > 0) {
        int j2 = *i;
        cli_window_option(argc, argv, &j2, &in->opt[1]);
        *i = j;
    }
    return got;
}

int cli_diff_inputs_add(const char *cmd, cli_diff_inputs *in, const char *path) {
    if (in->npaths == 2) {
        cli_error("%s: \"%s\": expected two runs, BASE and NEW; this is a third", cmd, path);
        return -1;
    }
    in->path[in->npaths++] = path;
    return 0;
}

int cli_diff_inputs_summary(const char *cmd, cli_diff_inputs *in, int k, pp_diff_summary **out) {
    pp_error err = {{0}};
    const char *path = in->path[k];
    if (pp_diff_summary_is_file(path)) {
        int rc = pp_diff_summary_load(path, out, &err);
        if (rc != PP_OK) {
            cli_error("%s: %s", cmd, err.msg);
            return cli_exit_code(rc);
        }
        return CLI_OK;
    }
    cli_traces t = {0};
    pp_model *m = NULL;
    char *source = NULL;
    if (cli_traces_add(&t, path) != 0)
        return CLI_FAIL;
    int code = cli_traces_load(cmd, "comparing", &t, &m, &source);
    cli_traces_free(&t);
    if (code != CLI_OK)
        return code;
    in->opt[k].source = source;
    pp_report *r = NULL;
    int rc = pp_report_build(m, &in->opt[k], &r, &err);
    if (rc == PP_OK)
        rc = pp_diff_summary_build(r, m, out, &err);
    if (rc != PP_OK) {
        cli_error("%s: %s: %s", cmd, source, err.msg[0] ? err.msg : pp_strerror(rc));
        code = cli_exit_code(rc);
    }
    in->opt[k].source = NULL;
    pp_report_free(r);
    pp_model_free(m);
    free(source);
    return code;
}

int cli_diff_inputs_compare(const char *cmd, cli_diff_inputs *in, pp_diff_summary *s[2],
                            pp_diff **out) {
    pp_diff_options o;
    pp_diff_options_init(&o);
    o.map = in->map, o.nmap = in->nmap;
    o.min_change = in->min_change;
    pp_error err = {{0}};
    int rc = pp_diff_compare(s[0], s[1], &o, out, &err);
    if (rc != PP_OK) {
        cli_error("%s: %s", cmd, err.msg);
        return cli_exit_code(rc);
    }
    return CLI_OK;
}

void cli_diff_inputs_free(cli_diff_inputs *in) {
    for (size_t i = 0; i < in->nmap; i++)
        free((char *)in->map[i].base);
    free(in->map);
    in->map = NULL, in->nmap = 0;
}
