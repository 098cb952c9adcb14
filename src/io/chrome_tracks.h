/* chrome_tracks.h — mapping Chrome (pid, tid) pairs to model tracks while a
 * trace is read. Names and kinds can arrive after a track's first event (M
 * events may come anywhere), so they are collected here and applied to the
 * model's track table once the whole file has been read. */
#ifndef PP_IO_CHROME_TRACKS_H
#define PP_IO_CHROME_TRACKS_H

#include "pipeprof/model.h"

/* A pid or tid as written: a number, or a string (by model string id). */
typedef struct chrome_id {
    int is_str;
    int64_t v;
} chrome_id;

/* What a track learns while the file is read. */
typedef struct chrome_track {
    chrome_id pid, tid;
    uint32_t name;          /* thread_name, 0 = none */
    int has_sort;
    int32_t sort_index;
    int has_pipeprof;       /* a pipeprof_track object restores it exactly */
    pp_track_info exact;    /* valid when has_pipeprof */
    int gpu;                /* carries foreign GPU work (kernel, memcpy, memset) */
    int bookkeeping, work;
    uint32_t device_cat;    /* PipelineProfiler dialect: the device (its cat), 0 = none */  /* carries a profiler's bookkeeping / anything else */
} chrome_track;

typedef struct chrome_process {
    chrome_id pid;
    uint32_t name;          /* process_name, 0 = none */
    uint32_t labels;        /* process_labels ("GPU 0"), 0 = none */
    int has_sort;
    int32_t sort_index;
} chrome_process;

/* An open-addressing hash of entry indexes (slot = index + 1, 0 = free),
 * never more than half full. */
typedef struct chrome_slots {
    uint32_t *slots;
    size_t n; /* a power of two, or 0 before the first entry */
} chrome_slots;

/* Tracks and processes are both found by hash: a file with N distinct
 * (pid, tid) pairs costs O(N) lookups' worth of probes on average, never
 * the O(N^2) of a list scan (tests/io/test_chrome_tracks.c counts them). */
typedef struct chrome_tracks {
    chrome_track *tracks;   /* index = model track index */
    size_t ntracks, cap;
    chrome_slots track_slots; /* by (pid, tid) */
    chrome_process *procs;
    size_t nprocs, capprocs;
    chrome_slots proc_slots;  /* by pid */
    uint64_t probes;        /* occupied slots looked at by lookups: the bound's evidence */
} chrome_tracks;

void chrome_tracks_free(chrome_tracks *t);
/* The model track of (pid, tid), created on first sight. */
int chrome_tracks_get(chrome_tracks *t, pp_model *m, chrome_id pid, chrome_id tid, uint32_t *index);
/* The process entry of pid, created on first sight. */
chrome_process *chrome_tracks_process(chrome_tracks *t, chrome_id pid);
/* Writes names, kinds and sort order into the model's tracks. */
int chrome_tracks_finish(chrome_tracks *t, pp_model *m);

#endif
