/* render_text.c — the report for people, 80 columns wide: header (file, W,
 * data loss, simulated devices), findings, then the device, track, stage,
 * cycle, data-parallel and op tables. */
#include <string.h>

#include "analyze/report.h"

#define WIDTH 80

/* Writes `text` wrapped at WIDTH, first line after `lead`, the rest indented. */
static void wrap(FILE *out, const char *lead, const char *text) {
    size_t indent = strlen(lead), col = indent;
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

/* The last `width` characters of a long name keep its distinguishing end. */
static const char *fit(const char *s, size_t width) {
    size_t n = strlen(s);
    return n > width ? s + (n - width) : s;
}

static const char *ns(int64_t v, char *buf) {
    an_format_ns(v, buf, 16);
    return buf;
}

static void header(const pp_report *r, FILE *out) {
    char b[16], name[160];
    const pp_window *w = &r->window;
    fprintf(out, "pipeprof analyze: %s\n", r->source);
    fprintf(out, "window: %s (%s), %lld .. %lld ns\n", ns(w->end_ns - w->start_ns, b), w->how,
            (long long)w->start_ns, (long long)w->end_ns);
    if (r->meta.dropped_records || r->meta.truncated_bytes)
        fprintf(out, "data loss: %llu dropped records, %llu truncated bytes\n",
                (unsigned long long)r->meta.dropped_records,
                (unsigned long long)r->meta.truncated_bytes);
    else
        fprintf(out, "data loss: none\n");
    int any = 0;
    for (uint32_t d = 0; d < r->ndevices; d++) {
        if (!r->devices[d].simulated)
            continue;
        an_device_label(r, d, name, sizeof name);
        fprintf(out, "%s%s", any++ ? ", " : "simulated devices: ", name);
    }
    if (any)
        fputc('\n', out);
}

static void devices(const pp_report *r, FILE *out) {
    char name[160], b1[16], b2[16], b3[16];
    fprintf(out, "\nDevices (busy = union over streams; hw figures leave out unknown hw)\n");
    fprintf(out, "%-18s %6s %5s %5s %5s %5s %5s %7s %10s\n", "device", "execs", "busy%",
            "hw%", "eff%", "xfer%", "pen%", "bubbles", "bub.mean");
    for (uint32_t d = 0; d < r->ndevices; d++) {
        const pp_device_stats *v = &r->devices[d];
        an_device_label(r, d, name, sizeof name);
        fprintf(out, "%-18s %6llu %5.1f %5.1f %5.1f %5.1f %5.1f %7llu %10s\n", fit(name, 18),
                (unsigned long long)v->execs, 100 * v->wall_util, 100 * v->hw_util,
                100 * v->hw_eff, 100 * v->transfer_share, v->penalty_pct_wall,
                (unsigned long long)v->bubbles.count, ns(v->bubbles.mean, b1));
    }
    fprintf(out, "%-20s %10s %10s %10s %10s %10s\n", "device", "busy", "idle", "leading",
            "trailing", "bub.max");
    for (uint32_t d = 0; d < r->ndevices; d++) {
        const pp_device_stats *v = &r->devices[d];
        char b4[16], b5[16];
        an_device_label(r, d, name, sizeof name);
        fprintf(out, "%-20s %10s %10s %10s %10s %10s\n", fit(name, 20), ns(v->busy_ns, b1),
                ns(v->idle_ns, b2), ns(v->bubbles.leading_ns, b3),
                ns(v->bubbles.trailing_ns, b4), ns(v->bubbles.max, b5));
    }
    fprintf(out, "\n%-28s %6s %5s %5s %7s %10s %10s\n", "track", "execs", "busy%", "hw%",
            "bubbles", "bub.mean", "bub.max");
    int64_t wlen = r->window.end_ns - r->window.start_ns;
    for (size_t t = 0; t < r->ntracks; t++) {
        const pp_track_stats *v = &r->tracks[t];
        fprintf(out, "%-28s %6llu %5.1f %5.1f %7llu %10s %10s\n", fit(v->name, 28),
                (unsigned long long)v->execs, 100 * an_ratio(v->busy_ns, wlen),
                100 * v->hw_util, (unsigned long long)v->bubbles.count,
                ns(v->bubbles.mean, b1), ns(v->bubbles.max, b2));
    }
}

static void stages(const pp_report *r, FILE *out) {
    if (r->nstages == 0)
        return;
    char b1[16], b2[16], b3[16], b4[16];
    fprintf(out, "\nStages (in order of first appearance; time per batch)\n");
    fprintf(out, "%-16s %7s %10s %10s %10s %10s %5s %4s\n", "stage", "batches", "mean", "p50",
            "p95", "max", "bneck", "kind");
    for (size_t s = 0; s < r->nstages; s++) {
        const pp_stage_stats *v = &r->stages[s];
        fprintf(out, "%-16s %7llu %10s %10s %10s %10s %5llu %4s\n", fit(v->name, 16),
                (unsigned long long)v->time.n, ns(v->time.mean, b1), ns(v->time.p50, b2),
                ns(v->time.p95, b3), ns(v->time.max, b4),
                (unsigned long long)v->bottleneck_count,
                v->data_parallel ? "dp" : v->exec_less ? "host" : "");
    }
    fprintf(out, "%-16s %7s %7s %10s %6s %10s %10s %5s\n", "stage", "execs", "no-hw", "hw",
            "xfer%", "pen.mean", "pen.p95", "pen%");
    for (size_t s = 0; s < r->nstages; s++) {
        const pp_stage_stats *v = &r->stages[s];
        fprintf(out, "%-16s %7llu %7llu %10s %6.1f %10s %10s %5.1f\n", fit(v->name, 16),
                (unsigned long long)v->execs, (unsigned long long)v->hw_unknown,
                ns(v->hw_ns, b1), 100 * an_ratio(v->xfer_ns, v->hw_ns), ns(v->penalty.mean, b2),
                ns(v->penalty.p95, b3), v->penalty_pct_wall);
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

static void data_parallel(const pp_report *r, FILE *out) {
    char b[5][16], name[160];
    for (size_t i = 0; i < r->ndp; i++) {
        const pp_dp_stats *v = &r->dp[i];
        fprintf(out, "\nData-parallel stage \"%s\" (%llu batches, imbalance %.2fx)\n",
                r->stages[v->stage].name, (unsigned long long)v->batches, v->imbalance);
        fprintf(out, "  mean: partition %s + max device %s + merge %s\n",
                ns(v->partition.mean, b[0]), ns(v->max_device.mean, b[1]),
                ns(v->merge.mean, b[2]));
        fprintf(out, "        = %s (measured partition start .. merge end: %s)\n",
                ns(v->formula.mean, b[3]), ns(v->measured.mean, b[4]));
        fprintf(out, "  %-24s %10s %8s %10s\n", "device", "wall", "share", "suggested");
        for (size_t d = 0; d < v->ndevices; d++) {
            an_device_label(r, v->devices[d].device, name, sizeof name);
            fprintf(out, "  %-24s %10s %8.3f %10.3f\n", fit(name, 24),
                    ns(v->devices[d].wall_ns, b[0]), v->devices[d].share,
                    v->devices[d].suggested_share);
        }
    }
}

static void ops(const pp_report *r, FILE *out) {
    if (r->nops == 0)
        return;
    char b[4][16], name[160];
    size_t shown = r->nops < 10 ? r->nops : 10;
    fprintf(out, "\nOps (top %zu of %zu by total)\n", shown, r->nops);
    fprintf(out, "%-12s %-18s %7s %9s %9s %9s %9s\n", "device", "op", "count", "total", "mean",
            "p95", "max");
    for (size_t i = 0; i < shown; i++) {
        const pp_op_stats *o = &r->ops[i];
        an_device_label(r, o->device, name, sizeof name);
        fprintf(out, "%-12s %-18s %7llu %9s %9s %9s %9s\n", fit(name, 12), fit(o->name, 18),
                (unsigned long long)o->count, ns(o->total, b[0]), ns(o->mean, b[1]),
                ns(o->p95, b[2]), ns(o->max, b[3]));
    }
}

int pp_report_write_text(const pp_report *r, FILE *out) {
    header(r, out);
    fprintf(out, "\nFindings\n");
    for (size_t i = 0; i < r->nfindings; i++) {
        char lead[32];
        snprintf(lead, sizeof lead, "%2zu. ", i + 1);
        wrap(out, lead, r->findings[i]);
    }
    devices(r, out);
    stages(r, out);
    cycles(r, out);
    data_parallel(r, out);
    ops(r, out);
    return ferror(out) ? PP_EIO : PP_OK;
}
