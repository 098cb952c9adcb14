/* render_json.c — the report as JSON, schema in docs/report-json.md
 * ("schema": "pipeprof-report", "version": 1). Times are integer ns; ratios
 * are doubles that read back to the same bits. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "io/json_emit.h"

static void str(FILE *out, const char *s) {
    char small[JSON_STRING_MAX(120)];
    size_t n = strlen(s);
    char *buf = n <= 120 ? small : malloc(JSON_STRING_MAX(n));
    if (!buf) { /* out of memory for a huge name: keep the JSON valid */
        fputs("\"\"", out);
        return;
    }
    char *e = json_put_string(buf, s, n);
    fwrite(buf, 1, (size_t)(e - buf), out);
    if (buf != small)
        free(buf);
}

static void dbl(FILE *out, const char *key, double v) {
    char buf[JSON_DOUBLE_MAX + 1];
    *json_put_double(buf, v) = '\0';
    fprintf(out, "\"%s\": %s", key, buf);
}

static void i64(FILE *out, const char *key, int64_t v) {
    fprintf(out, "\"%s\": %lld", key, (long long)v);
}

static void summary(FILE *out, const char *key, const pp_summary *s) {
    fprintf(out, "\"%s\": {\"n\": %llu, \"min\": %lld, \"mean\": %lld, \"p50\": %lld, "
                 "\"p90\": %lld, \"p95\": %lld, \"p97\": %lld, \"p99\": %lld, "
                 "\"p99_9\": %lld, \"max\": %lld, \"total\": %lld}",
            key, (unsigned long long)s->n, (long long)s->min, (long long)s->mean,
            (long long)s->p50, (long long)s->p90, (long long)s->p95, (long long)s->p97,
            (long long)s->p99, (long long)s->p999, (long long)s->max, (long long)s->total);
}

static void gaps(FILE *out, const pp_gap_stats *g) {
    fprintf(out, "\"bubbles\": {\"count\": %llu, \"mean\": %lld, \"p50\": %lld, \"p95\": %lld, "
                 "\"max\": %lld, \"total\": %lld, \"leading_ns\": %lld, \"trailing_ns\": %lld}",
            (unsigned long long)g->count, (long long)g->mean, (long long)g->p50,
            (long long)g->p95, (long long)g->max, (long long)g->total,
            (long long)g->leading_ns, (long long)g->trailing_ns);
}

static void bandwidth(FILE *out, const pp_bandwidth *b) {
    fprintf(out, ", \"bandwidth\": {\"execs\": %llu, \"read_bytes\": %llu, \"write_bytes\": %llu, ",
            (unsigned long long)b->execs, (unsigned long long)b->read_bytes,
            (unsigned long long)b->write_bytes);
    i64(out, "busy_ns", b->busy_ns), fputs(", ", out);
    i64(out, "xfer_ns", b->xfer_ns), fputs(", ", out);
    dbl(out, "read_gbps", b->read_gbps), fputs(", ", out);
    dbl(out, "write_gbps", b->write_gbps), fputs(", ", out);
    dbl(out, "total_gbps", b->total_gbps), fputs(", ", out);
    dbl(out, "xfer_gbps", b->xfer_gbps);
    fputc('}', out);
}

static void devices(const pp_report *r, FILE *out) {
    fputs(",\n\"devices\": [", out);
    for (size_t d = 0; d < r->ndevices; d++) {
        const pp_device_stats *v = &r->devices[d];
        fputs(d ? ",\n {\"name\": " : "\n {\"name\": ", out);
        str(out, v->name);
        fprintf(out, ", \"simulated\": %s, \"tracks\": %u, \"execs\": %llu, \"hw_unknown\": %llu, ",
                v->simulated ? "true" : "false", v->tracks, (unsigned long long)v->execs,
                (unsigned long long)v->hw_unknown);
        i64(out, "busy_ns", v->busy_ns), fputs(", ", out);
        i64(out, "idle_ns", v->idle_ns), fputs(", ", out);
        dbl(out, "wall_util", v->wall_util), fputs(", ", out);
        dbl(out, "hw_util", v->hw_util), fputs(", ", out);
        dbl(out, "hw_eff", v->hw_eff), fputs(", ", out);
        dbl(out, "transfer_share", v->transfer_share), fputs(", ", out);
        summary(out, "penalty_ns", &v->penalty), fputs(", ", out);
        dbl(out, "penalty_pct_wall", v->penalty_pct_wall), fputs(", ", out);
        char words[80];
        an_hw_quality_words(v->hw_quality, ',', words, sizeof words);
        fputs("\"hw_quality\": [", out);
        for (const char *w = words; *w;) { /* "a,b" -> "a", "b" */
            size_t n = strcspn(w, ",");
            fprintf(out, "%s\"%.*s\"", w == words ? "" : ", ", (int)n, w);
            w += n + (w[n] == ',');
        }
        fprintf(out, "], \"hw_above_wall\": %llu, ", (unsigned long long)v->hw_above_wall);
        gaps(out, &v->bubbles);
        bandwidth(out, &v->bandwidth);
        fputc('}', out);
    }
    fputs("],\n\"tracks\": [", out);
    for (size_t t = 0; t < r->ntracks; t++) {
        const pp_track_stats *v = &r->tracks[t];
        fputs(t ? ",\n {\"name\": " : "\n {\"name\": ", out);
        str(out, v->name);
        fputs(", \"device\": ", out);
        str(out, r->devices[v->device].name);
        fprintf(out, ", \"execs\": %llu, \"hw_unknown\": %llu, ", (unsigned long long)v->execs,
                (unsigned long long)v->hw_unknown);
        i64(out, "busy_ns", v->busy_ns), fputs(", ", out);
        dbl(out, "hw_util", v->hw_util), fputs(", ", out);
        gaps(out, &v->bubbles);
        bandwidth(out, &v->bandwidth);
        fputc('}', out);
    }
    fputc(']', out);
}

/* "pipelineprofiler": the framework's three figures (framework.c). */
static void framework(const pp_report *r, FILE *out) {
    fputs(",\n\"pipelineprofiler\": [", out);
    for (size_t i = 0; i < r->nframework; i++) {
        const pp_framework_stats *f = &r->framework[i];
        fputs(i ? ",\n {\"device\": " : "\n {\"device\": ", out);
        str(out, r->devices[f->device].name);
        fputs(", \"stage\": ", out);
        if (f->stage == UINT32_MAX)
            fputs("null", out);
        else
            str(out, r->stage_names[f->stage]);
        fprintf(out, ", \"tasks\": %llu, ", (unsigned long long)f->tasks);
        i64(out, "wall_ns", f->wall_ns), fputs(", ", out);
        i64(out, "hw_ns", f->hw_ns), fputs(", ", out);
        dbl(out, "hw_utilization_pct", f->hw_utilization_pct), fputs(", ", out);
        fprintf(out, "\"bubbles\": %llu, ", (unsigned long long)f->bubbles);
        if (f->bubbles)
            dbl(out, "bubble_mean_ns", f->bubble_mean_ns);
        else
            fputs("\"bubble_mean_ns\": null", out);
        fputs(", ", out);
        i64(out, "concurrency_penalty_ns", f->concurrency_penalty_ns);
        fputc('}', out);
    }
    fputc(']', out);
}

static void stages(const pp_report *r, FILE *out) {
    fputs(",\n\"stages\": [", out);
    for (size_t s = 0; s < r->nstages; s++) {
        const pp_stage_stats *v = &r->stages[s];
        fputs(s ? ",\n {\"name\": " : "\n {\"name\": ", out);
        str(out, v->name);
        fprintf(out, ", \"data_parallel\": %s, \"exec_less\": %s, \"kind\": \"%s\", ",
                v->data_parallel ? "true" : "false", v->exec_less ? "true" : "false",
                v->data_parallel ? "dp" : v->exec_less ? "host" : "device");
        summary(out, "time_ns", &v->time);
        fprintf(out, ", \"bottleneck_count\": %llu, \"execs\": %llu, \"hw_unknown\": %llu, ",
                (unsigned long long)v->bottleneck_count, (unsigned long long)v->execs,
                (unsigned long long)v->hw_unknown);
        i64(out, "hw_ns", v->hw_ns), fputs(", ", out);
        i64(out, "xfer_ns", v->xfer_ns), fputs(", ", out);
        summary(out, "penalty_ns", &v->penalty), fputs(", ", out);
        dbl(out, "penalty_pct_wall", v->penalty_pct_wall);
        bandwidth(out, &v->bandwidth);
        fputc('}', out);
    }
    fputs("],\n\"stage_times\": [", out);
    for (size_t i = 0; i < r->ntimes; i++) {
        pp_stage_time t = an_stage_time(r, i);
        fputs(i ? ",\n {\"stage\": " : "\n {\"stage\": ", out);
        str(out, r->stages[t.stage].name);
        fprintf(out, ", \"batch\": %lld, \"time_ns\": %lld, \"measured_ns\": %lld}",
                (long long)t.batch, (long long)t.time_ns, (long long)t.measured_ns);
    }
    fputs("],\n\"batches\": [", out);
    for (size_t i = 0; i < r->nbatches; i++) {
        pp_batch_stats bs = an_batch_stats(r, i), *b = &bs;
        fprintf(out, "%s {\"batch\": %lld, \"complete\": %s, \"stages\": %u, \"cycle_ns\": %lld, "
                     "\"e2e_ns\": %lld, \"bottleneck\": ",
                i ? ",\n" : "\n", (long long)b->batch, b->complete ? "true" : "false", b->stages,
                (long long)b->cycle_ns, (long long)b->e2e_ns);
        str(out, r->stages[b->bottleneck].name);
        fputc('}', out);
    }
    fputc(']', out);
}

static void cycles(const pp_report *r, FILE *out) {
    const pp_cycle_stats *c = &r->cycles;
    fprintf(out, ",\n\"cycles\": {\"batches\": %llu, \"complete\": %llu, ",
            (unsigned long long)c->batches, (unsigned long long)c->complete);
    summary(out, "cycle_ns", &c->cycle), fputs(", ", out);
    summary(out, "cycle_complete_ns", &c->cycle_complete), fputs(", ", out);
    summary(out, "e2e_ns", &c->e2e), fputs(", ", out);
    dbl(out, "throughput_bound_per_s", c->throughput_bound), fputs(", ", out);
    dbl(out, "throughput_bound_complete_per_s", c->throughput_bound_complete), fputs(", ", out);
    dbl(out, "throughput_measured_per_s", c->throughput_measured);
    fputc('}', out);
}

static void data_parallel(const pp_report *r, FILE *out) {
    fputs(",\n\"data_parallel\": [", out);
    for (size_t i = 0; i < r->ndp; i++) {
        const pp_dp_stats *v = &r->dp[i];
        fputs(i ? ",\n {\"stage\": " : "\n {\"stage\": ", out);
        str(out, r->stages[v->stage].name);
        fprintf(out, ", \"batches\": %llu, ", (unsigned long long)v->batches);
        summary(out, "partition_ns", &v->partition), fputs(", ", out);
        summary(out, "max_device_ns", &v->max_device), fputs(", ", out);
        summary(out, "merge_ns", &v->merge), fputs(", ", out);
        summary(out, "formula_ns", &v->formula), fputs(", ", out);
        summary(out, "measured_ns", &v->measured), fputs(", ", out);
        dbl(out, "imbalance", v->imbalance);
        fputs(", \"devices\": [", out);
        for (size_t d = 0; d < v->ndevices; d++) {
            const pp_dp_device *dd = &v->devices[d];
            fputs(d ? ", {\"device\": " : "{\"device\": ", out);
            str(out, r->devices[dd->device].name);
            fputs(", \"track\": ", out);
            if (dd->track != UINT32_MAX)
                str(out, r->tracks[dd->track].name);
            else
                fputs("null", out);
            fprintf(out, ", \"batches\": %llu, \"share_recorded\": %s, ",
                    (unsigned long long)dd->batches, dd->share_recorded ? "true" : "false");
            i64(out, "wall_ns", dd->wall_ns), fputs(", ", out);
            dbl(out, "share", dd->share), fputs(", ", out);
            dbl(out, "rate_per_s", dd->rate), fputs(", ", out);
            dbl(out, "suggested_share", dd->suggested_share);
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputc(']', out);
}

/* Present only when isolated times were given (analyze --lookup). */
static void contention(const pp_report *r, FILE *out) {
    if (!r->has_contention)
        return;
    fputs(",\n\"contention\": [", out);
    for (size_t i = 0; i < r->ncontention; i++) {
        const pp_contention_stats *v = &r->contention[i];
        fputs(i ? ",\n {\"stage\": " : "\n {\"stage\": ", out);
        str(out, r->stages[v->stage].name);
        fputs(", \"device\": ", out);
        str(out, r->devices[v->device].name);
        fprintf(out, ", \"simulated\": %s, \"execs\": %llu, ",
                r->devices[v->device].simulated ? "true" : "false", (unsigned long long)v->execs);
        i64(out, "mean_hw_ns", v->mean_hw_ns), fputs(", ", out);
        i64(out, "isolated_hw_ns", v->isolated_hw_ns), fputs(", ", out);
        dbl(out, "factor", v->factor);
        fputc('}', out);
    }
    fputc(']', out);
}

/* The wall decomposition per stage and device (sums in ns) and the clock
 * alignment of devices with clocks of their own. */
static void decomposition(const pp_report *r, FILE *out) {
    fputs(",\n\"decomposition\": [", out);
    for (size_t i = 0; i < r->ndecomp; i++) {
        const pp_decomp_stats *v = &r->decomp[i];
        const pp_wall_parts *t = &v->total;
        fputs(i ? ",\n {\"stage\": " : "\n {\"stage\": ", out);
        if (v->stage == AN_NONE)
            fputs("null", out);
        else
            str(out, r->stages[v->stage].name);
        fputs(", \"device\": ", out);
        str(out, r->devices[v->device].name);
        fprintf(out, ", \"simulated\": %s, \"execs\": %llu, \"split_execs\": %llu, "
                     "\"wall_ns\": %lld, \"submit_ns\": %lld, \"queue_ns\": %lld, "
                     "\"device_ns\": %lld, \"xfer_ns\": %lld, \"completion_ns\": %lld, "
                     "\"unattributed_ns\": %lld, \"contention_ns\": ",
                r->devices[v->device].simulated ? "true" : "false", (unsigned long long)v->execs,
                (unsigned long long)v->split, (long long)t->wall_ns, (long long)t->submit_ns,
                (long long)t->queue_ns, (long long)t->device_ns, (long long)t->xfer_ns,
                (long long)t->completion_ns, (long long)t->unattributed_ns);
        if (v->has_contention)
            fprintf(out, "%lld}", (long long)t->contention_ns);
        else
            fputs("null}", out);
    }
    fputs("],\n\"clocks\": [", out);
    for (size_t i = 0; i < r->nclocks; i++) {
        fputs(i ? ",\n {\"device\": " : "\n {\"device\": ", out);
        str(out, r->devices[r->clocks[i].device].name);
        fputs(", \"method\": ", out);
        str(out, r->clocks[i].method);
        fprintf(out, ", \"error_ns\": %lld}", (long long)r->clocks[i].error_ns);
    }
    fputc(']', out);
}

/* An op table; `named`: rows by op name (else by type, without "name"). */
static void op_rows(const pp_report *r, FILE *out, const char *key, const pp_op_stats *o,
                    size_t n, int named) {
    fprintf(out, ",\n\"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        const pp_op_stats *v = &o[i];
        fputs(i ? ",\n {\"device\": " : "\n {\"device\": ", out);
        str(out, r->devices[v->device].name);
        if (named) {
            fputs(", \"name\": ", out);
            str(out, v->name);
        }
        fputs(", \"type\": ", out);
        str(out, v->type);
        fputs(", \"exec_type\": ", out);
        str(out, v->exec_type);
        fprintf(out, ", \"count\": %llu, \"total_ns\": %lld, \"mean_ns\": %lld, \"p50_ns\": %lld, "
                     "\"p95_ns\": %lld, \"max_ns\": %lld, \"cpu_count\": %llu, "
                     "\"cpu_total_ns\": %lld}",
                (unsigned long long)v->count, (long long)v->total, (long long)v->mean,
                (long long)v->p50, (long long)v->p95, (long long)v->max,
                (unsigned long long)v->cpu_count, (long long)v->cpu_total);
    }
    fputc(']', out);
}

int pp_report_write_json(const pp_report *r, FILE *out) {
    const pp_window *w = &r->window;
    fputs("{\"schema\": \"pipeprof-report\", \"version\": 1,\n\"source\": ", out);
    str(out, r->source);
    fprintf(out, ",\n\"window\": {\"start_ns\": %lld, \"end_ns\": %lld, \"duration_ns\": %lld, "
                 "\"how\": ",
            (long long)w->start_ns, (long long)w->end_ns, (long long)(w->end_ns - w->start_ns));
    str(out, w->how);
    fprintf(out, "},\n\"data_loss\": {\"dropped_records\": %llu, \"truncated_bytes\": %llu, "
                 "\"unmatched_ends\": %llu},",
            (unsigned long long)r->meta.dropped_records,
            (unsigned long long)r->meta.truncated_bytes,
            (unsigned long long)r->meta.unmatched_ends);
    if (r->alignment) {
        fputs("\n\"clock_alignment\": {\"how\": ", out);
        str(out, r->alignment);
        fprintf(out, ", \"error_ns\": %lld},", (long long)r->meta.alignment_error_ns);
    }
    fputs("\n\"findings\": [", out);
    for (size_t i = 0; i < r->nfindings; i++) {
        fputs(i ? ",\n " : "\n ", out);
        str(out, r->findings[i]);
    }
    fputc(']', out);
    devices(r, out);
    framework(r, out);
    stages(r, out);
    cycles(r, out);
    data_parallel(r, out);
    contention(r, out);
    decomposition(r, out);
    op_rows(r, out, "ops", r->ops, r->nops, 1);
    op_rows(r, out, "op_types", r->op_types, r->nop_types, 0);
    fputs("\n}\n", out);
    return ferror(out) ? PP_EIO : PP_OK;
}

int pp_report_json(const pp_report *r, char **out, size_t *len) {
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return PP_ENOMEM;
    int rc = pp_report_write_json(r, f);
    /* The buffer and its size are only final after fclose; a failure there
     * is a failed allocation (memory streams do no I/O). */
    if (fclose(f) != 0 && rc == PP_OK)
        rc = PP_ENOMEM;
    if (rc != PP_OK) {
        free(buf);
        return rc == PP_EIO ? PP_ENOMEM : rc;
    }
    *out = buf;
    if (len)
        *len = n;
    return PP_OK;
}

void pp_report_json_free(char *json) {
    free(json);
}
