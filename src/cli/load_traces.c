/* Reading the TRACE arguments of a command, merging several into one model
 * (load_traces.h). The merge itself, alignment included, is the library's
 * pp_model_merge; this file turns --offset and --sync into its inputs and
 * its statuses into messages. */
#include "cli/load_traces.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/grow.h"
#include "pipeprof/io.h"
#include "pipeprof/merge.h"

const char cli_traces_help[] =
    "  --offset TRACE=TIME    several traces: TIME is added to TRACE's times to put\n"
    "                         them on the first TRACE's clock (b.json=+12.5us; ns,\n"
    "                         us, ms or s); it overrides the other alignments\n"
    "  --sync NAME            several traces: align by the marks named NAME both\n"
    "                         recorded at the same moments (default \"sync\")\n"
    "  --dialect NAME         how a JSON trace's events read: auto (default: detected\n"
    "                         from its first complete event), chrome, or\n"
    "                         pipelineprofiler (cat = device, \"{stage}_Batch{n}\",\n"
    "                         args batch_id and hw_time_ms; docs/format-chrome-json.md)\n";

/* "+12.5us", "-3ms", "250ns", "1.000000001s": a signed decimal and a unit,
 * exact to the nanosecond. 0 or -1 after a message. */
static int parse_time(const char *cmd, const char *text, int64_t *out) {
    static const struct {
        const char *unit;
        int digits; /* decimal places down to ns */
    } units[] = {{"ns", 0}, {"us", 3}, {"ms", 6}, {"s", 9}};
    const char *p = text;
    int neg = *p == '-';
    p += *p == '-' || *p == '+';
    uint64_t whole = 0, frac = 0;
    int nfrac = 0, ndigits = 0;
    for (; *p >= '0' && *p <= '9'; p++, ndigits++) {
        if (whole > (UINT64_MAX - 9) / 10)
            goto bad;
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, nfrac++, ndigits++) {
            if (nfrac >= 9)
                goto bad;
            frac = frac * 10 + (uint64_t)(*p - '0');
        }
    if (!ndigits)
        goto bad;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        if (strcmp(p, units[u].unit) != 0)
            continue;
        if (nfrac > units[u].digits) {
            cli_error("%s: --offset time \"%s\" is finer than a nanosecond", cmd, text);
            return -1;
        }
        uint64_t scale = 1;
        for (int k = 0; k < units[u].digits; k++)
            scale *= 10;
        for (int k = nfrac; k < units[u].digits; k++)
            frac *= 10;
        if (whole > ((uint64_t)INT64_MAX - frac) / scale)
            goto bad;
        uint64_t ns = whole * scale + frac;
        *out = neg ? -(int64_t)ns : (int64_t)ns;
        return 0;
    }
bad:
    cli_error("%s: --offset time \"%s\": expected a signed number and a unit (ns, us, ms or s), "
              "e.g. +12.5us", cmd, text);
    return -1;
}

int cli_traces_option(int argc, char **argv, int *i, cli_traces *t) {
    const char *v;
    int got;
    if ((got = cli_option(argc, argv, i, "--dialect", &v)) != 0) {
        if (got > 0 && (t->dialect = pp_json_dialect_from_name(v)) < 0) {
            cli_error("%s: --dialect \"%s\": expected auto, chrome or pipelineprofiler", argv[0], v);
            return -1;
        }
        return got;
    }
    if ((got = cli_option(argc, argv, i, "--sync", &v)) != 0) {
        if (got > 0 && !*v) {
            cli_error("%s: --sync needs a mark name", argv[0]);
            return -1;
        }
        t->sync = v;
        return got;
    }
    if ((got = cli_option(argc, argv, i, "--offset", &v)) <= 0)
        return got;
    const char *eq = strrchr(v, '=');
    if (!eq || eq == v) {
        cli_error("%s: --offset \"%s\": expected TRACE=TIME, e.g. b.json=+12.5us", argv[0], v);
        return -1;
    }
    cli_offset o = {.trace = v};
    if (parse_time(argv[0], eq + 1, &o.ns) != 0)
        return -1;
    if (pp_grow((void **)&t->offsets, &t->capoffsets, t->noffsets, sizeof *t->offsets)) {
        cli_error("%s: out of memory", argv[0]);
        return -1;
    }
    t->offsets[t->noffsets++] = o;
    return 1;
}

int cli_traces_add(cli_traces *t, const char *path) {
    if (pp_grow((void **)&t->paths, &t->cap, t->n, sizeof *t->paths)) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    t->paths[t->n++] = path;
    return 0;
}

void cli_traces_free(cli_traces *t) {
    free(t->paths);
    free(t->offsets);
    *t = (cli_traces){0};
}

/* 1 when the --offset name `name` (up to its '=') names TRACE `path`: the
 * argument as given, its file name, or another path to the same file. */
static int names_trace(const char *name, const char *path) {
    size_t len = (size_t)(strrchr(name, '=') - name);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if ((strlen(path) == len && strncmp(path, name, len) == 0) ||
        (strlen(base) == len && strncmp(base, name, len) == 0))
        return 1;
    char *file = strndup(name, len);
    int same = file && cli_same_file(file, path);
    free(file);
    return same;
}

/* Each --offset to the inputs it names: exactly one, and not the first. */
static int apply_offsets(const char *cmd, const cli_traces *t, pp_merge_input *in) {
    for (size_t k = 0; k < t->noffsets; k++) {
        const cli_offset *o = &t->offsets[k];
        int len = (int)(strrchr(o->trace, '=') - o->trace);
        size_t hit = SIZE_MAX, hits = 0;
        for (size_t i = 0; i < t->n; i++)
            if (names_trace(o->trace, t->paths[i]))
                hit = i, hits++;
        if (hits != 1) {
            cli_error("%s: --offset %.*s: %s", cmd, len, o->trace,
                      hits ? "names several TRACE arguments (give the path as written)"
                           : "names no TRACE argument (give a TRACE's path or file name)");
            return CLI_BADINPUT;
        }
        if (hit == 0) {
            cli_error("%s: --offset %.*s: the first TRACE is the reference clock; give the "
                      "offsets of the others", cmd, len, o->trace);
            return CLI_BADINPUT;
        }
        in[hit].has_offset = 1;
        in[hit].offset_ns = o->ns;
    }
    return 0;
}

static int read_one(const char *verb, const char *path, int dialect, pp_model **m) {
    pp_error err = {{0}};
    int rc = pp_trace_read_dialect(path, (pp_json_dialect)dialect, m, &err);
    if (rc == PP_ETRUNCATED && *m) {
        cli_error("warning: %s (%s the rest; the report states the loss)", err.msg, verb);
        return 0;
    }
    if (rc == PP_OK)
        return 0;
    cli_error("%s", err.msg[0] ? err.msg : pp_strerror(rc));
    pp_model_free(*m);
    *m = NULL;
    return cli_exit_code(rc);
}

static char *joined_names(const cli_traces *t) {
    size_t len = 1;
    for (size_t i = 0; i < t->n; i++)
        len += strlen(t->paths[i]) + 3;
    char *s = malloc(len), *p = s;
    for (size_t i = 0; s && i < t->n; i++)
        p += sprintf(p, "%s%s", i ? " + " : "", t->paths[i]);
    return s;
}

int cli_traces_load(const char *cmd, const char *verb, const cli_traces *t, pp_model **out,
                    char **source) {
    *out = NULL;
    *source = NULL;
    if (t->n < 2 && (t->noffsets || t->sync)) {
        cli_error("%s: --offset and --sync align several traces; %zu given", cmd, t->n);
        return CLI_BADINPUT;
    }
    cli_memory_check(verb, t);
    pp_model **models = calloc(t->n ? t->n : 1, sizeof *models);
    pp_merge_input *in = calloc(t->n ? t->n : 1, sizeof *in);
    int code = models && in && (*source = joined_names(t)) ? 0 : CLI_FAIL;
    if (code)
        cli_error("%s: out of memory", cmd);
    if (!code)
        code = apply_offsets(cmd, t, in);
    for (size_t i = 0; !code && i < t->n; i++) {
        code = read_one(verb, t->paths[i], t->dialect, &models[i]);
        in[i].model = models[i];
        in[i].name = t->paths[i];
    }
    if (!code && t->n == 1) {
        *out = models[0];
        models[0] = NULL;
    } else if (!code) {
        pp_merge_options o = {.sync_name = t->sync};
        pp_error err = {{0}};
        int rc = pp_model_merge(in, t->n, &o, out, &err);
        if (rc != PP_OK) {
            cli_error("%s: %s", cmd, err.msg[0] ? err.msg : pp_strerror(rc));
            code = cli_exit_code(rc);
        }
    }
    for (size_t i = 0; models && i < t->n; i++)
        pp_model_free(models[i]);
    free(models);
    free(in);
    if (code) {
        free(*source);
        *source = NULL;
    }
    return code;
}
