/* outfile.h — writing a file so that a failure never leaves a partial file
 * that looks complete: bytes go to "<path>.tmp.<pid>" through a large
 * buffer, and only pp_outfile_commit renames it onto `path`. */
#ifndef PP_IO_OUTFILE_H
#define PP_IO_OUTFILE_H

#include <signal.h>
#include <stdio.h>

#include "core/error.h"

/* A write past the file size limit (ulimit -f) raises SIGXFSZ, whose
 * default action kills the process mid-write. Between these two calls the
 * calling thread has SIGXFSZ blocked, so such a write fails with EFBIG
 * instead and the writer reports it; the restore drops the SIGXFSZ that
 * was left pending. */
void pp_xfsz_block(sigset_t *saved);
void pp_xfsz_restore(const sigset_t *saved);

typedef struct pp_outfile {
    sigset_t saved_mask; /* the thread's mask before open blocked SIGXFSZ */
    int masked;          /* SIGXFSZ blocked until commit or abort */
    FILE *f;
    char *path;
    char *tmp_path;
    char *buf;
    int failed; /* a write failed; commit will refuse */
} pp_outfile;

/* Removes every temporary file being written now. Async-signal-safe: for a
 * program's SIGTERM / SIGINT handler (the CLI's), so that a killed write
 * leaves nothing behind. (SIGKILL cannot be caught: its FILE.tmp.PID stays.) */
void pp_outfile_remove_pending(void);
/* Opens the temporary file; PP_EIO with a message naming `path` in err. */
int pp_outfile_open(pp_outfile *o, const char *path, pp_error *err);
/* Appends bytes; errors are remembered and reported by commit. */
void pp_outfile_write(pp_outfile *o, const void *data, size_t len);
/* Flushes, closes and renames into place; on any failure removes the
 * temporary file and returns PP_EIO with a message. */
int pp_outfile_commit(pp_outfile *o, pp_error *err);
/* Closes and removes the temporary file (after a failure elsewhere). */
void pp_outfile_abort(pp_outfile *o);
/* Writes `len` bytes as the whole file at `path`: open, write and commit. */
int pp_outfile_write_file(const char *path, const void *data, size_t len, pp_error *err);

#endif
