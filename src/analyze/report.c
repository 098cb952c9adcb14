/* report.c — building a report step by step, freeing it, reading it. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"
#include "core/grow.h"

void pp_analyze_options_init(pp_analyze_options *o) {
    memset(o, 0, sizeof *o);
}

char *an_strdupf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

double an_ratio(int64_t num, int64_t den) {
    return den == 0 ? 0.0 : (double)num / (double)den;
}

size_t an_device_label(const pp_report *r, uint32_t d, char *buf, size_t len) {
    int n = snprintf(buf, len, "%s%s", r->devices[d].name,
                     r->devices[d].simulated ? " (simulated)" : "");
    return n > 0 ? (size_t)n : 0;
}

int an_hw_quality_text(unsigned flags, char *buf, size_t len) {
    static const struct {
        unsigned flag;
        const char *text;
    } words[] = {
        {PP_HW_RUNNING_MEAN, "hardware time is a running mean over runs (OpenVINO's CPU "
                             "plugin), so hw%, eff% and pen% are averages"},
        {PP_HW_ABOVE_WALL, "some execs report hardware time above their wall time"},
        {PP_HW_IS_WALL, "hardware time is each exec's own duration (a foreign trace), so eff% "
                        "100 and pen% 0 hold by construction"},
    };
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (flags & words[i].flag) {
            int n = snprintf(buf + used, len - used, "%s%s", used ? "; " : "", words[i].text);
            used += n > 0 && (size_t)n < len - used ? (size_t)n : 0;
        }
    return used > 0;
}

void an_hw_quality_words(unsigned flags, char sep, char *buf, size_t len) {
    static const char *const words[] = {"running_mean", "above_wall", "is_wall", "host"};
    static const unsigned bits[] = {PP_HW_RUNNING_MEAN, PP_HW_ABOVE_WALL, PP_HW_IS_WALL,
                                    PP_HW_HOST};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < 4; i++)
        if (flags & bits[i]) {
            int n = snprintf(buf + used, len - used, "%s%s", used ? (char[]){sep, 0} : "",
                             words[i]);
            used += n > 0 && (size_t)n < len - used ? (size_t)n : 0;
        }
}

size_t an_dp_part_label(const pp_report *r, const pp_dp_device *part, char *buf, size_t len) {
    if (part->track == UINT32_MAX)
        return an_device_label(r, part->device, buf, len);
    int n = snprintf(buf, len, "%s", r->tracks[part->track].name);
    return n > 0 ? (size_t)n : 0;
}

void an_format_ns(int64_t ns, char *buf, size_t len) {
    int64_t a = ns < 0 ? -ns : ns;
    if (a < 1000)
        snprintf(buf, len, "%lld ns", (long long)ns);
    else if (a < 1000000)
        snprintf(buf, len, "%.3f us", (double)ns / 1e3);
    else if (a < 1000000000)
        snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.3f s", (double)ns / 1e9);
}

uint32_t an_stage_intern(pp_report *r, const char *name, size_t len) {
    for (size_t i = 0; i < r->nstages; i++)
        if (strlen(r->stage_names[i]) == len && memcmp(r->stage_names[i], name, len) == 0)
            return (uint32_t)i;
    if (r->nstages == r->stage_cap) {
        size_t cap = r->stage_cap ? 2 * r->stage_cap : 8;
        char **names = realloc(r->stage_names, cap * sizeof *names);
        if (!names)
            return AN_NONE;
        r->stage_names = names;
        int64_t *first = realloc(r->stage_first, cap * sizeof *first);
        if (!first)
            return AN_NONE;
        r->stage_first = first;
        uint8_t *inside = realloc(r->stage_inside, cap * sizeof *inside);
        if (!inside)
            return AN_NONE;
        r->stage_inside = inside;
        r->stage_cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return AN_NONE;
    memcpy(copy, name, len);
    copy[len] = '\0';
    r->stage_names[r->nstages] = copy;
    r->stage_first[r->nstages] = INT64_MAX;
    r->stage_inside[r->nstages] = 0;
    return (uint32_t)r->nstages++;
}

const char *an_keep_text(pp_report *r, const char *text) {
    if (pp_grow((void **)&r->texts, &r->captexts, r->ntexts, sizeof *r->texts) != PP_OK)
        return NULL;
    char *copy = an_strdupf("%s", text);
    if (copy)
        r->texts[r->ntexts++] = copy;
    return copy;
}

/* The scratch buffers, between steps whose tables would otherwise sit
 * beside them: faulting a buffer in again costs less than the peak it adds
 * (a device's intervals and penalties outlive the device step otherwise). */
static void scratch_each(pp_report *r, int release) {
    an_buf *bufs[] = {&r->sort_tmp, &r->values, &r->spans, &r->spans2, &r->index, &r->hist};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (release)
            free(bufs[i]->p);
        *bufs[i] = (an_buf){0};
    }
}

void an_scratch_free(pp_report *r) {
    scratch_each(r, 1);
}

void an_scratch_forget(pp_report *r) {
    scratch_each(r, 0);
}

/* What only the build needs: freed before the report is handed out. */
static void build_state_free(pp_report *r) {
    an_scratch_free(r);
    free(r->bookkeeping);
    r->bookkeeping = NULL;
    free(r->bw_sums);
    r->bw_sums = NULL;
    free(r->execs);
    free(r->exec_batch);
    free(r->op);
    r->op = NULL;
    free(r->host);
    r->host = NULL;
    r->nhost = 0;
    free(r->track_device);
    free(r->stage_of_string);
    free(r->stage_first);
    free(r->stage_inside);
    free(r->dp_rows);
    an_dp_sums_free(r);
    r->execs = NULL;
    r->exec_batch = NULL;
    r->track_device = r->stage_of_string = NULL;
    r->stage_first = NULL;
    r->stage_inside = NULL;
    r->dp_rows = NULL;
    r->m = NULL;
}

/* The build; with `own` (m itself, then) it also narrows the model's
 * columns and drops the annotations no step reads again (the caller frees
 * the model). */
static int build(pp_model *own, const pp_model *m, const pp_analyze_options *o,
                 pp_report **out, pp_error *err) {
    *out = NULL;
    pp_analyze_options defaults;
    if (!o) {
        pp_analyze_options_init(&defaults);
        o = &defaults;
    }
    pp_report *r = calloc(1, sizeof *r);
    if (!r)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    r->m = r->model = m;
    /* an_exec, an_host and the stage cells hold 32-bit event indexes; an_host
     * holds a stage in 28 bits, and the stages are fewer than the strings */
    size_t count = pp_model_event_count(m), strings = pp_model_string_count(m);
    if (count >= UINT32_MAX || strings >= AN_HOST_NO_STAGE) {
        free(r);
        return pp_set_error(err, PP_EUNSUPPORTED,
                            "%s: %zu events and %zu strings; the analysis takes fewer than %u "
                            "events and %u strings: analyze it in windows cut with 'pipeprof "
                            "convert --from --to'",
                            o->source ? o->source : "the model", count, strings, UINT32_MAX,
                            (unsigned)AN_HOST_NO_STAGE);
    }
    if (own) /* read for the last time: its columns as narrow as its values allow */
        pp_model_narrow(own);
    pp_model_cols(m, &r->c);
    r->meta = *pp_model_meta_get(m);
    r->source = an_strdupf("%s", o->source ? o->source : "(model)");
    const char *align = pp_model_string(m, r->meta.alignment);
    r->alignment = *align ? an_strdupf("%s", align) : NULL;
    int rc = r->source && (r->alignment || !*align) ? PP_OK
                                                    : pp_set_error(err, PP_ENOMEM, "out of memory");
    if (rc == PP_OK)
        rc = an_window_select(r, o, err);
    if (rc == PP_OK) /* the exec view, and the op spans' annotations gathered */
        rc = an_execs_collect(r, err);
    an_op_keys op = an_op_keys_of(m);
    const uint32_t op_keys[] = {op.type, op.exec, op.cpu};
    if (rc == PP_OK && own) /* no step reads them after */
        pp_model_anns_drop(own, op_keys, 3);
    if (rc == PP_OK)
        rc = an_labels_collect(r, o, err);
    if (rc == PP_OK)
        rc = an_host_execs(r, err);
    if (rc == PP_OK)
        rc = an_stage_order(r, err);
    if (rc == PP_OK)
        rc = an_tracks_list(r, err);
    if (rc == PP_OK) /* before the device step's thread: the columns read alone */
        rc = an_stage_ops_compute(r, err);
    if (rc == PP_OK)
        rc = an_framework_compute(r, err);
    an_beside *devices = NULL;
    if (rc == PP_OK) /* the device step, beside the steps up to its join (beside.c) */
        rc = an_devices_start(r, &devices, err);
    /* The steps that read annotations other than the shares come before the
     * stage step, which holds the most: an owned model's annotations but the
     * shares go before it. */
    if (rc == PP_OK)
        rc = an_ops_compute(r, err);
    if (rc == PP_OK)
        rc = an_decompose_compute(r, o, err);
    if (rc == PP_OK)
        rc = an_bandwidth_sums(r, err);
    if (rc == PP_OK)
        rc = an_sched_compute(r, err);
    if (rc == PP_OK)
        rc = an_sched_rivals(r, err);
    an_scratch_free(r); /* the op step's, not to sit beside the stage step's */
    /* The device step joins before the stage step, which holds the most:
     * when it ran on until the join below, its scratch met the stage step's
     * peak or missed it as the threads were scheduled (peaks of 380-409 MiB
     * at 10M events, docs/analysis.md#memory) */
    int devices_rc = an_devices_join(r, devices, rc == PP_OK ? err : NULL);
    rc = rc == PP_OK ? devices_rc : rc;
    uint32_t kept[2] = {an_share_key(m), an_part_key(m)};
    if (rc == PP_OK && own)
        pp_model_anns_keep(own, kept, 2);
    if (rc == PP_OK)
        rc = an_stages_compute(r, err);
    if (own) /* no step reads an annotation after the stage step */
        pp_model_anns_keep(own, NULL, 0);
    if (rc == PP_OK) /* before cycles: it frees the data-parallel rows */
        rc = an_dp_compute(r, err);
    if (rc == PP_OK) /* in the stage step's scratch, already faulted in */
        rc = an_cycles_compute(r, err);
    an_scratch_free(r);
    if (rc == PP_OK && o->nisolated > 0)
        rc = an_contention_compute(r, o, err);
    if (rc == PP_OK)
        rc = an_bandwidth_rates(r, err);
    if (rc == PP_OK)
        rc = an_findings_compute(r, err);
    build_state_free(r);
    if (rc != PP_OK) {
        pp_report_free(r);
        return rc;
    }
    *out = r;
    return PP_OK;
}

int pp_report_build(const pp_model *m, const pp_analyze_options *o, pp_report **out,
                    pp_error *err) {
    return build(NULL, m, o, out, err);
}

int pp_report_build_owned(pp_model *m, const pp_analyze_options *o, pp_report **out,
                          pp_error *err) {
    int rc = build(m, m, o, out, err);
    pp_model_free(m);
    if (*out)
        (*out)->model = NULL; /* pp_report_exec_parts has nothing to read */
    return rc;
}

static void free_strings(char **s, size_t n) {
    for (size_t i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
}

void pp_report_free(pp_report *r) {
    if (!r)
        return;
    build_state_free(r);
    free(r->how);
    free(r->hint);
    free(r->source);
    free(r->alignment);
    for (size_t i = 0; i < r->ndevices; i++)
        free((char *)r->devices[i].name);
    free(r->devices);
    for (size_t i = 0; i < r->ntracks; i++)
        free((char *)r->tracks[i].name);
    free(r->tracks);
    free(r->gap_bytes);
    free(r->gap_at);
    free_strings(r->stage_names, r->nstages);
    free(r->stages);
    free(r->times);
    free(r->times_public);
    free(r->time_at), free(r->time_track);
    free(r->dp_time);
    free(r->dp_rank);
    free(r->dp_measured);
    free(r->bmap.sorted);
    free(r->batch_time);
    free(r->batch_e2e);
    free(r->batches_public);
    free(r->dp);
    free(r->dp_devices);
    free(r->ops);
    free(r->op_types);
    free(r->stage_ops);
    free(r->contention);
    free(r->exec_parts);
    free(r->part_cells);
    free(r->decomp_iso);
    free(r->decomp);
    free(r->framework);
    free(r->clocks);
    free(r->sched);
    free_strings(r->texts, r->ntexts);
    an_findings_free(r);
    free(r->handoff);
    free(r);
}

const pp_window *pp_report_window(const pp_report *r) { return &r->window; }
const pp_model_meta *pp_report_meta(const pp_report *r) { return &r->meta; }
const char *pp_report_source(const pp_report *r) { return r->source; }
const pp_cycle_stats *pp_report_cycles(const pp_report *r) { return &r->cycles; }

const pp_device_stats *pp_report_devices(const pp_report *r, size_t *n) {
    *n = r->ndevices;
    return r->devices;
}

const pp_track_stats *pp_report_tracks(const pp_report *r, size_t *n) {
    *n = r->ntracks;
    return r->tracks;
}

const pp_stage_stats *pp_report_stages(const pp_report *r, size_t *n) {
    *n = r->nstages;
    return r->stages;
}

/* The public rows of a table the report keeps narrow (stage times,
 * batches): n rows of `size` bytes, row i written by `row`; NULL for none
 * or on no memory. */
static void *public_rows(const pp_report *r, size_t n, size_t size,
                         void (*row)(const pp_report *r, size_t i, void *out)) {
    char *rows = n > 0 ? malloc(n * size) : NULL;
    for (size_t i = 0; rows && i < n; i++)
        row(r, i, rows + i * size);
    return rows;
}

static void stage_time_row(const pp_report *r, size_t i, void *out) {
    *(pp_stage_time *)out = an_stage_time(r, i);
}

static void batch_row(const pp_report *r, size_t i, void *out) {
    *(pp_batch_stats *)out = an_batch_stats(r, i);
}

/* Their first call writes into the report: not from two threads at once. */
const pp_stage_time *pp_report_stage_times(const pp_report *r, size_t *n) {
    pp_report *w = (pp_report *)r;
    if (!w->times_public)
        w->times_public = public_rows(r, r->ntimes, sizeof *w->times_public, stage_time_row);
    *n = w->times_public ? r->ntimes : 0;
    return w->times_public;
}

const pp_batch_stats *pp_report_batches(const pp_report *r, size_t *n) {
    pp_report *w = (pp_report *)r;
    if (!w->batches_public)
        w->batches_public = public_rows(r, r->nbatches, sizeof *w->batches_public, batch_row);
    *n = w->batches_public ? r->nbatches : 0;
    return w->batches_public;
}

const pp_dp_stats *pp_report_dp(const pp_report *r, size_t *n) {
    *n = r->ndp;
    return r->dp;
}

const pp_op_stats *pp_report_ops(const pp_report *r, size_t *n) {
    *n = r->nops;
    return r->ops;
}

const pp_op_stats *pp_report_op_types(const pp_report *r, size_t *n) {
    *n = r->nop_types;
    return r->op_types;
}

const pp_contention_stats *pp_report_contention(const pp_report *r, size_t *n) {
    *n = r->ncontention;
    return r->contention;
}

const pp_sched_stats *pp_report_sched(const pp_report *r, size_t *n) {
    *n = r->nsched;
    return r->sched;
}

const char *pp_report_sched_method(const pp_report *r) {
    return r->sched_method;
}

const pp_sched_process *pp_report_sched_process(const pp_report *r) {
    return r->has_sched_process ? &r->sched_process : NULL;
}
