/* pipeprof/merge.h — several traces on one timeline (docs/merging.md).
 *
 * The traces of a pipeline's processes (a preprocessing process feeding an
 * inference server), or a host trace and a device trace, are merged into one
 * model: each input's tracks become tracks of their own (process ids that
 * collide are renumbered, names are kept), strings are shared, and every
 * input's timestamps are moved onto the clock of the first input.
 *
 * Clock alignment, for each input after the first, against an input
 * already aligned:
 *   1. an offset the caller gives (pp_merge_input.has_offset) always wins:
 *      it is what the user asked for; its error is not known;
 *   2. the same clock: both recorded the same clock (CLOCK_MONOTONIC) on the
 *      same boot of the same host (pp_model_meta clock and boot_id): offset
 *      0, error that of the input it shares the clock with;
 *   3. sync marks: both recorded instants named `sync_name` ("sync") at the
 *      same moments; the k-th mark of one is paired with the k-th of the
 *      other, each pair estimates the offset, and the offset is the midpoint
 *      of the smallest and largest estimate, with half their spread as its
 *      error bound (not known for a single pair);
 *   4. otherwise the merge is refused (PP_EINVAL, the message says what to
 *      record or give).
 * Batch ids and flow ids are global: the same batch id in two inputs is one
 * batch, so cycles and end-to-end latency span the processes, and the steps
 * of one flow id in several inputs become one flow, begun by its first step
 * and ended by its last. */
#ifndef PIPEPROF_MERGE_H
#define PIPEPROF_MERGE_H

#include "pipeprof/common.h"
#include "pipeprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_merge_input {
    const pp_model *model;
    const char *name;        /* how messages and the alignment name it (its file) */
    int has_offset;          /* the caller gives its offset */
    int64_t offset_ns;       /* added to its timestamps to put them on the first input's clock */
} pp_merge_input;

typedef struct pp_merge_options {
    const char *sync_name;   /* name of the sync marks; NULL: "sync" */
} pp_merge_options;

typedef enum pp_align_method {
    PP_ALIGN_REFERENCE = 0,  /* the first input: its clock is the merged trace's */
    PP_ALIGN_OFFSET = 1,     /* the caller's offset */
    PP_ALIGN_SAME_CLOCK = 2, /* same clock, same boot, same host */
    PP_ALIGN_SYNC = 3        /* computed from sync mark pairs */
} pp_align_method;

/* How one input was put on the merged clock. */
typedef struct pp_alignment {
    pp_align_method method;
    size_t to;               /* the input it was aligned against */
    int64_t offset_ns;       /* added to its timestamps */
    int64_t error_ns;        /* bound on |offset error|; -1: not known */
    uint32_t pairs;          /* sync mark pairs used (PP_ALIGN_SYNC) */
} pp_alignment;

/* Aligns the n inputs (out receives n entries) by the rules above.
 * PP_EINVAL with a message naming the inputs when one cannot be aligned. */
int pp_model_align(const pp_merge_input *in, size_t n, const pp_merge_options *o,
                   pp_alignment *out, pp_error *err);

/* Merges the n >= 1 inputs into a new model (sorted by time). Its meta has
 * the first input's clock, the sums of the inputs' loss counters, the level
 * they share (-1 when they differ), `alignment` saying how each input was
 * aligned, and `alignment_error_ns` the largest error bound (-1 when any is
 * not known). PP_EINVAL (message) when an input cannot be aligned or an
 * offset moves an event out of the time range; PP_ENOMEM. */
int pp_model_merge(const pp_merge_input *in, size_t n, const pp_merge_options *o,
                   pp_model **out, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
