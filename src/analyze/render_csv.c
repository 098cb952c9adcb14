/* render_csv.c — the report's tables as CSV files for pandas or DuckDB:
 * devices.csv, tracks.csv, stages.csv, batches.csv (one row per batch, with
 * its stage times in stage_times form: one row per (batch, stage)) and
 * gaps.csv (every bubble of every device), ops.csv and op_types.csv (the op
 * statistics by name and by type), decomposition.csv (the wall
 * decomposition per stage and device) and bandwidth.csv (bytes moved per
 * device, track and stage), sched.csv (the scheduler split of host
 * spans), stage_ops.csv (the ops inside host stages), findings.csv
 * (the findings as data) and pipelineprofiler.csv (the PipelineProfiler
 * framework's three figures per device and per stage on a device). Each
 * file is written atomically. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "io/outfile.h"

static void put(pp_outfile *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void put(pp_outfile *o, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        pp_outfile_write(o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* A CSV field: quoted, inner quotes doubled. */
static void field(pp_outfile *o, const char *s) {
    pp_outfile_write(o, "\"", 1);
    for (const char *q; (q = strchr(s, '"')); s = q + 1) {
        pp_outfile_write(o, s, (size_t)(q - s) + 1);
        pp_outfile_write(o, "\"", 1);
    }
    pp_outfile_write(o, s, strlen(s));
    pp_outfile_write(o, "\"", 1);
}

static void devices(const pp_report *r, pp_outfile *o) {
    put(o, "device,simulated,tracks,execs,hw_unknown,busy_ns,idle_ns,wall_util,hw_util,hw_eff,"
           "transfer_share,penalty_mean_ns,penalty_p95_ns,penalty_total_ns,penalty_pct_wall,"
           "bubbles,bubble_mean_ns,bubble_p50_ns,bubble_p95_ns,bubble_max_ns,bubble_total_ns,"
           "leading_idle_ns,trailing_idle_ns,hw_quality,hw_above_wall\n");
    for (size_t d = 0; d < r->ndevices; d++) {
        const pp_device_stats *v = &r->devices[d];
        const pp_gap_stats *g = &v->bubbles;
        char quality[80];
        an_hw_quality_words(v->hw_quality, ';', quality, sizeof quality);
        field(o, v->name);
        put(o, ",%d,%u,%llu,%llu,%lld,%lld,%.9g,%.9g,%.9g,%.9g,%lld,%lld,%lld,%.9g,%llu,%lld,%lld,"
               "%lld,%lld,%lld,%lld,%lld,%s,%llu\n",
            v->simulated, v->tracks, (unsigned long long)v->execs,
            (unsigned long long)v->hw_unknown, (long long)v->busy_ns, (long long)v->idle_ns,
            v->wall_util, v->hw_util, v->hw_eff, v->transfer_share, (long long)v->penalty.mean,
            (long long)v->penalty.p95, (long long)v->penalty.total, v->penalty_pct_wall,
            (unsigned long long)g->count, (long long)g->mean, (long long)g->p50,
            (long long)g->p95, (long long)g->max, (long long)g->total, (long long)g->leading_ns,
            (long long)g->trailing_ns, quality, (unsigned long long)v->hw_above_wall);
    }
}

static void tracks(const pp_report *r, pp_outfile *o) {
    put(o, "track,device,execs,hw_unknown,busy_ns,hw_util,bubbles,bubble_mean_ns,bubble_p95_ns,"
           "bubble_max_ns,bubble_total_ns,leading_idle_ns,trailing_idle_ns\n");
    for (size_t t = 0; t < r->ntracks; t++) {
        const pp_track_stats *v = &r->tracks[t];
        const pp_gap_stats *g = &v->bubbles;
        field(o, v->name);
        put(o, ",");
        field(o, r->devices[v->device].name);
        put(o, ",%llu,%llu,%lld,%.9g,%llu,%lld,%lld,%lld,%lld,%lld,%lld\n",
            (unsigned long long)v->execs, (unsigned long long)v->hw_unknown,
            (long long)v->busy_ns, v->hw_util, (unsigned long long)g->count, (long long)g->mean,
            (long long)g->p95, (long long)g->max, (long long)g->total, (long long)g->leading_ns,
            (long long)g->trailing_ns);
    }
}

static void stages(const pp_report *r, pp_outfile *o) {
    put(o, "stage,order,data_parallel,exec_less,batches,time_min_ns,time_mean_ns,time_p50_ns,"
           "time_p90_ns,time_p95_ns,time_p99_ns,time_max_ns,bottleneck_count,execs,hw_unknown,"
           "hw_ns,xfer_ns,penalty_mean_ns,penalty_p95_ns,penalty_total_ns,penalty_pct_wall,kind,"
           "hold_mean_ns,hold_p95_ns,hold_total_ns,blocked_ns,starved_ns\n");
    for (size_t s = 0; s < r->nstages; s++) {
        const pp_stage_stats *v = &r->stages[s];
        const pp_summary *t = &v->time;
        field(o, v->name);
        put(o, ",%zu,%d,%d,%llu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%llu,%llu,%llu,%lld,%lld,%lld,"
               "%lld,%lld,%.9g,%s,%lld,%lld,%lld,%lld,%lld\n",
            s, v->data_parallel, v->exec_less, (unsigned long long)t->n, (long long)t->min,
            (long long)t->mean, (long long)t->p50, (long long)t->p90, (long long)t->p95,
            (long long)t->p99, (long long)t->max, (unsigned long long)v->bottleneck_count,
            (unsigned long long)v->execs, (unsigned long long)v->hw_unknown,
            (long long)v->hw_ns, (long long)v->xfer_ns, (long long)v->penalty.mean,
            (long long)v->penalty.p95, (long long)v->penalty.total, v->penalty_pct_wall,
            v->data_parallel ? "dp" : v->exec_less ? "host" : "device", (long long)v->hold.mean,
            (long long)v->hold.p95, (long long)v->hold.total, (long long)v->blocked_ns,
            (long long)v->starved_ns);
    }
}

/* One row per (batch, stage) with the batch's cycle figures repeated, so a
 * reader can pivot either way without a join. */
static void batches(const pp_report *r, pp_outfile *o) {
    put(o, "batch,complete,cycle_ns,bottleneck,e2e_ns,stage,stage_time_ns,measured_ns\n");
    for (size_t i = 0; i < r->nbatches; i++) {
        pp_batch_stats bs = an_batch_stats(r, i), *b = &bs;
        for (size_t t = r->batch_time[i]; t < r->batch_time[i + 1]; t++) {
            pp_stage_time st = an_stage_time(r, t);
            put(o, "%lld,%d,%lld,", (long long)b->batch, b->complete, (long long)b->cycle_ns);
            field(o, r->stages[b->bottleneck].name);
            put(o, ",%lld,", (long long)b->e2e_ns);
            field(o, r->stages[st.stage].name);
            put(o, ",%lld,%lld\n", (long long)st.time_ns, (long long)st.measured_ns);
        }
    }
}

static void gaps(const pp_report *r, pp_outfile *o) {
    put(o, "device,start_ns,end_ns,gap_ns\n");
    for (uint32_t d = 0; d < r->ndevices; d++) {
        an_gap_cursor c = an_gaps_of(r, d);
        for (an_gap g; an_gap_next(&c, &g);) {
            field(o, r->devices[d].name);
            put(o, ",%lld,%lld,%lld\n", (long long)g.start, (long long)g.end,
                (long long)(g.end - g.start));
        }
    }
}

static void framework(const pp_report *r, pp_outfile *o) {
    put(o, "device,stage,tasks,wall_ns,hw_ns,hw_utilization_pct,bubbles,bubble_mean_ns,"
           "concurrency_penalty_ns\n");
    for (size_t i = 0; i < r->nframework; i++) {
        const pp_framework_stats *f = &r->framework[i];
        field(o, r->devices[f->device].name);
        put(o, ",");
        if (f->stage != UINT32_MAX)
            field(o, r->stage_names[f->stage]);
        put(o, ",%llu,%lld,%lld,", (unsigned long long)f->tasks, (long long)f->wall_ns,
            (long long)f->hw_ns);
        if (f->hw_known)
            put(o, "%.17g", f->hw_utilization_pct);
        put(o, ",%llu,", (unsigned long long)f->bubbles);
        if (f->bubbles)
            put(o, "%.17g", f->bubble_mean_ns);
        put(o, ",");
        if (f->hw_known)
            put(o, "%lld", (long long)f->concurrency_penalty_ns);
        put(o, "\n");
    }
}

/* An op table: by name (ops.csv) or by type (op_types.csv, without name). */
static void op_rows(const pp_report *r, pp_outfile *o, const pp_op_stats *v, size_t n,
                    int named) {
    put(o, "device,%stype,exec_type,count,total_ns,mean_ns,p50_ns,p95_ns,max_ns,cpu_count,"
           "cpu_total_ns\n", named ? "name," : "");
    for (size_t i = 0; i < n; i++) {
        field(o, r->devices[v[i].device].name);
        put(o, ",");
        if (named) {
            field(o, v[i].name);
            put(o, ",");
        }
        field(o, v[i].type);
        put(o, ",");
        field(o, v[i].exec_type);
        put(o, ",%llu,%lld,%lld,%lld,%lld,%lld,%llu,%lld\n", (unsigned long long)v[i].count,
            (long long)v[i].total, (long long)v[i].mean, (long long)v[i].p50,
            (long long)v[i].p95, (long long)v[i].max, (unsigned long long)v[i].cpu_count,
            (long long)v[i].cpu_total);
    }
}

static void ops(const pp_report *r, pp_outfile *o) {
    op_rows(r, o, r->ops, r->nops, 1);
}

static void op_types(const pp_report *r, pp_outfile *o) {
    op_rows(r, o, r->op_types, r->nop_types, 0);
}

/* The wall decomposition: one row per stage and device, sums in ns;
 * contention_ns is empty where no isolated time was given. */
static void decomposition(const pp_report *r, pp_outfile *o) {
    put(o, "stage,device,simulated,execs,split_execs,wall_ns,submit_ns,queue_ns,device_ns,xfer_ns,"
           "completion_ns,unattributed_ns,contention_ns\n");
    for (size_t i = 0; i < r->ndecomp; i++) {
        const pp_decomp_stats *v = &r->decomp[i];
        const pp_wall_parts *t = &v->total;
        field(o, v->stage == AN_NONE ? "" : r->stages[v->stage].name);
        put(o, ",");
        field(o, r->devices[v->device].name);
        put(o, ",%d,%llu,%llu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,", r->devices[v->device].simulated,
            (unsigned long long)v->execs, (unsigned long long)v->split, (long long)t->wall_ns,
            (long long)t->submit_ns, (long long)t->queue_ns, (long long)t->device_ns,
            (long long)t->xfer_ns, (long long)t->completion_ns, (long long)t->unattributed_ns);
        if (v->has_contention)
            put(o, "%lld", (long long)t->contention_ns);
        put(o, "\n");
    }
}

static void bandwidth_row(pp_outfile *o, const char *scope, const char *name,
                          const pp_bandwidth *b) {
    if (b->execs == 0)
        return;
    put(o, "%s,", scope);
    field(o, name);
    put(o, ",%llu,%llu,%llu,%lld,%lld,%.9g,%.9g,%.9g,%.9g\n", (unsigned long long)b->execs,
        (unsigned long long)b->read_bytes, (unsigned long long)b->write_bytes,
        (long long)b->busy_ns, (long long)b->xfer_ns, b->read_gbps, b->write_gbps,
        b->total_gbps, b->xfer_gbps);
}

/* Bandwidth: one row per device, track and stage whose execs carry bytes;
 * rates in GB/s (10^9 bytes). Devices are named as tracks are, "NPU
 * (simulated)", so the one name column labels simulated rows. */
static void bandwidth(const pp_report *r, pp_outfile *o) {
    char name[160];
    put(o, "scope,name,execs,read_bytes,write_bytes,busy_ns,xfer_ns,read_gbps,write_gbps,"
           "total_gbps,xfer_gbps\n");
    for (uint32_t d = 0; d < r->ndevices; d++) {
        an_device_label(r, d, name, sizeof name);
        bandwidth_row(o, "device", name, &r->devices[d].bandwidth);
    }
    for (size_t t = 0; t < r->ntracks; t++)
        bandwidth_row(o, "track", r->tracks[t].name, &r->tracks[t].bandwidth);
    for (size_t s = 0; s < r->nstages; s++)
        bandwidth_row(o, "stage", r->stages[s].name, &r->stages[s].bandwidth);
}

/* The scheduler split of host spans (sums in ns; cpu + wait + blocked =
 * wall); only the header for a trace without scheduler figures. */
static void sched(const pp_report *r, pp_outfile *o) {
    put(o, "stage,span,method,spans,no_wait,wall_ns,cpu_ns,wait_ns,blocked_ns,voluntary,"
           "involuntary,rival,rival_cpu_ns\n");
    for (size_t i = 0; i < r->nsched; i++) {
        const pp_sched_stats *v = &r->sched[i];
        field(o, v->stage);
        pp_outfile_write(o, ",", 1);
        field(o, v->span);
        pp_outfile_write(o, ",", 1);
        field(o, r->sched_method);
        put(o, ",%llu,%llu,%lld,%lld,%lld,%lld,%lld,%lld,", (unsigned long long)v->spans,
            (unsigned long long)v->no_wait, (long long)v->wall_ns, (long long)v->cpu_ns,
            (long long)v->wait_ns, (long long)v->blocked_ns, (long long)v->voluntary,
            (long long)v->involuntary);
        field(o, v->rival ? v->rival : "");
        put(o, ",%lld\n", (long long)v->rival_cpu_ns);
    }
}

/* The ops inside host stages, stage by stage, by self time. */
static void stage_ops(const pp_report *r, pp_outfile *o) {
    put(o, "stage,name,count,total_ns,self_ns\n");
    for (size_t i = 0; i < r->nstage_ops; i++) {
        const pp_stage_op_stats *v = &r->stage_ops[i];
        field(o, r->stages[v->stage].name);
        put(o, ",");
        field(o, v->name);
        put(o, ",%llu,%lld,%lld\n", (unsigned long long)v->count, (long long)v->total_ns,
            (long long)v->self_ns);
    }
}

/* The findings as data (docs/analysis.md, "Findings"), one row each in
 * rank order; `text` is the rendered line. */
static void findings(const pp_report *r, pp_outfile *o) {
    static const char *const states[] = {"none", "predicted", "refused"};
    put(o, "rank,kind,stage,device,significant,figure,unit,est,lo,hi,action,prediction,"
           "change_pct,lo_pct,hi_pct,text\n");
    for (size_t i = 0; i < r->nfindings; i++) {
        const pp_finding *f = &r->finding_list[i];
        char dev[160] = "";
        if (f->device != AN_NONE)
            an_device_label(r, f->device, dev, sizeof dev);
        put(o, "%zu,%s,", i + 1, pp_finding_kind_name(f->kind));
        field(o, f->stage != AN_NONE ? r->stages[f->stage].name : "");
        put(o, ",");
        field(o, dev);
        put(o, ",%s,%s,%s,", f->significant < 0 ? "" : f->significant ? "1" : "0",
            f->figure.name, f->figure.unit);
        if (f->figure.name[0])
            put(o, "%.9g,%.9g,%.9g", f->figure.est, f->figure.lo, f->figure.hi);
        else
            put(o, ",,");
        int advice = f->action.kind != PP_ACTION_NONE;
        put(o, ",%s,%s,", advice ? pp_finding_action_name(f->action.kind) : "",
            advice ? states[f->prediction.state <= PP_PREDICTION_REFUSED ? f->prediction.state : 0]
                   : "");
        if (advice && f->prediction.state == PP_PREDICTION_PREDICTED)
            put(o, "%.9g,%.9g,%.9g,", f->prediction.change_pct, f->prediction.lo_pct,
                f->prediction.hi_pct);
        else
            put(o, ",,,");
        field(o, f->text);
        put(o, "\n");
    }
}

int pp_report_write_csv(const pp_report *r, const char *dir, pp_error *err) {
    static const struct {
        const char *name;
        void (*write)(const pp_report *, pp_outfile *);
    } files[] = {{"devices.csv", devices}, {"tracks.csv", tracks}, {"stages.csv", stages},
                 {"batches.csv", batches}, {"gaps.csv", gaps},      {"ops.csv", ops},
                 {"op_types.csv", op_types}, {"decomposition.csv", decomposition},
                 {"bandwidth.csv", bandwidth}, {"sched.csv", sched},
                 {"stage_ops.csv", stage_ops}, {"findings.csv", findings},
                 {"pipelineprofiler.csv", framework}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *path = an_strdupf("%s/%s", dir, files[i].name);
        if (!path)
            return pp_set_error(err, PP_ENOMEM, "out of memory");
        pp_outfile o;
        int rc = pp_outfile_open(&o, path, err);
        free(path);
        if (rc != PP_OK)
            return rc;
        files[i].write(r, &o);
        rc = pp_outfile_commit(&o, err);
        if (rc != PP_OK)
            return rc;
    }
    return PP_OK;
}
