/* chrome_read.h — what the Chrome JSON reader's files share (not public):
 * chrome_read.c walks the file and turns events into model events;
 * chrome_read_args.c reads args objects, metadata (M) events, counters and
 * otherData. */
#ifndef PP_IO_CHROME_READ_H
#define PP_IO_CHROME_READ_H

#include "core/grow.h"
#include "io/chrome_tracks.h"
#include "io/json_scan.h"
#include "pipeprof/io.h"

/* One event as read, before it becomes model events. */
typedef struct raw_event {
    jstr ph, name, cat;
    chrome_id pid, tid;
    int has_ts, has_dur, has_id;
    int64_t ts_ns, dur_ns;
    uint64_t id;
    const char *args, *args_end; /* the raw args object, parsed once ph is known */
    int args_done;               /* args already parsed into `fields` (ph came first) */
    pp_event fields;             /* pipeline fields from args */
} raw_event;

#define CHROME_NAME_CACHE 256 /* a power of two */

typedef struct chrome_cached_name {
    uint64_t head;    /* the first 8 bytes (fewer: zero-filled), compared first */
    const char *text; /* the model's copy */
    size_t len;
    uint32_t id;
} chrome_cached_name;

/* A B (or b) waiting for its E (or e). */
typedef struct open_span {
    pp_event ev;
    size_t first_ann, nann; /* in reader.open_anns */
    uint32_t cat;           /* async: matched by (cat, id, name) */
} open_span;

typedef struct reader {
    jreader j;
    pp_model *m;
    chrome_tracks tracks;
    jscratch scratch;
    pp_annotation *anns; /* annotations of the event being built */
    size_t nanns, capanns;
    open_span *open;     /* B/E stacks and open async ranges, all tracks */
    size_t nopen, capopen;
    pp_annotation *open_anns;
    size_t nopen_anns, capopen_anns;
    uint64_t ignored, unmatched;
    chrome_cached_name names[CHROME_NAME_CACHE];
    pp_model_meta file_meta; /* from otherData */
    int have_file_meta;
    pp_json_dialect dialect; /* AUTO until the first complete event decides */
} reader;

/* Interns a string token into the model (reports bad escapes). */
int chrome_intern(reader *r, jcur *c, const jstr *s, uint32_t *id);
/* Appends an event and its annotations. */
int chrome_add_event(reader *r, const pp_event *ev, const pp_annotation *anns, size_t n);

/* Fills ev's pipeline fields from args (stage, batch_id, hw_ns, ...) and
 * collects every other scalar arg in r->anns. */
int parse_span_args(reader *r, jcur *c, const raw_event *e, pp_event *ev);
/* The same for the args object at the cursor. */
int parse_span_args_at(reader *r, jcur *c, pp_event *ev);
/* Keeps the event's "cat" as a CHROME_CAT_KEY annotation when it is not
 * `written`, the one the writer would give it (NULL: none). */
int chrome_keep_cat(reader *r, jcur *c, const jstr *cat, const char *written);
/* 1 for an event of a profiler's bookkeeping (chrome_dialect.c). */
int chrome_bookkeeping(const reader *r, const raw_event *e);
/* The "cat" the writer gives an event of phase ph (NULL: none). */
const char *chrome_written_cat(char ph, const pp_event *ev);
/* The dialect of the trace, decided by its first complete event when it is
 * still PP_DIALECT_AUTO (chrome_dialect.c). */
void chrome_dialect_decide(reader *r, const raw_event *e, const pp_event *ev);
/* Turns a PipelineProfiler event into a device exec, partition or merge:
 * role, stage, hardware time (chrome_dialect.c). */
int chrome_dialect_event(reader *r, const raw_event *e, pp_event *ev);
/* Applies an M event (process/thread names, sort indexes, pipeprof_track). */
int apply_metadata(reader *r, jcur *c, const raw_event *e);
/* One counter event per numeric arg of a C event. */
int emit_counters(reader *r, jcur *c, const raw_event *e, pp_event *ev);
/* Reads pipeprof's otherData (metadata and per-thread drops). */
int read_other_data(reader *r, jcur *c);

#endif
