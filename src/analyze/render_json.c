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
        if (f->hw_known)
            dbl(out, "hw_utilization_pct", f->hw_utilization_pct);
        else
            fputs("\"hw_utilization_pct\": null", out);
        fputs(", ", out);
        fprintf(out, "\"bubbles\": %llu, ", (unsigned long long)f->bubbles);
        if (f->bubbles)
            dbl(out, "bubble_mean_ns", f->bubble_mean_ns);
        else
            fputs("\"bubble_mean_ns\": null", out);
        fputs(", ", out);
        if (f->hw_known)
            i64(out, "concurrency_penalty_ns", f->concurrency_penalty_ns);
        else
            fputs("\"concurrency_penalty_ns\": null", out);
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
        dbl(out, "penalty_pct_wall", v->penalty_pct_wall), fputs(", ", out);
        summary(out, "hold_ns", &v->hold), fputs(", ", out);
        i64(out, "blocked_ns", v->blocked_ns), fputs(", ", out);
        i64(out, "starved_ns", v->starved_ns);
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
        dbl(out, "imbalance", v->imbalance), fputs(", ", out);
        dbl(out, "imbalance_lo", v->imbalance_lo), fputs(", ", out);
        dbl(out, "imbalance_hi", v->imbalance_hi), fputs(", ", out);
        dbl(out, "parts_p", v->parts_p);
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
            fprintf(out, ", \"slowest\": %llu}", (unsigned long long)dd->slowest);
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

/* The scheduler split of host spans: its method (null: the trace carries
 * no scheduler figures) and a row per stage and span kind. */
static void sched(const pp_report *r, FILE *out) {
    fputs(",\n\"sched\": {\"method\": ", out);
    if (r->sched_method)
        str(out, r->sched_method);
    else
        fputs("null", out);
    const pp_sched_process *p = pp_report_sched_process(r);
    if (p) {
        fprintf(out, ", \"process\": {\"cpus_online\": %lld, \"cpus_allowed\": %lld, "
                     "\"affinity\": ", (long long)p->cpus_online, (long long)p->cpus_allowed);
        str(out, p->affinity);
        fprintf(out, ", \"period_ns\": %lld, \"sampler_cpu_ns\": %lld, \"sampled_ns\": %lld}",
                (long long)p->period_ns, (long long)p->sampler_cpu_ns, (long long)p->sampled_ns);
    } else {
        fputs(", \"process\": null", out);
    }
    fputs(", \"rows\": [", out);
    for (size_t i = 0; i < r->nsched; i++) {
        const pp_sched_stats *v = &r->sched[i];
        fputs(i ? ",\n {\"stage\": " : "\n {\"stage\": ", out);
        str(out, v->stage);
        fputs(", \"span\": ", out);
        str(out, v->span);
        fprintf(out, ", \"spans\": %llu, \"no_wait\": %llu, \"wall_ns\": %lld, \"cpu_ns\": %lld, "
                     "\"wait_ns\": %lld, \"blocked_ns\": %lld, \"voluntary\": %lld, "
                     "\"involuntary\": %lld, \"rival\": ",
                (unsigned long long)v->spans, (unsigned long long)v->no_wait,
                (long long)v->wall_ns, (long long)v->cpu_ns, (long long)v->wait_ns,
                (long long)v->blocked_ns, (long long)v->voluntary, (long long)v->involuntary);
        if (v->rival)
            str(out, v->rival);
        else
            fputs("null", out);
        fprintf(out, ", \"rival_cpu_ns\": %lld}", (long long)v->rival_cpu_ns);
    }
    fputs("]}", out);
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

/* A stage or device named by index: its name, or null. */
static void named(FILE *out, const char *key, uint32_t i, const pp_report *r, int stage) {
    fprintf(out, "\"%s\": ", key);
    if (i == AN_NONE) {
        fputs("null", out);
    } else if (stage) {
        str(out, r->stages[i].name);
    } else {
        char name[200];
        an_device_label(r, i, name, sizeof name);
        str(out, name);
    }
}

static void finding_action(const pp_report *r, const pp_finding *f, FILE *out) {
    const pp_finding_action *a = &f->action;
    fputs(", \"action\": {\"kind\": ", out);
    str(out, pp_finding_action_name(a->kind));
    fputs(", ", out), named(out, "stage", a->stage, r, 1);
    fputs(", ", out), named(out, "device", a->device, r, 0);
    fputs(", \"shares\": [", out);
    for (size_t k = 0; k < a->nshares; k++) {
        char buf[JSON_DOUBLE_MAX + 1];
        *json_put_double(buf, a->shares[k]) = '\0';
        fprintf(out, "%s%s", k ? ", " : "", buf);
    }
    fprintf(out, "], \"requests\": %u, ", a->requests);
    dbl(out, "factor", a->factor);
    const pp_finding_prediction *p = &f->prediction;
    static const char *const states[] = {"none", "predicted", "refused"};
    fputs("}, \"prediction\": {\"state\": ", out);
    str(out, states[p->state <= PP_PREDICTION_REFUSED ? p->state : 0]);
    fputs(", ", out), dbl(out, "change_pct", p->change_pct);
    fputs(", ", out), dbl(out, "lo_pct", p->lo_pct);
    fputs(", ", out), dbl(out, "hi_pct", p->hi_pct);
    fputs(", \"reason\": ", out);
    if (p->reason)
        str(out, p->reason);
    else
        fputs("null", out);
    fputc('}', out);
}

/* The devices on the host's CPU cores and their combined demand. */
static void host_cpu(const pp_report *r, FILE *out) {
    size_t n;
    double demand = an_host_cpu_demand(r, &n);
    fputs(",\n\"host_cpu\": {\"devices\": [", out);
    for (uint32_t d = 0, k = 0; d < r->ndevices; d++)
        if (an_device_on_host_cpu(r, d)) {
            fputs(k++ ? ", " : "", out);
            str(out, r->devices[d].name);
        }
    fputs("], ", out);
    dbl(out, "cores_busy", demand);
    fputc('}', out);
}

/* The rendered lines (`findings`, as in every version 1 report), then each
 * finding's fields (`finding_records`, docs/report-json.md). */
static void findings(const pp_report *r, FILE *out) {
    fputs("\n\"findings\": [", out);
    for (size_t i = 0; i < r->nfindings; i++) {
        fputs(i ? ",\n " : "\n ", out);
        str(out, r->findings[i]);
    }
    fputs("],\n\"finding_records\": [", out);
    for (size_t i = 0; i < r->nfindings; i++) {
        const pp_finding *f = &r->finding_list[i];
        fputs(i ? ",\n {\"kind\": " : "\n {\"kind\": ", out);
        str(out, pp_finding_kind_name(f->kind));
        fputs(", ", out), named(out, "stage", f->stage, r, 1);
        fputs(", ", out), named(out, "device", f->device, r, 0);
        fprintf(out, ", \"significant\": %s, \"figure\": ",
                f->significant < 0 ? "null" : f->significant ? "true" : "false");
        if (f->figure.name[0]) {
            fputs("{\"name\": ", out), str(out, f->figure.name);
            fputs(", \"unit\": ", out), str(out, f->figure.unit);
            fputs(", ", out), dbl(out, "est", f->figure.est);
            fputs(", ", out), dbl(out, "lo", f->figure.lo);
            fputs(", ", out), dbl(out, "hi", f->figure.hi);
            fputc('}', out);
        } else {
            fputs("null", out);
        }
        fputs(", \"text\": ", out), str(out, f->text);
        fputs(", \"sentence\": ", out), str(out, f->sentence);
        if (f->action.kind != PP_ACTION_NONE)
            finding_action(r, f, out);
        else
            fputs(", \"action\": null, \"prediction\": null", out);
        fputc('}', out);
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
    findings(r, out);
    host_cpu(r, out);
    devices(r, out);
    framework(r, out);
    stages(r, out);
    cycles(r, out);
    data_parallel(r, out);
    contention(r, out);
    decomposition(r, out);
    sched(r, out);
    op_rows(r, out, "ops", r->ops, r->nops, 1);
    op_rows(r, out, "op_types", r->op_types, r->nop_types, 0);
    fputs(",\n\"stage_ops\": [", out);
    for (size_t i = 0; i < r->nstage_ops; i++) {
        const pp_stage_op_stats *v = &r->stage_ops[i];
        fputs(i ? ",\n {\"stage\": " : "\n {\"stage\": ", out);
        str(out, r->stages[v->stage].name);
        fputs(", \"name\": ", out);
        str(out, v->name);
        fprintf(out, ", \"count\": %llu, \"total_ns\": %lld, \"self_ns\": %lld}",
                (unsigned long long)v->count, (long long)v->total_ns, (long long)v->self_ns);
    }
    fputc(']', out);
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
