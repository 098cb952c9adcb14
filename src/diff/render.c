/* render.c — a diff as text for people (findings first, 80 columns) and
 * as JSON for programs (docs/diff.md, "JSON"). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_impl.h"

#define LABEL_COLUMN 28

static const char *const stat_json[] = {"mean", "p50", "p95", "value"};

static void bottleneck_line(FILE *out, const char *which, const pp_diff_bottleneck *b) {
    if (b->stage)
        fprintf(out, "%s: %llu cycles, bottleneck %s (%llu of %llu)\n", which,
                (unsigned long long)b->of, b->stage, (unsigned long long)b->cycles,
                (unsigned long long)b->of);
    else
        fprintf(out, "%s: %llu cycles\n", which, (unsigned long long)b->of);
}

/* One statement at 80 columns: "  " first, wrapped at spaces, continued
 * with "    "; a word longer than a line stands on its own. */
static void wrapped(FILE *out, const char *s) {
    const size_t width = 78;
    size_t col = 2;
    fputs("  ", out);
    while (*s) {
        size_t word = strcspn(s, " ");
        if (col > 4 && col + 1 + word > width) {
            fputs("\n    ", out);
            col = 4;
        } else if (col > 2 && col != 4) {
            fputc(' ', out);
            col++;
        }
        fwrite(s, 1, word, out);
        col += word;
        s += word;
        while (*s == ' ')
            s++;
    }
    fputc('\n', out);
}

int pp_diff_write_text(const pp_diff *d, FILE *out) {
    fprintf(out, "pipeprof diff\nbase: %s\nnew:  %s\n", d->source[0], d->source[1]);
    bottleneck_line(out, "base", &d->bottleneck[0]);
    bottleneck_line(out, "new ", &d->bottleneck[1]);
    fprintf(out,
            "significant = the rank test of its samples holds after Holm's correction over\n"
            "%zu tests at %g, the 95%% bootstrap interval of the change excludes 0, and\n"
            "the change is %g%% or more\n\n",
            d->ntests, d->alpha, 100 * d->min_change);
    fprintf(out, "Findings\n");
    for (size_t i = 0; i < d->nfindings; i++)
        wrapped(out, d->findings[i]);
    if (!d->nfindings)
        fprintf(out, "  none: no figure changed beyond noise\n");
    fprintf(out, "\nWithin noise (changes of 1%% or more that are not significant)\n");
    for (size_t i = 0; i < d->nnoise; i++)
        wrapped(out, d->noise[i]);
    if (!d->nnoise)
        fprintf(out, "  none\n");
    fprintf(out, "\nFigures (* significant; window figures: one value a run, not tested)\n");
    fprintf(out, "  %-*s %10s %10s  %s\n", LABEL_COLUMN, "", "base", "new", "change (95% CI)");
    for (size_t i = 0; i < d->nfigures; i++) {
        const pp_diff_figure *f = &d->figures[i];
        char b[64], n[64], ch[96];
        diff_format_value(f, f->only_in == 2 ? NAN : f->base, b, sizeof b);
        diff_format_value(f, f->only_in == 1 ? NAN : f->new_value, n, sizeof n);
        diff_format_change(f, ch, sizeof ch);
        if (strlen(f->label) > LABEL_COLUMN)
            fprintf(out, "  %s\n  %-*s", f->label, LABEL_COLUMN, "");
        else
            fprintf(out, "  %-*s", LABEL_COLUMN, f->label);
        fprintf(out, " %10s %10s  %s%s\n", b, n, ch, f->significant ? " *" : "");
    }
    return ferror(out) ? PP_EIO : PP_OK;
}

static json_t *num(double v) { return isnan(v) || isinf(v) ? json_null() : json_real(v); }

static json_t *opt_str(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *bottleneck_json(const char *source, const pp_diff_bottleneck *b) {
    return json_pack("{s:s, s:I, s:o, s:I}", "source", source, "cycles", (json_int_t)b->of,
                     "bottleneck", opt_str(b->stage), "bottleneck_cycles", (json_int_t)b->cycles);
}

static json_t *strings_json(char *const *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *figure_json(const pp_diff_figure *f) {
    static const char *const only[] = {"both", "base", "new"};
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "key", json_string(f->key));
    json_object_set_new(o, "label", json_string(f->label));
    json_object_set_new(o, "kind", json_string(diff_kind_name(f->kind)));
    json_object_set_new(o, "stat", json_string(stat_json[f->stat]));
    json_object_set_new(o, "stage", opt_str(f->stage));
    json_object_set_new(o, "device", opt_str(f->device));
    json_object_set_new(o, "op", opt_str(f->op));
    json_object_set_new(o, "unit",
                        json_string(f->kind == PP_DIFF_THROUGHPUT || f->kind == PP_DIFF_MEASURED
                                        ? "batches/s"
                                        : f->kind == PP_DIFF_BUSY ? "fraction" : "ns"));
    json_object_set_new(o, "higher_is_better", json_boolean(f->higher_is_better));
    json_object_set_new(o, "in", json_string(only[f->only_in]));
    json_object_set_new(o, "base", f->only_in == 2 ? json_null() : num(f->base));
    json_object_set_new(o, "new", f->only_in == 1 ? json_null() : num(f->new_value));
    json_object_set_new(o, "abs", f->only_in ? json_null() : num(f->abs));
    json_object_set_new(o, "rel", num(f->rel));
    json_object_set_new(o, "ci", json_pack("[o,o]", num(f->ci_lo), num(f->ci_hi)));
    json_object_set_new(o, "n_base", json_integer((json_int_t)f->n_base));
    json_object_set_new(o, "n_new", json_integer((json_int_t)f->n_new));
    json_object_set_new(o, "tested", json_boolean(f->tested));
    json_object_set_new(o, "p", num(f->p));
    json_object_set_new(o, "significant", json_boolean(f->significant));
    return o;
}

static char *diff_json_text(const pp_diff *d) {
    json_t *figs = json_array();
    for (size_t i = 0; figs && i < d->nfigures; i++)
        json_array_append_new(figs, figure_json(&d->figures[i]));
    json_t *root = json_pack(
        "{s:i, s:o, s:o, s:{s:s, s:f, s:I, s:f, s:f}, s:o, s:o, s:o}", "pipeprof_diff", 1, "base",
        bottleneck_json(d->source[0], &d->bottleneck[0]), "new",
        bottleneck_json(d->source[1], &d->bottleneck[1]), "significance", "test",
        "mann-whitney, holm", "alpha", d->alpha, "tests", (json_int_t)d->ntests, "ci_level", 0.95, "min_change", d->min_change,
        "findings", strings_json(d->findings, d->nfindings), "within_noise",
        strings_json(d->noise, d->nnoise), "figures", figs);
    char *text = root ? json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(root);
    return text;
}

int pp_diff_json(const pp_diff *d, char **out, size_t *len) {
    *out = diff_json_text(d);
    if (!*out)
        return PP_ENOMEM;
    if (len)
        *len = strlen(*out);
    return PP_OK;
}

int pp_diff_write_json(const pp_diff *d, FILE *out) {
    char *text = diff_json_text(d);
    if (!text)
        return PP_ENOMEM;
    int bad = fputs(text, out) < 0 || fputc('\n', out) == EOF;
    free(text);
    return bad || ferror(out) ? PP_EIO : PP_OK;
}
