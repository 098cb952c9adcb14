/* baseline.c — a summary saved as JSON and read back, so that CI keeps a
 * few kilobytes of samples instead of a whole trace (docs/diff.md,
 * "Baselines"). The file holds everything a comparison reads: the samples
 * value by value (the tests resample them), the window figures and the
 * stages with their bottleneck counts. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "diff/diff_impl.h"
#include "io/outfile.h"

#define BASELINE_VERSION 1

static int set_opt_string(json_t *o, const char *key, const char *v) {
    return v ? json_object_set_new(o, key, json_string(v)) : 0;
}

static json_t *summary_to_json(const pp_diff_summary *s) {
    json_t *root = json_object(), *stages = json_array(), *samples = json_array(),
           *values = json_array();
    int bad = !root || !stages || !samples || !values;
    if (!bad) {
        bad |= json_object_set_new(root, "pipeprof_baseline", json_integer(BASELINE_VERSION));
        bad |= json_object_set_new(root, "source", json_string(s->source));
        bad |= json_object_set_new(root, "cycles", json_integer((json_int_t)s->cycles));
        bad |= json_object_set(root, "stages", stages);
        bad |= json_object_set(root, "samples", samples);
        bad |= json_object_set(root, "values", values);
    }
    for (size_t i = 0; !bad && i < s->nstages; i++) {
        json_t *st = json_pack("{s:s, s:I}", "name", s->stages[i].name, "bottleneck",
                               (json_int_t)s->stages[i].bottleneck);
        bad |= !st || json_array_append_new(stages, st);
    }
    for (size_t i = 0; !bad && i < s->nsamples; i++) {
        const diff_sample *x = &s->samples[i];
        json_t *o = json_object(), *v = json_array();
        bad |= !o || !v;
        for (size_t k = 0; !bad && k < x->n; k++)
            bad |= json_array_append_new(v, json_integer((json_int_t)x->v[k]));
        if (!bad) {
            bad |= json_object_set_new(o, "kind", json_string(diff_kind_name(x->kind)));
            bad |= set_opt_string(o, "stage", x->stage) | set_opt_string(o, "device", x->device) |
                   set_opt_string(o, "op", x->op);
            bad |= json_object_set(o, "ns", v);
            bad |= json_array_append(samples, o);
        }
        json_decref(v), json_decref(o);
    }
    for (size_t i = 0; !bad && i < s->nvalues; i++) {
        const diff_value *x = &s->values[i];
        json_t *o = json_object();
        bad |= !o || json_object_set_new(o, "kind", json_string(diff_kind_name(x->kind)));
        bad |= !o || set_opt_string(o, "device", x->device);
        bad |= !o || json_object_set_new(o, "value", json_real(x->value));
        bad |= !o || json_array_append(values, o);
        json_decref(o);
    }
    json_decref(stages), json_decref(samples), json_decref(values);
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int pp_diff_summary_save(const pp_diff_summary *s, const char *path, pp_error *err) {
    json_t *root = summary_to_json(s);
    char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    if (!text)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    size_t len = strlen(text);
    text[len] = '\n'; /* json_dumps leaves room for its NUL: the file ends in a newline */
    int rc = pp_outfile_write_file(path, text, len + 1, err);
    free(text);
    return rc;
}

int pp_diff_summary_is_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char head[64] = {0};
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    /* '{', then maybe whitespace (a baseline someone pretty-printed), then the key */
    size_t at = strspn(head, " \t\r\n");
    if (at >= n || head[at] != '{')
        return 0;
    at += 1 + strspn(head + at + 1, " \t\r\n");
    return strncmp(head + at, "\"pipeprof_baseline\"", 19) == 0;
}

/* The string `key` of `o` or NULL; *bad when present but not a string. */
static const char *opt_string(json_t *o, const char *key, int *bad) {
    json_t *v = json_object_get(o, key);
    if (v && !json_is_string(v))
        *bad = 1;
    return v ? json_string_value(v) : NULL;
}

static int load_samples(pp_diff_summary *s, json_t *list, const char *path, pp_error *err) {
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o) {
        int bad = !json_is_object(o);
        const char *kind = bad ? NULL : opt_string(o, "kind", &bad);
        json_t *ns = bad ? NULL : json_object_get(o, "ns");
        pp_diff_kind k = kind ? diff_kind_from_name(kind) : PP_DIFF_KINDS;
        if (bad || !json_is_array(ns) || k >= PP_DIFF_MEASURED)
            return pp_set_error(err, PP_EFORMAT,
                                "%s: samples[%zu]: expected {\"kind\": cycle|e2e|stage|exec|"
                                "penalty|op, \"ns\": [...]}",
                                path, i);
        const char *stage = opt_string(o, "stage", &bad), *device = opt_string(o, "device", &bad),
                   *op = opt_string(o, "op", &bad);
        size_t n = json_array_size(ns);
        double *v = malloc((n ? n : 1) * sizeof *v);
        if (!v)
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
        for (size_t j = 0; j < n; j++) {
            json_t *x = json_array_get(ns, j);
            bad |= !json_is_integer(x);
            v[j] = bad ? 0 : (double)json_integer_value(x);
        }
        if (bad) {
            free(v);
            return pp_set_error(err, PP_EFORMAT, "%s: samples[%zu]: \"ns\" must be integers and "
                                "stage, device, op strings", path, i);
        }
        if (diff_summary_add_sample(s, k, stage, device, op, v, n) != PP_OK)
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    return PP_OK;
}

static int load_rest(pp_diff_summary *s, json_t *root, const char *path, pp_error *err) {
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(root, "stages"), i, o) {
        json_t *name = json_object_get(o, "name"), *b = json_object_get(o, "bottleneck");
        if (!json_is_string(name) || !json_is_integer(b) || json_integer_value(b) < 0)
            return pp_set_error(err, PP_EFORMAT,
                                "%s: stages[%zu]: expected {\"name\": ..., \"bottleneck\": N}",
                                path, i);
        if (diff_summary_add_stage(s, json_string_value(name),
                                   (uint64_t)json_integer_value(b)) != PP_OK)
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    json_array_foreach(json_object_get(root, "values"), i, o) {
        int bad = 0;
        const char *kind = opt_string(o, "kind", &bad);
        const char *device = opt_string(o, "device", &bad);
        json_t *v = json_object_get(o, "value");
        pp_diff_kind k = kind ? diff_kind_from_name(kind) : PP_DIFF_KINDS;
        if (bad || !json_is_number(v) || k < PP_DIFF_MEASURED || k >= PP_DIFF_KINDS)
            return pp_set_error(err, PP_EFORMAT,
                                "%s: values[%zu]: expected {\"kind\": measured|busy|bubbles, "
                                "\"value\": number}",
                                path, i);
        if (diff_summary_add_value(s, k, device, json_number_value(v)) != PP_OK)
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    return PP_OK;
}

int pp_diff_summary_load(const char *path, pp_diff_summary **out, pp_error *err) {
    *out = NULL;
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        FILE *f = fopen(path, "rb");
        if (!f)
            return pp_set_error(err, PP_ENOTFOUND, "%s: cannot open the baseline", path);
        fclose(f);
        return pp_set_error(err, PP_EFORMAT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    }
    json_t *ver = json_object_get(root, "pipeprof_baseline");
    json_t *source = json_object_get(root, "source"), *cycles = json_object_get(root, "cycles");
    int rc = PP_OK;
    if (!json_is_integer(ver) || json_integer_value(ver) != BASELINE_VERSION ||
        !json_is_string(source) || !json_is_integer(cycles) || json_integer_value(cycles) < 1 ||
        !json_is_array(json_object_get(root, "samples")) ||
        !json_is_array(json_object_get(root, "stages")) ||
        !json_is_array(json_object_get(root, "values"))) {
        rc = pp_set_error(err, PP_EFORMAT,
                          "%s: not a pipeprof baseline of version %d (expected the keys "
                          "pipeprof_baseline, source, cycles, stages, samples, values: "
                          "pipeprof diff --save-baseline writes them)",
                          path, BASELINE_VERSION);
    }
    pp_diff_summary *s = rc == PP_OK ? diff_summary_new(json_string_value(source)) : NULL;
    if (rc == PP_OK && !s)
        rc = pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    if (rc == PP_OK) {
        s->cycles = (uint64_t)json_integer_value(cycles);
        rc = load_samples(s, json_object_get(root, "samples"), path, err);
    }
    if (rc == PP_OK)
        rc = load_rest(s, root, path, err);
    json_decref(root);
    if (rc != PP_OK) {
        pp_diff_summary_free(s);
        return rc;
    }
    *out = s;
    return PP_OK;
}
