/* top_view.h — what `pipeprof top` shows, computed from subscription
 * records (pipeprof/subscribe.h) over a sliding window of the last seconds.
 *
 * Figures follow docs/analysis.md where a live window allows: busy time is
 * the union of a device's exec intervals clipped to the window, bubbles are
 * the gaps between merged busy intervals (leading and trailing idle are not
 * bubbles), a stage's hold time for a batch is the hull of its exec,
 * partition, merge and stage spans (analyze's hold time; analyze's stage
 * time counts only the slowest part of a data-parallel stage, so the view
 * names its figure "hold"), and a cycle's latency is the longest hold of
 * a batch that every stage seen in the window has finished (its bottleneck
 * is that stage). docs/cli.md says how the view reads. */
#ifndef PP_CLI_TOP_VIEW_H
#define PP_CLI_TOP_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct top_view top_view;

top_view *top_view_create(int64_t window_ns);
void top_view_free(top_view *v);
/* Takes `n` records (n * PP_SUBREC_SIZE bytes); returns how many were not
 * valid records (a stream that is not pipeprof's, a span that ends before
 * it starts, loss totals no session reaches), which are skipped. Names are
 * kept escaped for a terminal (\xHH for control and non-UTF-8 bytes). */
size_t top_view_add(top_view *v, const void *records, size_t n);
/* Writes the view at time `now_ns` (session clock), `title` on its first
 * line. */
void top_view_render(top_view *v, int64_t now_ns, const char *title, FILE *out);
/* The latest end time received (0 before any span). */
int64_t top_view_last_end(const top_view *v);
/* Span records received in all. */
uint64_t top_view_received(const top_view *v);

#endif
