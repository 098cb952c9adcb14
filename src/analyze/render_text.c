/* render_text.c — the report for people, 80 columns wide: header (file, W,
 * data loss, simulated devices), findings, then the device, track, stage,
 * cycle, data-parallel, contention, decomposition, scheduler split, bandwidth and op tables. Every line fits 80 columns and no
 * name is ever cut: a name longer than its column stands on a line of its
 * own, and its figures follow on the next line under the columns. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"

#define WIDTH 80

/* Labels are built here: a name is printed whole whatever its length, so
 * the buffer grows to fit it. A growth that fails is remembered and
 * reported (PP_ENOMEM) once the report is written. */
typedef struct {
    char *s;
    size_t cap;
    int nomem;
} label_buf;

/* b's buffer with room for `need` bytes, or NULL (remembered) without memory. */
static char *room(label_buf *b, size_t need) {
    if (need > b->cap) {
        char *s = realloc(b->s, need);
        if (!s) {
            b->nomem = 1;
            return NULL;
        }
        b->s = s;
        b->cap = need;
    }
    return b->s;
}

/* `before`, device d's label (an_device_label), then `after`; "" when
 * there is no memory for it. */
static const char *device_label(label_buf *b, const pp_report *r, uint32_t d, const char *before,
                                const char *after) {
    size_t pre = strlen(before), n = an_device_label(r, d, NULL, 0), post = strlen(after);
    if (!room(b, pre + n + post + 1))
        return "";
    memcpy(b->s, before, pre);
    an_device_label(r, d, b->s + pre, n + 1);
    memcpy(b->s + pre + n, after, post + 1);
    return b->s;
}

/* A data-parallel part's label (an_dp_part_label), or "" without memory. */
static const char *part_label(label_buf *b, const pp_report *r, const pp_dp_device *part) {
    size_t need = an_dp_part_label(r, part, NULL, 0) + 1;
    if (!room(b, need))
        return "";
    an_dp_part_label(r, part, b->s, need);
    return b->s;
}

/* Writes `text` wrapped at WIDTH, first line after `lead`, the rest
 * indented under it (by 4 when the lead is a long name). */
static void wrap(FILE *out, const char *lead, const char *text) {
    size_t col = strlen(lead), indent = col > WIDTH / 2 ? 4 : col;
    fputs(lead, out);
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > indent && col + 1 + word > WIDTH) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fwrite(text, 1, word, out);
        col += word;
        text += word;
        while (*text == ' ')
            text++;
    }
    fputc('\n', out);
}

/* Writes `name` padded to `width`; a longer one alone on its line, then
 * `width` spaces on the next, where its figures go. */
static void name_col(FILE *out, const char *indent, const char *name, int width) {
    if ((int)strlen(name) <= width)
        fprintf(out, "%s%-*s", indent, width, name);
    else
        fprintf(out, "%s%s\n%s%*s", indent, name, indent, width, "");
}

static const char *ns(int64_t v, char *buf) {
    an_format_ns(v, buf, 16);
    return buf;
}

static void header(const pp_report *r, FILE *out, label_buf *lb) {
    char b[16], text[512];
    const pp_window *w = &r->window;
    fprintf(out, "pipeprof analyze: %s\n", r->source);
    snprintf(text, sizeof text, "%s (%s), %lld .. %lld ns", ns(w->end_ns - w->start_ns, b),
             w->how, (long long)w->start_ns, (long long)w->end_ns);
    wrap(out, "window: ", text);
    const pp_model_meta *mm = &r->meta;
    if (mm->dropped_records || mm->truncated_bytes || mm->unmatched_ends) {
        snprintf(text, sizeof text, "%llu dropped records, %llu truncated bytes",
                 (unsigned long long)mm->dropped_records,
                 (unsigned long long)mm->truncated_bytes);
        if (mm->unmatched_ends)
            snprintf(text + strlen(text), sizeof text - strlen(text),
                     ", %llu unmatched begin/end pairs", (unsigned long long)mm->unmatched_ends);
        wrap(out, "data loss: ", text);
    } else {
        fprintf(out, "data loss: none\n");
    }
    if (r->alignment) {
        char b2[16];
        snprintf(text, sizeof text, "%s; error bound %s", r->alignment,
                 r->meta.alignment_error_ns < 0 ? "not known" : ns(r->meta.alignment_error_ns, b2));
        wrap(out, "merged, clock alignment: ", text);
    }
    char *list = NULL; /* names of any length, so a list of any length */
    size_t len = 0, listed = 0;
    FILE *f = open_memstream(&list, &len);
    if (!f) {
        lb->nomem = 1;
        return;
    }
    for (uint32_t d = 0; d < r->ndevices; d++)
        if (r->devices[d].simulated)
            fputs(device_label(lb, r, d, listed++ ? ", " : "", ""), f);
    if (fclose(f) != 0)
        lb->nomem = 1;
    else if (listed)
        wrap(out, "simulated devices: ", list);
    free(list);
}

static void devices(const pp_report *r, FILE *out, label_buf *lb) {
    char b1[16], b2[16], b3[16];
    fprintf(out, "\nDevices (busy%% = union over streams / W; hw%% = mean over its streams of "
                 "hw / W;\n eff%%, xfer%%, pen%% over execs with known hw; * = hw not per run, "
                 "see below)\n");
    fprintf(out, "%-18s %6s %5s %5s %5s %5s %5s %7s %10s\n", "device", "execs", "busy%",
            "hw%", "eff%", "xfer%", "pen%", "bubbles", "bub.mean");
    for (uint32_t d = 0; d < r->ndevices; d++) {
        const pp_device_stats *v = &r->devices[d];
        int starred = (v->hw_quality & (PP_HW_RUNNING_MEAN | PP_HW_ABOVE_WALL | PP_HW_IS_WALL)) != 0;
        name_col(out, "", device_label(lb, r, d, "", starred ? "*" : ""), 18);
        if ((v->hw_quality & PP_HW_HOST) && v->hw_util == 0) /* host work only: no hw at all */
            fprintf(out, " %6llu %5.1f %5s %5s %5s %5s %7llu %10s\n",
                    (unsigned long long)v->execs, 100 * v->wall_util, "-", "-", "-", "-",
                    (unsigned long long)v->bubbles.count, ns(v->bubbles.mean, b1));
        else
            fprintf(out, " %6llu %5.1f %5.1f %5.1f %5.1f %5.1f %7llu %10s\n",
                    (unsigned long long)v->execs, 100 * v->wall_util, 100 * v->hw_util,
                    100 * v->hw_eff, 100 * v->transfer_share, v->penalty_pct_wall,
                    (unsigned long long)v->bubbles.count, ns(v->bubbles.mean, b1));
    }
    fprintf(out, "%-20s %10s %10s %10s %10s %10s\n", "device", "busy", "idle", "leading",
            "trailing", "bub.max");
    for (uint32_t d = 0; d < r->ndevices; d++) {
        const pp_device_stats *v = &r->devices[d];
        char b4[16], b5[16];
        name_col(out, "", device_label(lb, r, d, "", ""), 20);
        fprintf(out, " %10s %10s %10s %10s %10s\n", ns(v->busy_ns, b1),
                ns(v->idle_ns, b2), ns(v->bubbles.leading_ns, b3),
                ns(v->bubbles.trailing_ns, b4), ns(v->bubbles.max, b5));
    }
    fprintf(out, "\n%-28s %6s %5s %5s %7s %10s %10s\n", "track", "execs", "busy%", "hw%",
            "bubbles", "bub.mean", "bub.max");
    int64_t wlen = r->window.end_ns - r->window.start_ns;
    for (size_t t = 0; t < r->ntracks; t++) {
        const pp_track_stats *v = &r->tracks[t];
        name_col(out, "", v->name, 28);
        fprintf(out, " %6llu %5.1f %5.1f %7llu %10s %10s\n", (unsigned long long)v->execs, 100 * an_ratio(v->busy_ns, wlen),
                100 * v->hw_util, (unsigned long long)v->bubbles.count,
                ns(v->bubbles.mean, b1), ns(v->bubbles.max, b2));
    }
    for (uint32_t d = 0; d < r->ndevices; d++) {
        char quality[200];
        if (!an_hw_quality_text(r->devices[d].hw_quality, quality, sizeof quality))
            continue;
        wrap(out, device_label(lb, r, d, "* ", ": "), quality);
    }
}

/* The PipelineProfiler framework's three figures under its names
 * (framework.c; docs/analysis.md "PipelineProfiler figures"). */
static void framework(const pp_report *r, FILE *out) {
    char name[160], b1[16], b2[16];
    if (r->nframework == 0)
        return;
    fprintf(out, "\nPipelineProfiler figures (per task: exec, partition, merge; HW Utilization %% "
                 "=\n sum hw / sum wall; Bubbles = mean gap > 0 from a task's end to the next "
                 "one's\n start on the device; Concurrency penalty = sum wall - sum hw)\n");
    fprintf(out, "%-20s %5s %16s %10s %4s %19s\n", "device / stage", "tasks",
            "HW Utilization %", "Bubbles", "(n)", "Concurrency penalty");
    for (size_t i = 0; i < r->nframework; i++) { /* each device, its stages under it */
        const pp_framework_stats *dev = &r->framework[i];
        if (dev->stage != UINT32_MAX)
            break;
        for (size_t k = i; k < r->nframework; k++) {
            const pp_framework_stats *f = &r->framework[k];
            if (k == i) {
                an_device_label(r, f->device, name, sizeof name);
                name_col(out, "", name, 20);
            } else if (f->stage != UINT32_MAX && f->device == dev->device) {
                name_col(out, "  ", r->stage_names[f->stage], 18);
            } else {
                continue;
            }
            char hw[24] = "-";
            if (f->hw_known)
                snprintf(hw, sizeof hw, "%.1f", f->hw_utilization_pct);
            fprintf(out, " %5llu %16s %10s %4llu %19s\n", (unsigned long long)f->tasks, hw,
                    f->bubbles ? ns((int64_t)(f->bubble_mean_ns + 0.5), b1) : "-",
                    (unsigned long long)f->bubbles,
                    f->hw_known ? ns(f->concurrency_penalty_ns, b2) : "-");
        }
    }
}

static void stages(const pp_report *r, FILE *out) {
    if (r->nstages == 0)
        return;
    char b1[16], b2[16], b3[16], b4[16];
    fprintf(out, "\nStages (in order of first appearance; time per batch; kind: dev = one "
                 "device,\n dp = data parallel, host = host work on CPU threads)\n");
    fprintf(out, "%-16s %7s %10s %10s %10s %10s %5s %4s\n", "stage", "batches", "mean", "p50",
            "p95", "max", "bneck", "kind");
    for (size_t s = 0; s < r->nstages; s++) {
        const pp_stage_stats *v = &r->stages[s];
        name_col(out, "", v->name, 16);
        fprintf(out, " %7llu %10s %10s %10s %10s %5llu %4s\n", (unsigned long long)v->time.n, ns(v->time.mean, b1), ns(v->time.p50, b2),
                ns(v->time.p95, b3), ns(v->time.max, b4),
                (unsigned long long)v->bottleneck_count,
                v->data_parallel ? "dp" : v->exec_less ? "host" : "dev");
    }
    fprintf(out, "%-16s %7s %7s %10s %6s %10s %10s %5s\n", "stage", "execs", "no-hw", "hw",
            "xfer%", "pen.mean", "pen.p95", "pen%");
    for (size_t s = 0; s < r->nstages; s++) {
        const pp_stage_stats *v = &r->stages[s];
        name_col(out, "", v->name, 16);
        if (v->exec_less) { /* host work: no hardware figures at all */
            fprintf(out, " %7llu %7s %10s %6s %10s %10s %5s\n", (unsigned long long)v->execs,
                    "-", "-", "-", "-", "-", "-");
            continue;
        }
        fprintf(out, " %7llu %7llu %10s %6.1f %10s %10s %5.1f\n", (unsigned long long)v->execs, (unsigned long long)v->hw_unknown,
                ns(v->hw_ns, b1), 100 * an_ratio(v->xfer_ns, v->hw_ns), ns(v->penalty.mean, b2),
                ns(v->penalty.p95, b3), v->penalty_pct_wall);
    }
    /* hold time beside stage time, and the idle time between batches */
    fprintf(out, "%-16s %10s %10s %8s %10s %10s\n", "stage", "hold.mean", "hold.p95",
            "handoff%", "blocked", "starved");
    for (size_t s = 0; s < r->nstages; s++) {
        const pp_stage_stats *v = &r->stages[s];
        name_col(out, "", v->name, 16);
        fprintf(out, " %10s %10s %8.1f %10s %10s\n", ns(v->hold.mean, b1), ns(v->hold.p95, b2),
                100 * an_ratio(v->hold.total - v->time.total, v->hold.total),
                ns(v->blocked_ns, b3), ns(v->starved_ns, b4));
    }
}

static void summary_row(FILE *out, const char *label, const pp_summary *s) {
    char b[5][16];
    fprintf(out, "%-10s %6llu %10s %10s %10s %10s %10s\n", label, (unsigned long long)s->n,
            ns(s->min, b[0]), ns(s->mean, b[1]), ns(s->p50, b[2]), ns(s->p95, b[3]),
            ns(s->max, b[4]));
}

static void cycles(const pp_report *r, FILE *out) {
    const pp_cycle_stats *c = &r->cycles;
    if (c->batches == 0)
        return;
    fprintf(out, "\nCycles (%llu batches, %llu complete)\n", (unsigned long long)c->batches,
            (unsigned long long)c->complete);
    fprintf(out, "%-10s %6s %10s %10s %10s %10s %10s\n", "", "n", "min", "mean", "p50", "p95",
            "max");
    summary_row(out, "cycle", &c->cycle);
    summary_row(out, "complete", &c->cycle_complete);
    summary_row(out, "end-to-end", &c->e2e);
    fprintf(out, "throughput: bound %.2f/s (complete only %.2f/s), measured %.2f/s\n",
            c->throughput_bound, c->throughput_bound_complete, c->throughput_measured);
}

static void data_parallel(const pp_report *r, FILE *out, label_buf *lb) {
    char b[5][16];
    for (size_t i = 0; i < r->ndp; i++) {
        const pp_dp_stats *v = &r->dp[i];
        fprintf(out, "\nData-parallel stage \"%s\" (%llu batches, imbalance %.2fx)\n",
                r->stages[v->stage].name, (unsigned long long)v->batches, v->imbalance);
        fprintf(out, "  95%% interval %.2f .. %.2f; slowest vs fastest part: sign test p %.3f\n",
                v->imbalance_lo, v->imbalance_hi, v->parts_p);
        fprintf(out, "  mean: partition %s + max device %s + merge %s\n",
                ns(v->partition.mean, b[0]), ns(v->max_device.mean, b[1]),
                ns(v->merge.mean, b[2]));
        fprintf(out, "        = %s (measured partition start .. merge end: %s)\n",
                ns(v->formula.mean, b[3]), ns(v->measured.mean, b[4]));
        fprintf(out, "  %-30s %7s %10s %8s %10s %7s\n",
                v->ndevices && v->devices[0].track != UINT32_MAX ? "track" : "device",
                "batches", "wall", "share", "suggested", "slowest");
        for (size_t d = 0; d < v->ndevices; d++) {
            const pp_dp_device *dd = &v->devices[d];
            name_col(out, "  ", part_label(lb, r, dd), 30);
            char suggested[16] = "-";
            if (dd->suggested_share > 0)
                snprintf(suggested, sizeof suggested, "%.3f", dd->suggested_share);
            fprintf(out, " %7llu %10s %7.3f%s %10s %7llu\n", (unsigned long long)dd->batches,
                    ns(dd->wall_ns, b[0]), dd->share, dd->share_recorded ? " " : "e",
                    suggested, (unsigned long long)dd->slowest);
        }
        if (v->ndevices && !v->devices[0].share_recorded)
            fprintf(out, "  e: no share recorded, an even split assumed\n");
        fprintf(out, "  slowest: the batches in which the part took the longest\n");
        if (v->ndevices && v->devices[0].suggested_share == 0)
            fprintf(out, "  -: the parts change from batch to batch, so no split applies\n");
    }
}

static void contention(const pp_report *r, FILE *out, label_buf *lb) {
    if (!r->has_contention)
        return;
    char b[2][16];
    fprintf(out, "\nContention (mean hw in the pipeline / hw alone, from the lookup table)\n");
    if (r->ncontention == 0) {
        fprintf(out, "  no stage and device of the table has execs with hardware time here\n");
        return;
    }
    fprintf(out, "  %-16s %-20s %6s %11s %11s %7s\n", "stage", "device", "execs", "pipeline",
            "alone", "factor");
    for (size_t i = 0; i < r->ncontention; i++) {
        const pp_contention_stats *v = &r->contention[i];
        name_col(out, "  ", r->stages[v->stage].name, 16);
        name_col(out, " ", device_label(lb, r, v->device, "", ""), 20);
        fprintf(out, " %6llu %11s %11s %6.2fx\n", (unsigned long long)v->execs, ns(v->mean_hw_ns, b[0]),
                ns(v->isolated_hw_ns, b[1]), v->factor);
    }
}

/* The wall decomposition per stage and device as shares of exec wall,
 * then how each device's own clock was aligned (docs/analysis.md). */
static void decomposition(const pp_report *r, FILE *out, label_buf *lb) {
    if (r->ndecomp == 0)
        return;
    char b[16];
    uint64_t execs = 0, split = 0;
    fprintf(out, "\nWall decomposition (%% of exec wall; xfer is part of device)\n");
    fprintf(out, "%-14s %-16s %6s %6s %6s %6s %6s %6s %6s\n", "stage", "device", "execs", "submit",
            "queue", "device", "xfer", "compl", "unattr");
    for (size_t i = 0; i < r->ndecomp; i++) {
        const pp_decomp_stats *v = &r->decomp[i];
        const pp_wall_parts *t = &v->total;
        double w = t->wall_ns > 0 ? 100.0 / (double)t->wall_ns : 0.0;
        name_col(out, "", v->stage == AN_NONE ? "-" : r->stages[v->stage].name, 14);
        name_col(out, " ", device_label(lb, r, v->device, "", ""), 16);
        fprintf(out, " %6llu %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f\n", (unsigned long long)v->execs,
                w * (double)t->submit_ns,
                w * (double)t->queue_ns, w * (double)t->device_ns, w * (double)t->xfer_ns,
                w * (double)t->completion_ns, w * (double)t->unattributed_ns);
        execs += v->execs;
        split += v->split;
    }
    char note[160];
    snprintf(note, sizeof note, "%llu of %llu execs come from backends that split their wall; "
             "the others show device and unattributed only.",
             (unsigned long long)split, (unsigned long long)execs);
    wrap(out, "", note);
    for (size_t i = 0; i < r->ndecomp; i++) {
        const pp_decomp_stats *v = &r->decomp[i];
        if (!v->has_contention || v->total.device_ns <= 0)
            continue;
        fprintf(out, "contention: %s on %s: %.1f%% of device time is over the isolated time\n",
                v->stage == AN_NONE ? "-" : r->stages[v->stage].name,
                device_label(lb, r, v->device, "", ""),
                100.0 * (double)v->total.contention_ns / (double)v->total.device_ns);
    }
    for (size_t i = 0; i < r->nclocks; i++) {
        fprintf(out, "clock: %s aligned by %s, error <= %s\n",
                device_label(lb, r, r->clocks[i].device, "", ""), r->clocks[i].method,
                ns(r->clocks[i].error_ns, b));
    }
}

/* The scheduler split of host spans as shares of their wall, or a line
 * saying the trace carries none (docs/analysis.md "Scheduler split"). */
static void sched_process(const pp_report *r, FILE *out) {
    const pp_sched_process *p = pp_report_sched_process(r);
    if (!p)
        return;
    char b[16], c[16], text[400];
    int n = snprintf(text, sizeof text, "process: %lld CPUs online, %lld allowed by its affinity "
                     "(%s); every thread sampled every %s (counters cpu%% and runq%% per thread)",
                     (long long)p->cpus_online, (long long)p->cpus_allowed, p->affinity,
                     ns(p->period_ns, b));
    if (p->sampler_cpu_ns >= 0 && p->sampled_ns > 0 && n > 0 && (size_t)n < sizeof text)
        snprintf(text + n, sizeof text - (size_t)n, "; the sampler used %s of CPU over %s",
                 ns(p->sampler_cpu_ns, b), ns(p->sampled_ns, c));
    wrap(out, "", text);
}

static void sched_split(const pp_report *r, FILE *out) {
    if (!r->sched_method) {
        fprintf(out, "\nScheduler split: none (the trace carries no scheduler figures: a "
                     "foreign trace,\nor recorded without the sched bit)\n");
        sched_process(r, out);
        return;
    }
    char b[16], text[200];
    snprintf(text, sizeof text, "\nScheduler split of host spans (%% of wall; read by %s)\n",
             r->sched_method);
    fputs(text, out);
    sched_process(r, out);
    fprintf(out, "%-14s %-10s %6s %11s %6s %6s %7s %5s %5s\n", "stage", "span", "spans", "wall",
            "cpu", "wait", "blocked", "vcsw", "ivcsw");
    uint64_t no_wait = 0;
    for (size_t i = 0; i < r->nsched; i++) {
        const pp_sched_stats *v = &r->sched[i];
        double w = v->wall_ns > 0 ? 100.0 / (double)v->wall_ns : 0.0, n = (double)v->spans;
        name_col(out, "", *v->stage ? v->stage : "-", 14);
        name_col(out, " ", v->span, 10);
        fprintf(out, " %6llu %11s %6.1f %6.1f %7.1f %5.1f %5.1f\n", (unsigned long long)v->spans,
                ns(v->wall_ns, b), w * (double)v->cpu_ns, w * (double)v->wait_ns,
                w * (double)v->blocked_ns, n > 0 ? (double)v->voluntary / n : 0.0,
                n > 0 ? (double)v->involuntary / n : 0.0);
        no_wait += v->no_wait;
    }
    wrap(out, "", "cpu: on a CPU; wait: runnable, waiting for a core; blocked: the rest "
                  "(asleep on a queue, a lock, I/O, the GIL); vcsw / ivcsw: voluntary / "
                  "involuntary context switches per span.");
    if (no_wait > 0) {
        snprintf(text, sizeof text, "%llu spans were read without a run-queue figure: their "
                 "waiting time counts as blocked.", (unsigned long long)no_wait);
        wrap(out, "", text);
    }
}

/* A rate in GB/s in 7 columns: three decimals, none from 1000 on. */
static const char *gbps(double v, char *buf) {
    snprintf(buf, 16, v < 1000 ? "%.3f" : "%.0f", v);
    return buf;
}

static void bandwidth_row(FILE *out, const char *name, const pp_bandwidth *b) {
    char rd[16], wr[16], g[4][16], xfer[16] = "-";
    an_format_bytes(b->read_bytes, rd, sizeof rd);
    an_format_bytes(b->write_bytes, wr, sizeof wr);
    if (b->xfer_ns > 0)
        gbps(b->xfer_gbps, xfer);
    name_col(out, "", name, 20);
    fprintf(out, " %6llu %9s %9s %7s %7s %7s %7s\n", (unsigned long long)b->execs, rd, wr,
            gbps(b->read_gbps, g[0]), gbps(b->write_gbps, g[1]), gbps(b->total_gbps, g[2]), xfer);
}

/* Bytes moved per device, track and stage (docs/analysis.md, bandwidth);
 * only where execs carry bytes. */
static void bandwidth(const pp_report *r, FILE *out, label_buf *lb) {
    int any = 0;
    for (uint32_t d = 0; d < r->ndevices; d++)
        any |= r->devices[d].bandwidth.execs > 0;
    if (!any)
        return;
    fprintf(out, "\nBandwidth (execs that carry bytes; GB/s, GB = 10^9 bytes, over busy "
                 "time;\n xfer/s over their transfer time)\n");
    const char *heads[] = {"device", "track", "stage"};
    for (int part = 0; part < 3; part++) {
        fprintf(out, "%-20s %6s %9s %9s %7s %7s %7s %7s\n", heads[part], "execs", "read",
                "written", "read/s", "write/s", "total/s", "xfer/s");
        if (part == 0)
            for (uint32_t d = 0; d < r->ndevices; d++)
                if (r->devices[d].bandwidth.execs)
                    bandwidth_row(out, device_label(lb, r, d, "", ""), &r->devices[d].bandwidth);
        for (size_t t = 0; part == 1 && t < r->ntracks; t++)
            if (r->tracks[t].bandwidth.execs)
                bandwidth_row(out, r->tracks[t].name, &r->tracks[t].bandwidth);
        for (size_t s = 0; part == 2 && s < r->nstages; s++)
            if (r->stages[s].bandwidth.execs)
                bandwidth_row(out, r->stages[s].name, &r->stages[s].bandwidth);
    }
}

/* One op table, in sections per device (the device's name is the section
 * heading, so it is never cut); at most 10 rows per device. */
static void op_table(const pp_report *r, FILE *out, label_buf *lb, const pp_op_stats *o, size_t n,
                     int by_type) {
    char b[5][16];
    for (uint32_t d = 0; d < r->ndevices; d++) {
        size_t rows = 0, shown = 0;
        for (size_t i = 0; i < n; i++)
            rows += o[i].device == d;
        if (rows == 0)
            continue;
        fprintf(out, "\nOps on %s by %s (top %zu of %zu by total)\n",
                device_label(lb, r, d, "", ""),
                by_type ? "type" : "name", rows < 10 ? rows : (size_t)10, rows);
        if (by_type)
            fprintf(out, "%-14s %-14s %6s %10s %10s %10s %10s\n", "type", "exec type", "count",
                    "total", "mean", "max", "cpu");
        else
            fprintf(out, "%-17s %6s %10s %10s %10s %10s %10s\n", "op", "count", "total", "mean",
                    "p95", "max", "cpu");
        for (size_t i = 0; i < n && shown < 10; i++) {
            const pp_op_stats *v = &o[i];
            if (v->device != d)
                continue;
            shown++;
            const char *cpu = v->cpu_count ? ns(v->cpu_total, b[4]) : "-";
            if (by_type) {
                name_col(out, "", v->type, 14);
                name_col(out, " ", v->exec_type, 14);
                fprintf(out, " %6llu %10s %10s %10s %10s\n", (unsigned long long)v->count,
                        ns(v->total, b[0]), ns(v->mean, b[1]), ns(v->max, b[2]), cpu);
            } else {
                name_col(out, "", v->name, 17);
                fprintf(out, " %6llu %10s %10s %10s %10s %10s\n", (unsigned long long)v->count,
                        ns(v->total, b[0]), ns(v->mean, b[1]), ns(v->p95, b[2]),
                        ns(v->max, b[3]), cpu);
            }
        }
    }
}

/* The ops inside each host stage, the first 10 by self time; self% of the
 * stage's total time. */
static void stage_ops(const pp_report *r, FILE *out) {
    char b[3][16];
    for (size_t i = 0, k; i < r->nstage_ops; i = k) {
        uint32_t s = r->stage_ops[i].stage;
        for (k = i; k < r->nstage_ops && r->stage_ops[k].stage == s; k++)
            ;
        fprintf(out, "\nOps inside stage \"%s\" (top %zu of %zu by self time)\n",
                r->stages[s].name, k - i < 10 ? k - i : (size_t)10, k - i);
        fprintf(out, "%-31s %6s %10s %10s %10s %6s\n", "op (self: less nested ops)", "count",
                "total", "self", "self.mean", "self%");
        for (size_t j = i; j < k && j < i + 10; j++) {
            const pp_stage_op_stats *v = &r->stage_ops[j];
            name_col(out, "", v->name, 31);
            fprintf(out, " %6llu %10s %10s %10s %6.1f\n", (unsigned long long)v->count,
                    ns(v->total_ns, b[0]), ns(v->self_ns, b[1]),
                    ns(v->self_ns / (int64_t)v->count, b[2]),
                    100 * an_ratio(v->self_ns, r->stages[s].time.total));
        }
    }
}

static void ops(const pp_report *r, FILE *out, label_buf *lb) {
    op_table(r, out, lb, r->ops, r->nops, 0);
    int typed = 0;
    for (size_t i = 0; i < r->nop_types; i++)
        typed |= r->op_types[i].type[0] || r->op_types[i].exec_type[0];
    if (typed) /* without type annotations the table would repeat the totals */
        op_table(r, out, lb, r->op_types, r->nop_types, 1);
}

int pp_report_write_text(const pp_report *r, FILE *out) {
    label_buf lb = {0};
    header(r, out, &lb);
    fprintf(out, "\nFindings\n");
    for (size_t i = 0; i < r->nfindings; i++) {
        char lead[32];
        snprintf(lead, sizeof lead, "%2zu. ", i + 1);
        wrap(out, lead, r->findings[i]);
    }
    devices(r, out, &lb);
    framework(r, out);
    stages(r, out);
    cycles(r, out);
    data_parallel(r, out, &lb);
    contention(r, out, &lb);
    decomposition(r, out, &lb);
    sched_split(r, out);
    bandwidth(r, out, &lb);
    ops(r, out, &lb);
    stage_ops(r, out);
    free(lb.s);
    return lb.nomem ? PP_ENOMEM : ferror(out) ? PP_EIO : PP_OK;
}
