/* render_html.c — a diff as one self-contained HTML page (docs/diff.md,
 * "HTML"): the findings, each per-batch distribution of the two runs
 * overlaid (inline SVG, no script, works offline), and the figure table
 * with significant changes highlighted — red where the change is a
 * regression, green where it is an improvement — and changes within noise
 * greyed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "diff/diff_impl.h"
#include "io/outfile.h"
#include "stats/stats.h"

#define BINS 40
#define SVG_W 640
#define SVG_H 150
#define PLOT_H 110

static void esc(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void fmt_ns(double v, char *buf, size_t cap) {
    pp_diff_figure f = {0};
    f.kind = PP_DIFF_STAGE;
    diff_format_value(&f, v, buf, cap);
}

/* The q-quantile of a copy of v (nearest rank). */
static double quantile_of(const double *v, size_t n, double q) {
    double *t = malloc((n ? n : 1) * sizeof *t);
    if (!t || n == 0) {
        free(t);
        return 0;
    }
    memcpy(t, v, n * sizeof *t);
    double r = pp_stat_quantile(t, n, &q);
    free(t);
    return r;
}

/* Two histograms on shared bins from the smaller minimum to the larger
 * p95 (a few outliers would squeeze everything else into one bin; they
 * are counted in the last bin), each as shares of its run's batches. */
static void distribution_svg(FILE *f, const diff_dist *d) {
    static const char *const color[2] = {"#3b75af", "#ef8636"};
    double lo = INFINITY, hi = -INFINITY, p50[2];
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < d->n[k]; i++)
            lo = fmin(lo, d->v[k][i]);
        hi = fmax(hi, quantile_of(d->v[k], d->n[k], 0.95));
        p50[k] = quantile_of(d->v[k], d->n[k], 0.5);
    }
    if (!(hi > lo))
        hi = lo + 1;
    double share[2][BINS] = {{0}}, top = 0;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < d->n[k]; i++) {
            int b = (int)((d->v[k][i] - lo) / (hi - lo) * BINS);
            share[k][b < 0 ? 0 : b >= BINS ? BINS - 1 : b] += 1.0 / (double)d->n[k];
        }
        for (int b = 0; b < BINS; b++)
            top = fmax(top, share[k][b]);
    }
    fprintf(f, "<h3>");
    esc(f, d->title);
    fprintf(f, "</h3>\n<svg width=\"%d\" height=\"%d\" role=\"img\">\n", SVG_W, SVG_H);
    double bw = (double)SVG_W / BINS;
    for (int k = 0; k < 2; k++) {
        for (int b = 0; b < BINS; b++) {
            double h = top > 0 ? share[k][b] / top * PLOT_H : 0;
            if (h > 0)
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                           "fill-opacity=\"0.55\"/>\n",
                        b * bw, PLOT_H - h, bw - 1, h, color[k]);
        }
        double x = (p50[k] - lo) / (hi - lo) * SVG_W;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%d\" stroke=\"%s\" "
                   "stroke-dasharray=\"4 3\"/>\n",
                x, x, PLOT_H, color[k]);
    }
    char a[64], b[64], m0[64], m1[64];
    fmt_ns(lo, a, sizeof a), fmt_ns(hi, b, sizeof b);
    fmt_ns(p50[0], m0, sizeof m0), fmt_ns(p50[1], m1, sizeof m1);
    fprintf(f, "<text x=\"0\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s "
               "(p95 and above)</text>\n",
            PLOT_H + 16, a, SVG_W, PLOT_H + 16, b);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">base p50 %s (%zu "
               "batches)</text><text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">new p50 "
               "%s (%zu batches)</text>\n</svg>\n",
            SVG_W / 4, PLOT_H + 34, color[0], m0, d->n[0], 3 * SVG_W / 4, PLOT_H + 34, color[1],
            m1, d->n[1]);
}

static const char *row_class(const pp_diff_figure *f) {
    if (f->significant) {
        int worse = f->higher_is_better ? f->rel < 0 : f->rel > 0;
        return worse ? "worse" : "better";
    }
    return f->tested ? "noise" : "window";
}

static void figure_table(FILE *f, const pp_diff *d) {
    fputs("<table>\n<tr><th>figure</th><th>key</th><th>base</th><th>new</th><th>change "
          "(95% CI)</th><th>p</th><th></th></tr>\n",
          f);
    for (size_t i = 0; i < d->nfigures; i++) {
        const pp_diff_figure *x = &d->figures[i];
        char b[64], n[64], ch[96];
        diff_format_value(x, x->only_in == 2 ? NAN : x->base, b, sizeof b);
        diff_format_value(x, x->only_in == 1 ? NAN : x->new_value, n, sizeof n);
        diff_format_change(x, ch, sizeof ch);
        fprintf(f, "<tr class=\"%s\"><td>", row_class(x));
        esc(f, x->label);
        fputs("</td><td><code>", f);
        esc(f, x->key);
        fprintf(f, "</code></td><td>%s</td><td>%s</td><td>%s</td>", b, n, ch);
        if (x->tested)
            fprintf(f, "<td>%.2g</td>", x->p);
        else
            fputs("<td>-</td>", f);
        fprintf(f, "<td>%s</td></tr>\n",
                x->significant ? "significant" : x->tested ? "within noise" : "not tested");
    }
    fputs("</table>\n", f);
}

static void page(FILE *f, const pp_diff *d) {
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pipeprof diff</title>\n"
          "<style>body{font:14px system-ui,sans-serif;margin:24px;max-width:1100px}"
          "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}"
          "td:first-child,td:nth-child(2),th:first-child{text-align:left}"
          "tr.worse{background:#fbd5d5}tr.better{background:#d5f5dd}tr.noise{color:#888}"
          "tr.window{color:#888;font-style:italic}svg text{font-size:11px}"
          ".legend span{padding:0 8px}</style></head><body>\n<h1>pipeprof diff</h1>\n<p>base: ",
          f);
    esc(f, d->source[0]);
    fputs("<br>new: ", f);
    esc(f, d->source[1]);
    fprintf(f, "</p>\n<p>A change is significant when the rank test of its samples holds "
               "after Holm's correction over %zu tests at %g, its 95%% bootstrap interval "
               "excludes 0, and it is %g%% or more (docs/diff.md).</p>\n<h2>Findings</h2>\n<ul>\n",
            d->ntests, d->alpha, 100 * d->min_change);
    for (size_t i = 0; i < d->nfindings; i++) {
        fputs("<li>", f);
        esc(f, d->findings[i]);
        fputs("</li>\n", f);
    }
    if (!d->nfindings)
        fputs("<li>none: no figure changed beyond noise</li>\n", f);
    fputs("</ul>\n<h2>Within noise</h2>\n<ul>\n", f);
    for (size_t i = 0; i < d->nnoise; i++) {
        fputs("<li>", f);
        esc(f, d->noise[i]);
        fputs("</li>\n", f);
    }
    if (!d->nnoise)
        fputs("<li>none</li>\n", f);
    fputs("</ul>\n<h2>Distributions per batch</h2>\n<p class=\"legend\"><span "
          "style=\"color:#3b75af\">&#9632; base</span><span style=\"color:#ef8636\">&#9632; "
          "new</span> (share of each run's batches; dashed: p50)</p>\n",
          f);
    for (size_t i = 0; i < d->ndists; i++)
        distribution_svg(f, &d->dists[i]);
    fputs("<h2>Figures</h2>\n<p>Red: significantly worse; green: significantly better; grey: "
          "within noise; italic: one value a run, not tested.</p>\n",
          f);
    figure_table(f, d);
    fputs("</body></html>\n", f);
}

int pp_diff_write_html(const pp_diff *d, const char *path, pp_error *err) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    page(f, d);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    int rc = pp_outfile_write_file(path, buf, len, err);
    free(buf);
    return rc;
}
