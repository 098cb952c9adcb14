/* costs_build.h — the state of building a description of costs from a
 * report (costs.c: the pass over the trace's spans and the rows;
 * costs_timing.c: servers, hand-offs, queue depth, device units, shared
 * devices, the measured figures and the notes). */
#ifndef PP_WHATIF_COSTS_BUILD_H
#define PP_WHATIF_COSTS_BUILD_H

#include "whatif/whatif_impl.h"

/* One (stage, batch) cell as the pass finds it. */
typedef struct cell {
    int64_t span_start, span_end;   /* the stage spans' hull (server time) */
    int64_t any_start, any_end;     /* every labeled item's hull */
    int64_t partition, merge;
    int64_t part_start[PP_WHATIF_MAX_PARTS], part_end[PP_WHATIF_MAX_PARTS];
    uint32_t part_execs[PP_WHATIF_MAX_PARTS];
    int64_t part_hw[PP_WHATIF_MAX_PARTS];     /* sum of hw_ns; -1 once one is unknown */
    int64_t part_fixed[PP_WHATIF_MAX_PARTS];  /* sum of submit + completion */
    uint32_t span_track;            /* the stage span's track (+1; 0 none) */
} cell;

/* What the build works with besides the result. */
typedef struct build {
    const pp_report *r;
    const pp_model *m;
    pp_event_columns ev;
    pp_whatif_costs *c;
    size_t nrows;
    int64_t *row_batch;             /* the complete batches, ascending */
    cell *cells;                    /* stage s, row j at [s * nrows + j] */
    uint32_t *string_stage;         /* model string id -> stage + 1 (0: none) */
    uint32_t *track_device;         /* model track -> report device + 1 (0: none) */
    int8_t (*part_of)[PP_WHATIF_MAX_DEVICES]; /* stage -> device -> part, -1 */
    int have_items[PP_WHATIF_MAX_STAGES];
    uint32_t span_tracks[PP_WHATIF_MAX_STAGES]; /* distinct stage-span tracks: 0, 1 or 2 (many) */
    uint32_t first_track[PP_WHATIF_MAX_STAGES];
    const pp_annotation *ann;       /* the model's annotations, by event */
    size_t nann, ann_at;
    uint32_t submit_key, completion_key;
} build;

static inline int64_t cell_start(const cell *cl) {
    return cl->span_end >= cl->span_start ? cl->span_start : cl->any_start;
}
static inline int64_t cell_end(const cell *cl) {
    return cl->span_end >= cl->span_start ? cl->span_end : cl->any_end;
}

/* Appends a note (text malloc'd, taken; NULL: out of memory). */
int wi_note_add(pp_whatif_costs *c, char *text);
/* Servers and hand-offs of stage s (after the queue depth). */
int wi_stage_timing(build *b, uint32_t s);
/* Which stages wait for a later one on their thread (pattern-labeled). */
void wi_shared_threads(build *b);
/* The recorded queue depth, else the inferred one. */
void wi_queue_depth(build *b);
/* Each device's units. */
int wi_device_units(build *b);
/* The measured figures the replay is compared with. */
void wi_measured_figures(build *b);
int wi_measured_throughput(build *b);
/* The notes on what was inferred. */
int wi_notes_write(pp_whatif_costs *c);

#endif
