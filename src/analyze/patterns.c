/* patterns.c — the user's name patterns (--batch-pattern, --stage-pattern,
 * --partition-pattern, --merge-pattern).
 *
 * They are POSIX extended regexes, with one addition users know from PCRE
 * and Python: a capture group may be named, (?<stage>...) or (?P<batch>...).
 * POSIX has no named groups, so the names are taken out here, each group's
 * number is remembered, and the plain regex goes to regcomp. No regex
 * package is needed for that: libc's regex is the engine, and this file only
 * counts parentheses (outside bracket expressions and escapes).
 *
 * Two shapes are refused before regcomp sees them, because glibc's regcomp
 * copies a repeated subexpression once per repetition and a pattern of a
 * hundred bytes can take gigabytes: a quantifier right after another
 * ("a++", ".*?": PCRE's possessive and lazy forms, undefined in POSIX),
 * and counted repeats ({m,n}) whose bounds multiply past COUNTED_MAX. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

/* the product of every {m,n}'s upper bound ({m,}: m + 1) a pattern may have */
#define COUNTED_MAX 10000

/* The group name at `p` (just after "(?<" or "(?P<"): 1 stage, 2 batch, 0
 * unknown; *len is the name's length up to '>'. */
static int group_name(const char *p, size_t *len) {
    const char *end = strchr(p, '>');
    if (!end)
        return 0;
    *len = (size_t)(end - p);
    if (*len == 5 && memcmp(p, "stage", 5) == 0)
        return 1;
    if (*len == 5 && memcmp(p, "batch", 5) == 0)
        return 2;
    return 0;
}

/* The length of the quantifier at s ("*", "+", "?" or "{m}", "{m,}",
 * "{m,n}"), 0 for none; *upper is its upper bound (1 for the others). */
static size_t quantifier(const char *s, unsigned long *upper) {
    *upper = 1;
    if (*s == '*' || *s == '+' || *s == '?')
        return 1;
    if (*s != '{' || s[1] < '0' || s[1] > '9')
        return 0;
    char *end;
    unsigned long m = strtoul(s + 1, &end, 10), n = m;
    if (*end == ',') {
        const char *at = end + 1;
        n = *at >= '0' && *at <= '9' ? strtoul(at, &end, 10) : (end = (char *)at, m + 1);
    }
    if (*end != '}')
        return 0; /* not a repeat: regcomp says what is wrong with it */
    *upper = n > m ? n : m;
    return (size_t)(end + 1 - s);
}

/* Copies `text` into `out` without the group names, numbering the groups. */
static int strip_names(an_pattern *p, const char *option, const char *text, char *out,
                       pp_error *err) {
    size_t o = 0;
    int in_bracket = 0, after_quantifier = 0;
    double counted = 1.0;
    for (const char *s = text; *s;) {
        unsigned long upper;
        size_t qlen = in_bracket ? 0 : quantifier(s, &upper);
        if (qlen) {
            if (after_quantifier)
                return pp_set_error(err, PP_EINVAL,
                                    "%s \"%s\": a quantifier right after another at offset %zu "
                                    "(PCRE's possessive \"++\" and lazy \"*?\" are not POSIX)",
                                    option, text, (size_t)(s - text));
            counted *= (double)upper;
            if (counted > COUNTED_MAX)
                return pp_set_error(err, PP_EINVAL,
                                    "%s \"%s\": counted repeats {m,n} multiply past %d "
                                    "repetitions (at offset %zu)",
                                    option, text, COUNTED_MAX, (size_t)(s - text));
            memcpy(out + o, s, qlen);
            o += qlen, s += qlen;
            after_quantifier = 1;
            continue;
        }
        after_quantifier = 0;
        if (in_bracket) {
            /* "[]...]" and "[^]...]": a ']' first is a literal */
            if (*s == ']' && s[-1] != '[' && !(s[-1] == '^' && s[-2] == '['))
                in_bracket = 0;
            else if (*s == '[' && (s[1] == ':' || s[1] == '.' || s[1] == '=')) {
                const char close[3] = {s[1], ']', 0};
                const char *e = strstr(s + 2, close);
                if (e) {
                    size_t n = (size_t)(e + 2 - s);
                    memcpy(out + o, s, n);
                    o += n, s += n;
                    continue;
                }
            }
            out[o++] = *s++;
            continue;
        }
        if (*s == '\\' && s[1]) {
            out[o++] = *s++;
            out[o++] = *s++;
            continue;
        }
        if (*s == '[') {
            in_bracket = 1;
            out[o++] = *s++;
            continue;
        }
        if (*s != '(') {
            out[o++] = *s++;
            continue;
        }
        p->ngroups++;
        out[o++] = *s++;
        if (*s != '?')
            continue;
        size_t skip = s[1] == '<' ? 2 : s[1] == 'P' && s[2] == '<' ? 3 : 0, len = 0;
        int which = skip ? group_name(s + skip, &len) : 0;
        if (which == 0)
            return pp_set_error(err, PP_EINVAL,
                                "%s \"%s\": only the named groups (?<stage>...) and "
                                "(?<batch>...) are understood after \"(?\"",
                                option, text);
        int *slot = which == 1 ? &p->stage_group : &p->batch_group;
        if (*slot)
            return pp_set_error(err, PP_EINVAL, "%s \"%s\": the group \"%s\" is named twice",
                                option, text, which == 1 ? "stage" : "batch");
        *slot = (int)p->ngroups;
        p->named = 1;
        s += skip + len + 1;
    }
    out[o] = '\0';
    return PP_OK;
}

/* Which groups mean what when none is named: `kind` 's' (stage pattern:
 * stage, then batch), 'b' (batch pattern: stage then batch, or one group =
 * the batch), 'r' (partition / merge: no group needed). */
static int default_groups(an_pattern *p, char kind, const char *option, const char *text,
                          pp_error *err) {
    if (!p->named && kind == 'b') {
        p->stage_group = p->ngroups >= 2 ? 1 : 0;
        p->batch_group = p->ngroups >= 2 ? 2 : p->ngroups == 1 ? 1 : 0;
    } else if (!p->named && kind == 's') {
        p->stage_group = p->ngroups >= 1 ? 1 : 0;
        p->batch_group = p->ngroups >= 2 ? 2 : 0;
    }
    if (kind == 'b' && !p->batch_group)
        return pp_set_error(err, PP_EINVAL,
                            "%s \"%s\": needs a batch group, e.g. "
                            "\"^(?<stage>.+)/batch(?<batch>[0-9]+)$\" or "
                            "\"^ProfilerStep#(?<batch>[0-9]+)$\"",
                            option, text);
    if (kind == 's' && !p->stage_group)
        return pp_set_error(err, PP_EINVAL,
                            "%s \"%s\": needs a stage group, e.g. \"^(?<stage>Stage[^/]*)\"",
                            option, text);
    return PP_OK;
}

int an_pattern_compile(an_pattern *p, char kind, const char *option, const char *text,
                       pp_error *err) {
    memset(p, 0, sizeof *p);
    char *plain = malloc(strlen(text) + 1);
    if (!plain)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    int rc = strip_names(p, option, text, plain, err);
    if (rc == PP_OK) {
        int re = regcomp(&p->re, plain, REG_EXTENDED);
        if (re != 0) {
            char msg[200];
            regerror(re, &p->re, msg, sizeof msg);
            rc = pp_set_error(err, PP_EINVAL, "%s \"%s\": %s", option, text, msg);
        } else {
            p->compiled = 1;
            rc = default_groups(p, kind, option, text, err);
        }
    }
    free(plain);
    if (rc != PP_OK)
        an_pattern_free(p);
    return rc;
}

void an_pattern_free(an_pattern *p) {
    if (p->compiled)
        regfree(&p->re);
    p->compiled = 0;
}

int an_pattern_match(const an_pattern *p, const char *name, an_capture *out) {
    regmatch_t g[10];
    size_t n = p->ngroups + 1 < 10 ? p->ngroups + 1 : 10;
    memset(out, 0, sizeof *out);
    out->batch = -1;
    if (!p->compiled || regexec(&p->re, name, n, g, 0) != 0)
        return 0;
    if (p->stage_group && (size_t)p->stage_group < n && g[p->stage_group].rm_so >= 0 &&
        g[p->stage_group].rm_eo > g[p->stage_group].rm_so) {
        out->stage_at = (size_t)g[p->stage_group].rm_so;
        out->stage_len = (size_t)(g[p->stage_group].rm_eo - g[p->stage_group].rm_so);
        out->has_stage = 1;
    }
    if (p->batch_group && (size_t)p->batch_group < n && g[p->batch_group].rm_so >= 0) {
        const char *at = name + g[p->batch_group].rm_so;
        char *end;
        long long v = strtoll(at, &end, 10);
        if (end == at || end != name + g[p->batch_group].rm_eo || v < 0)
            return 0; /* the batch capture is not a batch number */
        out->batch = v;
    }
    return 1;
}
