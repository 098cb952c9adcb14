/* cupti_record.h — recording converted CUPTI spans (cupti_convert.h) into a
 * session: each (device, stream) gets the track `GPU <device>/stream
 * <stream>`, each API call the host track of the thread that made it (the
 * one its NVTX and ITT ranges are on), and every span its correlation id,
 * bytes and queue time as annotations.
 *
 * No CUPTI call is made here, so tests record hand-built spans through it
 * and read the session back. Not thread-safe: the collector calls it under
 * its lock, on the thread CUPTI hands buffers to (off the program's hot
 * path: tracks and names are looked up in small tables, pp_intern on a
 * name's first use). */
#ifndef PP_CUPTI_RECORD_H
#define PP_CUPTI_RECORD_H

#include "inject/cupti_convert.h"

#define CUPTI_NAME_CACHE 1024 /* direct-mapped, by the address of the text */

typedef struct cupti_stream_track {
    uint32_t device, stream;
    pp_track track;
    int64_t first_ns; /* where its clock mark goes */
} cupti_stream_track;

typedef struct cupti_thread_track {
    uint32_t tid;
    pp_track track;
} cupti_thread_track;

typedef struct cupti_recorder {
    pp_session *s;
    cupti_stream_track *streams;
    size_t nstreams, capstreams;
    cupti_thread_track *threads;
    size_t nthreads, capthreads;
    struct {
        const char *text;
        pp_str id;
    } names[CUPTI_NAME_CACHE];
    pp_str key_correlation, key_bytes, key_queue;
    uint64_t lost; /* spans not recorded: no memory for a track */
} cupti_recorder;

/* Starts recording into `s`; PP_ENOMEM when a key cannot be interned. */
int cupti_recorder_init(cupti_recorder *r, pp_session *s);
/* Records one span on the calling thread (its buffer of the session). */
void cupti_recorder_add(cupti_recorder *r, const cupti_span *sp);
/* A "clock alignment" mark on every GPU track at its first span: method
 * "cuptiGetTimestamp", error_ns (the bound over the run), drift_ns;
 * cupti_dropped when CUPTI dropped records, cupti_lost when spans found no
 * memory for their track. */
void cupti_recorder_mark_clocks(cupti_recorder *r, int64_t error_ns, int64_t drift_ns,
                                uint64_t dropped);
void cupti_recorder_free(cupti_recorder *r);

#endif
