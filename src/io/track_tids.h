/* track_tids.h — the thread id each track is exported with (Chrome JSON,
 * Perfetto): a thread track keeps its OS thread id, so that the rows of an
 * export are the program's real threads (docs/format-chrome-json.md). */
#ifndef PP_IO_TRACK_TIDS_H
#define PP_IO_TRACK_TIDS_H

#include "pipeprof/model.h"

/* out[i] (one per track): the OS thread id of track i when it is a thread
 * track with tid > 0 that no other track has and that lies outside
 * [lo, hi], the numbers the writer gives tracks without one; else -1 (the
 * writer's own number). PP_OK or PP_ENOMEM. */
int track_export_tids(const pp_model *m, int64_t lo, int64_t hi, int64_t *out);

#endif
