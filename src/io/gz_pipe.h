/* gz_pipe.h — inflating a gzip stream on a thread of its own, a few chunks
 * ahead of the JSON scanner that reads it (io/json_scan.c). Not public.
 *
 * Why: reading a .json.gz is inflating plus parsing, each a comparable
 * share of a core (docs/format-chrome-json.md); on a machine with a spare
 * core the two overlap and the read takes about as long as the slower of
 * them. The thread owns the gzFile until gz_pipe_stop; what it reads comes
 * out in order, byte for byte what gzread would have returned, and an error
 * comes out where gzread would have reported it, with what gzerror and
 * errno said then. */
#ifndef PP_IO_GZ_PIPE_H
#define PP_IO_GZ_PIPE_H

#include <stddef.h>
#include <zlib.h>

typedef struct gz_pipe gz_pipe;

/* Starts inflating `gz` in reads of `chunk` bytes on a thread. NULL when
 * there is no spare CPU or no thread or memory could be had: the caller
 * then calls gzread itself. */
gz_pipe *gz_pipe_start(gzFile gz, size_t chunk);

/* What a read ended with when it failed: gzerror's code and text, and
 * errno when the code is Z_ERRNO. */
typedef struct gz_pipe_error {
    int zerr, err_no;
    char why[160];
} gz_pipe_error;

/* Fills *out from gzerror(gz) and errno after a failed gzread, leaving out
 * the "<fd:N>: " zlib puts before its text for a descriptor it was opened
 * on (a user knows the file by its name, which the caller gives). */
void gz_pipe_error_read(gzFile gz, gz_pipe_error *out);

/* Copies the next inflated bytes, at most `max`, into dst (waiting for
 * them): the count, 0 at the end of the stream, -1 on an error (*error
 * says which). */
long gz_pipe_read(gz_pipe *p, char *dst, size_t max, gz_pipe_error *error);

/* Stops the thread (it finishes the read it is in) and frees the pipe; the
 * gzFile is the caller's again, to close. NULL is fine. */
void gz_pipe_stop(gz_pipe *p);

#endif
