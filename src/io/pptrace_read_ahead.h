/* pptrace_read_ahead.h — decoding the EVENTS and ANNOTATIONS blocks of a
 * version-2 .pptrace on worker threads, ahead of the reader
 * (io/pptrace_read.c). Not public.
 *
 * Why: most of a read is decoding varints into the model's columns and the
 * kernel faulting those columns' fresh pages in, and both split across
 * cores. The reader sizes the model for the file's END totals first; the
 * workers then decode blocks straight into their final slots, each
 * checking its block's CRC, layout and values, while the reader goes on
 * block by block in file order as always: it takes a decoded block's rows
 * (pptrace_ahead_take) and commits them under the model's rules, or, for a
 * block a worker found anything wrong with, reads it itself the usual way.
 * So every message and every truncation rule is the single-threaded
 * reader's, and a file it would refuse is refused with the same words.
 *
 * The workers write only slots inside the reserved room, which the reader
 * does not grow while they run, and only rows of blocks the reader has not
 * committed yet. */
#ifndef PP_IO_PPTRACE_READ_AHEAD_H
#define PP_IO_PPTRACE_READ_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "model/event_slots.h"

typedef struct pptrace_ahead pptrace_ahead;

/* The room reserved for the decoded rows: event slots from event index 0
 * (`events` rows of room) and the annotation table from index 0. */
typedef struct pptrace_ahead_room {
    pp_event_slots events;
    size_t nevents;
    pp_ann *annotations;
    size_t nannotations;
} pptrace_ahead_room;

/* Scans the block heads of the file open as fd (`size` bytes; the first
 * block at `first_block`) and starts workers on its EVENTS and ANNOTATIONS
 * blocks whose rows fit the room. NULL when there is nothing to gain (one
 * CPU, fewer than two such blocks) or no thread or memory could be had:
 * the reader then reads alone, as it can always do. */
pptrace_ahead *pptrace_ahead_start(int fd, uint64_t size, uint64_t first_block,
                                   const pptrace_ahead_room *room);

/* For the block at file offset `block_at`, which the reader reaches in file
 * order and whose first row is row `first_row` of its table: waits until
 * it is decoded and returns its row count when it was decoded cleanly into
 * the slots from first_row on (the reader commits them), or -1 when the
 * block is not one of the jobs, something in it was wrong, or it went to
 * other slots (the reader then reads it itself, which names the problem).
 * Either way no worker touches the block's slots any more. */
long pptrace_ahead_take(pptrace_ahead *a, uint64_t block_at, size_t first_row);

/* Reads up to n bytes of fd at file offset `at`, fewer only at the end of
 * the file: the count, or -1 with errno set on a read error (the reader's
 * and the workers' one read). */
long pptrace_pread(int fd, void *dst, size_t n, uint64_t at);

/* Stops the workers (those still decoding finish their block), waits for
 * them and frees everything; NULL is fine. Returns the end of the event
 * slots any job wrote (0: none), for a reader that stops before it commits
 * them all (pp_model_events_unreserve). */
size_t pptrace_ahead_stop(pptrace_ahead *a);

#endif
