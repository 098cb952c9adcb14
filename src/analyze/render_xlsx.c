/* render_xlsx.c — the report as an xlsx workbook (libxlsxwriter;
 * docs/report.md): an overview sheet (findings, window, data loss, devices,
 * stages, cycles), one sheet per device (its tracks and every bubble), one
 * per stage (its time for each batch), and the two op tables. Durations are
 * numbers in ms or µs with a number format that says so; every table has
 * its header row frozen and an autofilter.
 *
 * Built only when libxlsxwriter is found (cmake/xlsx.cmake); otherwise
 * pp_report_write_xlsx says so with PP_EUNSUPPORTED. The workbook is written
 * to "<path>.tmp.<pid>" and renamed onto path when complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/report.h"
#include "core/error.h"
#include "io/outfile.h"

#ifdef PP_HAVE_XLSX
#include <xlsxwriter.h>

/* An xlsx sheet holds 1048576 rows: a longer table stops short and says so. */
#define MAX_ROWS 1048000u

typedef struct book {
    lxw_workbook *wb;
    lxw_format *head, *ms, *us, *pct, *num, *gbps;
    const pp_report *r;
} book;

static double ms(int64_t ns) { return (double)ns / 1e6; }
static double us(int64_t ns) { return (double)ns / 1e3; }

static void text(lxw_worksheet *ws, lxw_row_t row, lxw_col_t col, const char *s) {
    worksheet_write_string(ws, row, col, s, NULL);
}

static void number(lxw_worksheet *ws, lxw_row_t row, lxw_col_t col, double v, lxw_format *f) {
    worksheet_write_number(ws, row, col, v, f);
}

/* A header row at `row` from column `col`; returns the column after it. */
static lxw_col_t header(const book *b, lxw_worksheet *ws, lxw_row_t row, lxw_col_t col,
                        const char *const *names, size_t n) {
    for (size_t i = 0; i < n; i++)
        worksheet_write_string(ws, row, (lxw_col_t)(col + i), names[i], b->head);
    return (lxw_col_t)(col + n);
}

/* A sheet named `prefix name` made valid: at most 31 characters, none of
 * []:*?/\, and unique (a number is appended when taken). */
static lxw_worksheet *sheet(const book *b, const char *prefix, const char *name) {
    char base[32], tried[40];
    snprintf(base, sizeof base, "%s%s", prefix, name);
    for (char *p = base; *p; p++)
        if (strchr("[]:*?/\\", *p))
            *p = '_';
    snprintf(tried, sizeof tried, "%s", base);
    for (int k = 2; k < 1000; k++) {
        if (workbook_validate_sheet_name(b->wb, tried) == LXW_NO_ERROR)
            return workbook_add_worksheet(b->wb, tried);
        snprintf(tried, sizeof tried, "%.26s ~%d", base, k);
    }
    return NULL;
}

static void bandwidth_cells(const book *b, lxw_worksheet *ws, lxw_row_t row, lxw_col_t col,
                            const pp_bandwidth *bw) {
    if (bw->execs == 0)
        return;
    number(ws, row, col, (double)bw->read_bytes / 1e6, b->num);
    number(ws, row, col + 1, (double)bw->write_bytes / 1e6, b->num);
    number(ws, row, col + 2, bw->read_gbps, b->gbps);
    number(ws, row, col + 3, bw->write_gbps, b->gbps);
    number(ws, row, col + 4, bw->total_gbps, b->gbps);
}

static const char *const bw_heads[] = {"read MB", "written MB", "read GB/s", "write GB/s",
                                       "total GB/s"};

/* The overview: what the text report's header and findings say, then the
 * device, stage and cycle tables one below the other. */
static lxw_row_t overview_head(const book *b, lxw_worksheet *ws) {
    const pp_report *r = b->r;
    char buf[512];
    lxw_row_t row = 0;
    worksheet_write_string(ws, row++, 0, "pipeprof report", b->head);
    text(ws, row, 0, "source"), text(ws, row++, 1, r->source);
    text(ws, row, 0, "window"), text(ws, row++, 1, r->window.how);
    text(ws, row, 0, "window start (ns)"), number(ws, row++, 1, (double)r->window.start_ns, NULL);
    text(ws, row, 0, "window end (ns)"), number(ws, row++, 1, (double)r->window.end_ns, NULL);
    text(ws, row, 0, "window length");
    number(ws, row++, 1, ms(r->window.end_ns - r->window.start_ns), b->ms);
    text(ws, row, 0, "dropped records");
    number(ws, row++, 1, (double)r->meta.dropped_records, NULL);
    text(ws, row, 0, "truncated bytes");
    number(ws, row++, 1, (double)r->meta.truncated_bytes, NULL);
    text(ws, row, 0, "unmatched begin/end pairs");
    number(ws, row++, 1, (double)r->meta.unmatched_ends, NULL);
    row++;
    worksheet_write_string(ws, row++, 0, "Findings", b->head);
    for (size_t i = 0; i < r->nfindings; i++) {
        snprintf(buf, sizeof buf, "%zu.", i + 1);
        text(ws, row, 0, buf), text(ws, row++, 1, r->findings[i]);
    }
    if (r->nfindings == 0)
        text(ws, row++, 1, "No findings.");
    return row + 1;
}

static lxw_row_t overview_devices(const book *b, lxw_worksheet *ws, lxw_row_t row) {
    const pp_report *r = b->r;
    static const char *const heads[] = {"device", "execs", "busy", "idle", "busy %", "hw %",
                                        "hw efficiency %", "transfer %", "bubbles",
                                        "bubble mean", "bubble max"};
    lxw_col_t end = header(b, ws, row, 0, heads, sizeof heads / sizeof heads[0]);
    header(b, ws, row++, end, bw_heads, 5);
    char name[160];
    for (uint32_t d = 0; d < r->ndevices; d++, row++) {
        const pp_device_stats *v = &r->devices[d];
        an_device_label(r, d, name, sizeof name);
        text(ws, row, 0, name);
        number(ws, row, 1, (double)v->execs, NULL);
        number(ws, row, 2, ms(v->busy_ns), b->ms);
        number(ws, row, 3, ms(v->idle_ns), b->ms);
        number(ws, row, 4, v->wall_util, b->pct);
        number(ws, row, 5, v->hw_util, b->pct);
        number(ws, row, 6, v->hw_eff, b->pct);
        number(ws, row, 7, v->transfer_share, b->pct);
        number(ws, row, 8, (double)v->bubbles.count, NULL);
        number(ws, row, 9, us(v->bubbles.mean), b->us);
        number(ws, row, 10, us(v->bubbles.max), b->us);
        bandwidth_cells(b, ws, row, end, &v->bandwidth);
    }
    return row + 1;
}

static lxw_row_t overview_stages(const book *b, lxw_worksheet *ws, lxw_row_t row) {
    const pp_report *r = b->r;
    static const char *const heads[] = {"stage", "kind", "batches", "mean", "p50", "p95",
                                        "p99", "max", "bottleneck of", "execs"};
    lxw_col_t end = header(b, ws, row, 0, heads, sizeof heads / sizeof heads[0]);
    header(b, ws, row++, end, bw_heads, 5);
    for (size_t s = 0; s < r->nstages; s++, row++) {
        const pp_stage_stats *v = &r->stages[s];
        text(ws, row, 0, v->name);
        text(ws, row, 1, v->data_parallel ? "data parallel" : v->exec_less ? "host" : "device");
        number(ws, row, 2, (double)v->time.n, NULL);
        const int64_t t[] = {v->time.mean, v->time.p50, v->time.p95, v->time.p99, v->time.max};
        for (int k = 0; k < 5; k++)
            number(ws, row, (lxw_col_t)(3 + k), ms(t[k]), b->ms);
        number(ws, row, 8, (double)v->bottleneck_count, NULL);
        number(ws, row, 9, (double)v->execs, NULL);
        bandwidth_cells(b, ws, row, end, &v->bandwidth);
    }
    return row + 1;
}

static void overview_cycles(const book *b, lxw_worksheet *ws, lxw_row_t row) {
    const pp_cycle_stats *c = &b->r->cycles;
    static const char *const heads[] = {"cycles", "n", "min", "mean", "p50", "p95", "p99",
                                        "max"};
    header(b, ws, row++, 0, heads, sizeof heads / sizeof heads[0]);
    const char *labels[] = {"cycle latency", "complete batches only", "end to end"};
    const pp_summary *s[] = {&c->cycle, &c->cycle_complete, &c->e2e};
    for (int i = 0; i < 3; i++, row++) {
        text(ws, row, 0, labels[i]);
        number(ws, row, 1, (double)s[i]->n, NULL);
        const int64_t v[] = {s[i]->min, s[i]->mean, s[i]->p50, s[i]->p95, s[i]->p99, s[i]->max};
        for (int k = 0; k < 6; k++)
            number(ws, row, (lxw_col_t)(2 + k), ms(v[k]), b->ms);
    }
    text(ws, row, 0, "throughput bound (1/s)"), number(ws, row++, 1, c->throughput_bound, b->num);
    text(ws, row, 0, "throughput measured (1/s)");
    number(ws, row, 1, c->throughput_measured, b->num);
}

static int overview(const book *b) {
    lxw_worksheet *ws = workbook_add_worksheet(b->wb, "Overview");
    if (!ws)
        return PP_ENOMEM;
    worksheet_set_column(ws, 0, 0, 26, NULL);
    worksheet_set_column(ws, 1, 15, 14, NULL);
    worksheet_freeze_panes(ws, 1, 0);
    lxw_row_t row = overview_head(b, ws);
    lxw_row_t devices_at = row;
    row = overview_devices(b, ws, row);
    worksheet_autofilter(ws, devices_at, 0, (lxw_row_t)(row - 2), 15);
    row = overview_stages(b, ws, row);
    overview_cycles(b, ws, row);
    return PP_OK;
}

/* A device's sheet: its tracks (left) and every bubble (right, filtered). */
static int device_sheet(const book *b, uint32_t d) {
    const pp_report *r = b->r;
    char name[160];
    an_device_label(r, d, name, sizeof name);
    lxw_worksheet *ws = sheet(b, "Device ", name);
    if (!ws)
        return PP_ENOMEM;
    static const char *const heads[] = {"track", "execs", "busy", "busy %", "hw %", "bubbles",
                                        "bubble mean", "bubble p95", "bubble max"};
    static const char *const gap_heads[] = {"bubble start (ns)", "bubble end (ns)", "bubble"};
    lxw_col_t end = header(b, ws, 0, 0, heads, sizeof heads / sizeof heads[0]);
    end = header(b, ws, 0, end, bw_heads, 5);
    lxw_col_t gaps_at = (lxw_col_t)(end + 1);
    header(b, ws, 0, gaps_at, gap_heads, 3);
    worksheet_set_column(ws, 0, 0, 32, NULL);
    worksheet_set_column(ws, 1, (lxw_col_t)(gaps_at + 2), 13, NULL);
    worksheet_freeze_panes(ws, 1, 0);
    int64_t wlen = r->window.end_ns - r->window.start_ns;
    lxw_row_t row = 1;
    for (size_t t = 0; t < r->ntracks; t++) {
        const pp_track_stats *v = &r->tracks[t];
        if (v->device != d)
            continue;
        text(ws, row, 0, v->name);
        number(ws, row, 1, (double)v->execs, NULL);
        number(ws, row, 2, ms(v->busy_ns), b->ms);
        number(ws, row, 3, an_ratio(v->busy_ns, wlen), b->pct);
        number(ws, row, 4, v->hw_util, b->pct);
        number(ws, row, 5, (double)v->bubbles.count, NULL);
        number(ws, row, 6, us(v->bubbles.mean), b->us);
        number(ws, row, 7, us(v->bubbles.p95), b->us);
        number(ws, row, 8, us(v->bubbles.max), b->us);
        bandwidth_cells(b, ws, row++, 9, &v->bandwidth);
    }
    lxw_row_t grow = 1;
    an_gap_cursor c = an_gaps_of(r, d);
    for (an_gap g; grow <= MAX_ROWS && an_gap_next(&c, &g);) {
        number(ws, grow, gaps_at, (double)g.start, NULL);
        number(ws, grow, gaps_at + 1, (double)g.end, NULL);
        number(ws, grow++, gaps_at + 2, us(g.end - g.start), b->us);
    }
    if (grow > MAX_ROWS)
        text(ws, grow, gaps_at, "(more bubbles: gaps.csv holds them all)");
    worksheet_autofilter(ws, 0, gaps_at, grow > 1 ? grow - 1 : 1, (lxw_col_t)(gaps_at + 2));
    return PP_OK;
}

/* A stage's sheet: its time for each batch, with the batch's cycle. */
static int stage_sheet(const book *b, uint32_t s) {
    const pp_report *r = b->r;
    lxw_worksheet *ws = sheet(b, "Stage ", r->stages[s].name);
    if (!ws)
        return PP_ENOMEM;
    static const char *const heads[] = {"batch", "stage time", "measured", "cycle",
                                        "bottleneck", "complete"};
    header(b, ws, 0, 0, heads, sizeof heads / sizeof heads[0]);
    worksheet_set_column(ws, 0, 5, 14, NULL);
    worksheet_freeze_panes(ws, 1, 0);
    lxw_row_t row = 1;
    size_t k = 0; /* the batches and the times are both sorted by batch */
    for (size_t i = 0; i < r->ntimes && row <= MAX_ROWS; i++) {
        if (r->times[i].stage != s)
            continue;
        pp_stage_time st = an_stage_time(r, i), *t = &st;
        while (k + 1 < r->nbatches && r->batch_time[k + 1] <= i) /* the batch of time i */
            k++;
        number(ws, row, 0, (double)t->batch, NULL);
        number(ws, row, 1, ms(t->time_ns), b->ms);
        if (t->measured_ns >= 0)
            number(ws, row, 2, ms(t->measured_ns), b->ms);
        pp_batch_stats bt = an_batch_stats(r, k);
        number(ws, row, 3, ms(bt.cycle_ns), b->ms);
        text(ws, row, 4, r->stages[bt.bottleneck].name);
        text(ws, row, 5, bt.complete ? "yes" : "no");
        row++;
    }
    if (row > MAX_ROWS)
        text(ws, row, 0, "(more batches: batches.csv holds them all)");
    worksheet_autofilter(ws, 0, 0, row > 1 ? row - 1 : 1, 5);
    return PP_OK;
}

/* An op table (by name, or by type without the name column). */
static int op_sheet(const book *b, const char *title, const pp_op_stats *o, size_t n,
                    int named) {
    lxw_worksheet *ws = workbook_add_worksheet(b->wb, title);
    if (!ws)
        return PP_ENOMEM;
    static const char *const heads[] = {"device", "name", "type", "exec type", "count", "total",
                                        "mean", "p50", "p95", "max", "cpu ops", "cpu total"};
    lxw_col_t col = 0;
    for (size_t i = 0; i < 12; i++)
        if (named || i != 1)
            worksheet_write_string(ws, 0, col++, heads[i], b->head);
    worksheet_set_column(ws, 0, (lxw_col_t)(named ? 3 : 2), 22, NULL);
    worksheet_freeze_panes(ws, 1, 0);
    char name[160];
    lxw_row_t row = 1;
    for (size_t i = 0; i < n && row <= MAX_ROWS; i++, row++) {
        col = 0;
        an_device_label(b->r, o[i].device, name, sizeof name);
        text(ws, row, col++, name);
        if (named)
            text(ws, row, col++, o[i].name);
        text(ws, row, col++, o[i].type);
        text(ws, row, col++, o[i].exec_type);
        number(ws, row, col++, (double)o[i].count, NULL);
        const int64_t v[] = {o[i].total, o[i].mean, o[i].p50, o[i].p95, o[i].max};
        for (int k = 0; k < 5; k++)
            number(ws, row, col++, us(v[k]), b->us);
        number(ws, row, col++, (double)o[i].cpu_count, NULL);
        if (o[i].cpu_count)
            number(ws, row, col, us(o[i].cpu_total), b->us);
    }
    worksheet_autofilter(ws, 0, 0, row > 1 ? row - 1 : 1, (lxw_col_t)(named ? 11 : 10));
    return PP_OK;
}

static int formats(book *b) {
    lxw_format **f[] = {&b->head, &b->ms, &b->us, &b->pct, &b->num, &b->gbps};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!(*f[i] = workbook_add_format(b->wb)))
            return PP_ENOMEM;
    format_set_bold(b->head);
    format_set_num_format(b->ms, "0.000\" ms\"");
    format_set_num_format(b->us, "0.000\" \xc2\xb5s\"");
    format_set_num_format(b->pct, "0.0%");
    format_set_num_format(b->num, "0.000");
    format_set_num_format(b->gbps, "0.000\" GB/s\"");
    return PP_OK;
}

int pp_report_write_xlsx(const pp_report *r, const char *path, pp_error *err) {
    char *tmp = an_strdupf("%s.tmp.%ld", path, (long)getpid());
    if (!tmp)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    book b = {.wb = workbook_new(tmp), .r = r};
    if (!b.wb) {
        free(tmp);
        return pp_set_error(err, PP_ENOMEM, "%s: cannot start the workbook", path);
    }
    int rc = formats(&b);
    if (rc == PP_OK)
        rc = overview(&b);
    for (uint32_t d = 0; rc == PP_OK && d < r->ndevices; d++)
        rc = device_sheet(&b, d);
    for (uint32_t s = 0; rc == PP_OK && s < r->nstages; s++)
        rc = stage_sheet(&b, s);
    if (rc == PP_OK)
        rc = op_sheet(&b, "Ops", r->ops, r->nops, 1);
    if (rc == PP_OK)
        rc = op_sheet(&b, "Op types", r->op_types, r->nop_types, 0);
    /* writes the file and frees the workbook; past `ulimit -f` the write
     * fails with EFBIG instead of SIGXFSZ killing the process */
    sigset_t saved;
    pp_xfsz_block(&saved);
    lxw_error closed = workbook_close(b.wb);
    pp_xfsz_restore(&saved);
    if (rc == PP_OK && closed != LXW_NO_ERROR)
        rc = pp_set_error(err, PP_EIO, "%s: %s", path, lxw_strerror(closed));
    else if (rc == PP_OK && rename(tmp, path) != 0)
        rc = pp_set_error(err, PP_EIO, "%s: cannot rename the finished workbook into place",
                          path);
    else if (rc != PP_OK)
        pp_set_error(err, rc, "%s: out of memory building the workbook", path);
    if (rc != PP_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}

#else

int pp_report_write_xlsx(const pp_report *r, const char *path, pp_error *err) {
    (void)r, (void)path;
    return pp_set_error(err, PP_EUNSUPPORTED,
                        "xlsx is not built (libxlsxwriter was not found when pipeprof was built)");
}

#endif
