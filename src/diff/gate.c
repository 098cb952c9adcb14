/* gate.c — rules on a diff for CI: "throughput>=-5%" fails only when the
 * throughput fell by more than 5% AND the fall is significant, so noise
 * never breaks a build (docs/diff.md, "Gates"); and the JUnit XML that CI
 * systems display. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "diff/diff_impl.h"

void pp_gate_rule_clear(pp_gate_rule *r) {
    if (!r)
        return;
    free(r->text), free(r->key);
    memset(r, 0, sizeof *r);
}

int pp_gate_rule_parse(const char *text, pp_gate_rule *out, pp_error *err) {
    memset(out, 0, sizeof *out);
    const char *ge = strstr(text, ">="), *le = strstr(text, "<=");
    const char *op = ge && (!le || ge < le) ? ge : le;
    char *end = NULL;
    double pct = op ? strtod(op + 2, &end) : NAN;
    if (!op || op == text || !end || end == op + 2 || strcmp(end, "%") != 0 || !isfinite(pct))
        return pp_set_error(err, PP_EINVAL,
                            "rule \"%s\": expected KEY>=LIMIT%% or KEY<=LIMIT%%, e.g. "
                            "throughput>=-5%% or stage:Embedding.p95<=+10%%",
                            text);
    out->text = strdup(text);
    out->key = strndup(text, (size_t)(op - text));
    if (!out->text || !out->key) {
        pp_gate_rule_clear(out);
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    }
    out->at_least = op == ge;
    out->limit = pct / 100;
    return PP_OK;
}

/* The keys of figures of the kind a key names ("stage:..."), for a message. */
static void similar_keys(const pp_diff *d, const char *key, char *buf, size_t cap) {
    size_t kind_len = strcspn(key, ":.");
    size_t at = 0, shown = 0;
    buf[0] = 0;
    for (size_t i = 0; i < d->nfigures && shown < 8; i++) {
        const char *k = d->figures[i].key;
        if (strncmp(k, key, kind_len) != 0 || strcspn(k, ":.") != kind_len)
            continue;
        int w = snprintf(buf + at, cap - at, "%s%s", shown ? ", " : "", k);
        if (w < 0 || (size_t)w >= cap - at)
            break;
        at += (size_t)w, shown++;
    }
    if (!shown) {
        snprintf(buf, cap, "throughput, cycle.p95, e2e.p50, stage:NAME.mean, exec:STAGE@DEVICE.p95, "
                           "penalty:DEVICE.mean, op:DEVICE/NAME.mean");
    }
}

int pp_gate_check(const pp_diff *d, const pp_gate_rule *rule, pp_gate_result *out,
                  pp_error *err) {
    memset(out, 0, sizeof *out);
    out->rule = rule;
    const pp_diff_figure *f = pp_diff_find(d, rule->key);
    if (!f) {
        char mean_key[512];
        snprintf(mean_key, sizeof mean_key, "%s.mean", rule->key);
        f = pp_diff_find(d, mean_key);
    }
    if (!f) {
        char have[400];
        similar_keys(d, rule->key, have, sizeof have);
        return pp_set_error(err, PP_ENOTFOUND, "rule \"%s\": no figure \"%s\" in both runs (have: %s)",
                            rule->text, rule->key, have);
    }
    if (!f->tested)
        return pp_set_error(err, PP_EINVAL,
                            "rule \"%s\": %s is %s: no per-batch samples to test, so it can "
                            "never be judged significant; gate a tested figure",
                            rule->text, f->key,
                            f->only_in ? "in one run only" : "one value a run (a window figure)");
    if (isnan(f->rel))
        return pp_set_error(err, PP_EINVAL, "rule \"%s\": %s is 0 in the base: no relative change",
                            rule->text, f->key);
    out->figure = f;
    int beyond = rule->at_least ? f->rel < rule->limit : f->rel > rule->limit;
    out->verdict = !beyond ? PP_GATE_PASS : f->significant ? PP_GATE_FAIL : PP_GATE_NOISE;
    char ch[96];
    diff_format_change(f, ch, sizeof ch);
    static const char *const why[] = {"within the limit (%s %+g%%)",
                                      "beyond the limit (%s %+g%%) but not significant",
                                      "beyond the limit (%s %+g%%) and significant"};
    char verdict[96];
    snprintf(verdict, sizeof verdict, why[out->verdict], rule->at_least ? ">=" : "<=",
             100 * rule->limit);
    snprintf(out->message, sizeof out->message, "%s %s, p = %.2g: %s", f->key, ch, f->p, verdict);
    return PP_OK;
}

static void xml_text(FILE *out, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

int pp_gate_write_junit(const pp_gate_result *res, size_t n, FILE *out) {
    size_t failures = 0;
    for (size_t i = 0; i < n; i++)
        failures += res[i].verdict == PP_GATE_FAIL;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<testsuites>\n<testsuite name=\"pipeprof gate\" tests=\"%zu\" "
                 "failures=\"%zu\" errors=\"0\">\n",
            n, failures);
    for (size_t i = 0; i < n; i++) {
        fputs("  <testcase classname=\"pipeprof.gate\" name=\"", out);
        xml_text(out, res[i].rule->text);
        fputs("\">", out);
        if (res[i].verdict == PP_GATE_FAIL) {
            fputs("\n    <failure message=\"", out);
            xml_text(out, res[i].message);
            fputs("\"/>\n  ", out);
        } else {
            fputs("<system-out>", out);
            xml_text(out, res[i].message);
            fputs("</system-out>", out);
        }
        fputs("</testcase>\n", out);
    }
    fputs("</testsuite>\n</testsuites>\n", out);
    return ferror(out) ? PP_EIO : PP_OK;
}
