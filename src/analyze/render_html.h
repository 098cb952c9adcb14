/* render_html.h — the parts of the HTML report (docs/report-html.md).
 *
 * render_html.c writes the page: the static part (report_page.html, embedded
 * at build time) with the data in a <script type="application/json"> element
 * at its PP_DATA marker. render_html_data.c writes the report's figures and
 * render_html_timeline.c the timeline. The page reads every text through
 * textContent, never as markup; the only escaping the data needs beyond JSON's
 * is '<' (as \u003c), so that no name can close the script element. */
#ifndef PP_ANALYZE_RENDER_HTML_H
#define PP_ANALYZE_RENDER_HTML_H

#include "analyze/report.h"
#include "io/outfile.h"

/* Full spans on the timeline at most; beyond, the busiest stretch of this
 * many spans is kept in full and the rest is summarized per bucket. */
#define HTML_SPAN_CAP 20000
/* Buckets per track of the summarized timeline. */
#define HTML_BUCKETS 2000
/* Rows of the per-cycle table at most (the first ones by batch number). */
#define HTML_BATCH_ROWS 2000

/* The page's static text, embedded at build time (report_page.c). */
extern const char *const html_page;
extern const unsigned long html_page_len;

/* JSON into the page. */
void hj_raw(pp_outfile *o, const char *s);
void hj_str(pp_outfile *o, const char *s);
void hj_i64(pp_outfile *o, int64_t v);
void hj_dbl(pp_outfile *o, double v);
/* `"key": ` with a leading ", " unless first. */
void hj_key(pp_outfile *o, const char *key, int first);

/* A histogram of positive durations in bins of a quarter octave: bin k holds
 * [2^(k/4), 2^((k+1)/4)) ns. */
#define HTML_HIST_BINS 256
int html_hist_bin(int64_t ns);
/* Writes [[lower edge ns, count], ...] of the bins first..last non-empty. */
void hj_hist(pp_outfile *o, const uint64_t *counts);

/* The report's figures: "source" .. "dp" members (render_html_data.c). */
int html_write_report(const pp_report *r, pp_outfile *o, pp_error *err);
/* The "timeline" member (render_html_timeline.c); `m` is the report's model. */
int html_write_timeline(const pp_report *r, const pp_model *m, pp_outfile *o, pp_error *err);

#endif
