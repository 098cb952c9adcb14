/* render_html_data.c — the report's figures for the HTML page: header,
 * findings, devices with their bubble histograms, stages with their latency
 * histograms, cycles with the first HTML_BATCH_ROWS batches, and the
 * data-parallel breakdown, the wall decomposition, the scheduler split and the bandwidth. Names of devices carry their simulated flag; the
 * page labels them. */
#include <stdlib.h>
#include <string.h>

#include "analyze/render_html.h"
#include "core/error.h"

static void summary(pp_outfile *o, const char *key, const pp_summary *s) {
    hj_key(o, key, 0);
    const char *k[] = {"n", "min", "mean", "p50", "p90", "p95", "p99", "p99_9", "max", "total"};
    int64_t v[] = {(int64_t)s->n, s->min, s->mean, s->p50, s->p90, s->p95, s->p99,
                   s->p999, s->max, s->total};
    hj_raw(o, "{");
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        hj_key(o, k[i], i == 0);
        hj_i64(o, v[i]);
    }
    hj_raw(o, "}");
}

static void num(pp_outfile *o, const char *key, int64_t v) {
    hj_key(o, key, 0);
    hj_i64(o, v);
}

static void ratio(pp_outfile *o, const char *key, double v) {
    hj_key(o, key, 0);
    hj_dbl(o, v);
}

static void header(const pp_report *r, pp_outfile *o) {
    hj_key(o, "source", 1);
    hj_str(o, r->source);
    hj_raw(o, ",\n\"window\": {");
    hj_key(o, "how", 1);
    hj_str(o, r->window.how);
    num(o, "start_ns", r->window.start_ns);
    num(o, "end_ns", r->window.end_ns);
    hj_raw(o, "},\n\"data_loss\": {");
    hj_key(o, "dropped_records", 1);
    hj_i64(o, (int64_t)r->meta.dropped_records);
    num(o, "truncated_bytes", (int64_t)r->meta.truncated_bytes);
    num(o, "unmatched_ends", (int64_t)r->meta.unmatched_ends);
    hj_raw(o, "}");
    if (r->alignment) {
        hj_raw(o, ",\n\"clock_alignment\": {");
        hj_key(o, "how", 1);
        hj_str(o, r->alignment);
        num(o, "error_ns", r->meta.alignment_error_ns);
        hj_raw(o, "}");
    }
    hj_raw(o, ",\n\"findings\": [");
    for (size_t i = 0; i < r->nfindings; i++) {
        hj_raw(o, i ? ",\n " : "\n ");
        hj_str(o, r->findings[i]);
    }
    hj_raw(o, "]");
}

static void devices(const pp_report *r, pp_outfile *o, uint64_t *hist) {
    hj_raw(o, ",\n\"devices\": [");
    for (size_t d = 0; d < r->ndevices; d++) {
        const pp_device_stats *v = &r->devices[d];
        const pp_gap_stats *g = &v->bubbles;
        hj_raw(o, d ? ",\n {" : "\n {");
        hj_key(o, "name", 1);
        hj_str(o, v->name);
        hj_raw(o, v->simulated ? ", \"simulated\": true" : ", \"simulated\": false");
        char quality[240];
        hj_key(o, "hw_quality", 0);
        an_hw_quality_text(v->hw_quality, quality, sizeof quality);
        hj_str(o, quality);
        num(o, "host", (v->hw_quality & PP_HW_HOST) != 0);
        num(o, "tracks", v->tracks);
        num(o, "execs", (int64_t)v->execs);
        num(o, "hw_unknown", (int64_t)v->hw_unknown);
        num(o, "busy_ns", v->busy_ns);
        num(o, "idle_ns", v->idle_ns);
        ratio(o, "wall_util", v->wall_util);
        ratio(o, "hw_util", v->hw_util);
        ratio(o, "hw_eff", v->hw_eff);
        ratio(o, "transfer_share", v->transfer_share);
        summary(o, "penalty_ns", &v->penalty);
        hj_raw(o, ", \"bubbles\": {");
        hj_key(o, "count", 1);
        hj_i64(o, (int64_t)g->count);
        num(o, "mean", g->mean);
        num(o, "p50", g->p50);
        num(o, "p95", g->p95);
        num(o, "max", g->max);
        num(o, "total", g->total);
        num(o, "leading_ns", g->leading_ns);
        num(o, "trailing_ns", g->trailing_ns);
        hj_raw(o, "}, \"bubble_hist\": ");
        memset(hist, 0, HTML_HIST_BINS * sizeof *hist);
        an_gap_cursor c = an_gaps_of(r, (uint32_t)d);
        for (an_gap g; an_gap_next(&c, &g);)
            hist[html_hist_bin(g.end - g.start)]++;
        hj_hist(o, hist);
        hj_raw(o, "}");
    }
    hj_raw(o, "]");
}

static void stages(const pp_report *r, pp_outfile *o, uint64_t *hist) {
    hj_raw(o, ",\n\"stages\": [");
    for (size_t s = 0; s < r->nstages; s++) {
        const pp_stage_stats *v = &r->stages[s];
        hj_raw(o, s ? ",\n {" : "\n {");
        hj_key(o, "name", 1);
        hj_str(o, v->name);
        hj_raw(o, v->data_parallel ? ", \"data_parallel\": true" : ", \"data_parallel\": false");
        hj_raw(o, v->exec_less ? ", \"exec_less\": true" : ", \"exec_less\": false");
        summary(o, "time_ns", &v->time);
        num(o, "bottleneck_count", (int64_t)v->bottleneck_count);
        num(o, "execs", (int64_t)v->execs);
        num(o, "hw_ns", v->hw_ns);
        num(o, "xfer_ns", v->xfer_ns);
        summary(o, "penalty_ns", &v->penalty);
        ratio(o, "penalty_pct_wall", v->penalty_pct_wall);
        summary(o, "hold_ns", &v->hold);
        num(o, "blocked_ns", v->blocked_ns);
        num(o, "starved_ns", v->starved_ns);
        hj_raw(o, ", \"time_hist\": ");
        memset(hist, 0, HTML_HIST_BINS * sizeof *hist);
        for (size_t i = 0; i < r->ntimes; i++)
            if (r->times[i].stage == s)
                hist[html_hist_bin(r->times[i].time_ns)]++;
        hj_hist(o, hist);
        hj_raw(o, "}");
    }
    hj_raw(o, "]");
}

/* The cycle summary and the first HTML_BATCH_ROWS batches, each with its
 * stage times (null where the batch lacks the stage): batch i's are
 * r->times[batch_time[i] .. batch_time[i + 1]), in stage order. */
static void cycles(const pp_report *r, pp_outfile *o) {
    const pp_cycle_stats *c = &r->cycles;
    hj_raw(o, ",\n\"cycles\": {");
    hj_key(o, "batches", 1);
    hj_i64(o, (int64_t)c->batches);
    num(o, "complete", (int64_t)c->complete);
    summary(o, "cycle_ns", &c->cycle);
    summary(o, "e2e_ns", &c->e2e);
    ratio(o, "throughput_bound_per_s", c->throughput_bound);
    ratio(o, "throughput_measured_per_s", c->throughput_measured);
    num(o, "rows_cap", HTML_BATCH_ROWS);
    hj_raw(o, ",\n\"rows\": [");
    size_t rows = r->nbatches < HTML_BATCH_ROWS ? r->nbatches : HTML_BATCH_ROWS;
    for (size_t i = 0; i < rows; i++) {
        pp_batch_stats bs = an_batch_stats(r, i), *b = &bs;
        hj_raw(o, i ? ",\n [" : "\n [");
        hj_i64(o, b->batch);
        hj_raw(o, b->complete ? ", true, " : ", false, ");
        hj_i64(o, b->cycle_ns);
        hj_raw(o, ", ");
        hj_i64(o, b->bottleneck);
        hj_raw(o, ", ");
        hj_i64(o, b->e2e_ns);
        hj_raw(o, ", [");
        size_t t = r->batch_time[i], end = r->batch_time[i + 1];
        for (size_t s = 0; s < r->nstages; s++) {
            hj_raw(o, s ? ", " : "");
            if (t < end && r->times[t].stage == s)
                hj_i64(o, r->times[t++].time_ns);
            else
                hj_raw(o, "null");
        }
        hj_raw(o, "]]");
    }
    hj_raw(o, "]}");
}

static void data_parallel(const pp_report *r, pp_outfile *o) {
    hj_raw(o, ",\n\"data_parallel\": [");
    for (size_t i = 0; i < r->ndp; i++) {
        const pp_dp_stats *v = &r->dp[i];
        hj_raw(o, i ? ",\n {" : "\n {");
        hj_key(o, "stage", 1);
        hj_str(o, r->stages[v->stage].name);
        num(o, "batches", (int64_t)v->batches);
        summary(o, "partition_ns", &v->partition);
        summary(o, "max_device_ns", &v->max_device);
        summary(o, "merge_ns", &v->merge);
        summary(o, "formula_ns", &v->formula);
        summary(o, "measured_ns", &v->measured);
        ratio(o, "imbalance", v->imbalance);
        ratio(o, "imbalance_lo", v->imbalance_lo);
        ratio(o, "imbalance_hi", v->imbalance_hi);
        ratio(o, "parts_p", v->parts_p);
        hj_raw(o, ", \"devices\": [");
        for (size_t d = 0; d < v->ndevices; d++) {
            const pp_dp_device *dd = &v->devices[d];
            hj_raw(o, d ? ", {" : "{");
            hj_key(o, "device", 1);
            hj_i64(o, dd->device);
            hj_key(o, "track", 0);
            if (dd->track != UINT32_MAX)
                hj_str(o, r->tracks[dd->track].name);
            else
                hj_raw(o, "null");
            num(o, "batches", (int64_t)dd->batches);
            num(o, "share_recorded", dd->share_recorded);
            num(o, "wall_ns", dd->wall_ns);
            ratio(o, "share", dd->share);
            ratio(o, "rate_per_s", dd->rate);
            ratio(o, "suggested_share", dd->suggested_share);
            num(o, "slowest", (int64_t)dd->slowest);
            hj_raw(o, "}");
        }
        hj_raw(o, "]}");
    }
    hj_raw(o, "]");
}

/* The wall decomposition per stage and device (sums in ns; stage -1: none)
 * and the clock alignment of devices with clocks of their own. */
static void decomposition(const pp_report *r, pp_outfile *o) {
    hj_raw(o, ",\n\"decomposition\": [");
    for (size_t i = 0; i < r->ndecomp; i++) {
        const pp_decomp_stats *v = &r->decomp[i];
        const pp_wall_parts *t = &v->total;
        hj_raw(o, i ? ",\n {" : "\n {");
        hj_key(o, "stage", 1);
        hj_i64(o, v->stage == AN_NONE ? -1 : (int64_t)v->stage);
        num(o, "device", v->device);
        num(o, "execs", (int64_t)v->execs);
        num(o, "split_execs", (int64_t)v->split);
        num(o, "wall_ns", t->wall_ns);
        num(o, "submit_ns", t->submit_ns);
        num(o, "queue_ns", t->queue_ns);
        num(o, "device_ns", t->device_ns);
        num(o, "xfer_ns", t->xfer_ns);
        num(o, "completion_ns", t->completion_ns);
        num(o, "unattributed_ns", t->unattributed_ns);
        hj_raw(o, "}");
    }
    hj_raw(o, "],\n\"clocks\": [");
    for (size_t i = 0; i < r->nclocks; i++) {
        hj_raw(o, i ? ",\n {" : "\n {");
        hj_key(o, "device", 1);
        hj_i64(o, r->clocks[i].device);
        hj_key(o, "method", 0);
        hj_str(o, r->clocks[i].method);
        num(o, "error_ns", r->clocks[i].error_ns);
        hj_raw(o, "}");
    }
    hj_raw(o, "]");
}

/* The scheduler split of host spans (sums in ns), and its method (null:
 * the trace carries none). */
static void sched(const pp_report *r, pp_outfile *o) {
    hj_raw(o, ",\n\"sched\": {");
    hj_key(o, "method", 1);
    if (r->sched_method)
        hj_str(o, r->sched_method);
    else
        hj_raw(o, "null");
    hj_raw(o, ", \"rows\": [");
    for (size_t i = 0; i < r->nsched; i++) {
        const pp_sched_stats *v = &r->sched[i];
        hj_raw(o, i ? ",\n {" : "\n {");
        hj_key(o, "stage", 1);
        hj_str(o, v->stage);
        hj_key(o, "span", 0);
        hj_str(o, v->span);
        num(o, "spans", (int64_t)v->spans);
        num(o, "no_wait", (int64_t)v->no_wait);
        num(o, "wall_ns", v->wall_ns);
        num(o, "cpu_ns", v->cpu_ns);
        num(o, "wait_ns", v->wait_ns);
        num(o, "blocked_ns", v->blocked_ns);
        num(o, "voluntary", v->voluntary);
        num(o, "involuntary", v->involuntary);
        hj_raw(o, "}");
    }
    hj_raw(o, "]}");
}

static void bandwidth_row(pp_outfile *o, int *first, const char *scope, const char *name,
                          const pp_bandwidth *b) {
    if (b->execs == 0)
        return;
    hj_raw(o, *first ? "\n {" : ",\n {");
    *first = 0;
    hj_key(o, "scope", 1);
    hj_str(o, scope);
    hj_key(o, "name", 0);
    hj_str(o, name);
    num(o, "execs", (int64_t)b->execs);
    num(o, "read_bytes", (int64_t)b->read_bytes);
    num(o, "write_bytes", (int64_t)b->write_bytes);
    num(o, "busy_ns", b->busy_ns);
    num(o, "xfer_ns", b->xfer_ns);
    ratio(o, "read_gbps", b->read_gbps);
    ratio(o, "write_gbps", b->write_gbps);
    ratio(o, "total_gbps", b->total_gbps);
    ratio(o, "xfer_gbps", b->xfer_gbps);
    hj_raw(o, "}");
}

/* The ops inside host stages, stage by stage, by self time. */
static void stage_ops(const pp_report *r, pp_outfile *o) {
    hj_raw(o, ",\n\"stage_ops\": [");
    for (size_t i = 0; i < r->nstage_ops; i++) {
        const pp_stage_op_stats *v = &r->stage_ops[i];
        hj_raw(o, i ? ",\n {" : "\n {");
        hj_key(o, "stage", 1);
        hj_i64(o, v->stage);
        hj_key(o, "name", 0);
        hj_str(o, v->name);
        num(o, "count", (int64_t)v->count);
        num(o, "total_ns", v->total_ns);
        num(o, "self_ns", v->self_ns);
        hj_raw(o, "}");
    }
    hj_raw(o, "]");
}

/* Bandwidth rows of the devices (labeled), tracks and stages that moved bytes. */
static void bandwidth(const pp_report *r, pp_outfile *o) {
    char name[160];
    int first = 1;
    hj_raw(o, ",\n\"bandwidth\": [");
    for (uint32_t d = 0; d < r->ndevices; d++) {
        an_device_label(r, d, name, sizeof name);
        bandwidth_row(o, &first, "device", name, &r->devices[d].bandwidth);
    }
    for (size_t t = 0; t < r->ntracks; t++)
        bandwidth_row(o, &first, "track", r->tracks[t].name, &r->tracks[t].bandwidth);
    for (size_t s = 0; s < r->nstages; s++)
        bandwidth_row(o, &first, "stage", r->stages[s].name, &r->stages[s].bandwidth);
    hj_raw(o, "]");
}

int html_write_report(const pp_report *r, pp_outfile *o, pp_error *err) {
    uint64_t *hist = malloc(HTML_HIST_BINS * sizeof *hist);
    if (!hist)
        return pp_set_error(err, PP_ENOMEM, "HTML report: out of memory");
    header(r, o);
    devices(r, o, hist);
    stages(r, o, hist);
    cycles(r, o);
    data_parallel(r, o);
    decomposition(r, o);
    sched(r, o);
    bandwidth(r, o);
    stage_ops(r, o);
    free(hist);
    return PP_OK;
}
