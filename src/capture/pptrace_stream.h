/* pptrace_stream.h — the flight recorder: a session's .pptrace written
 * while the program records, so that a process killed by any signal (SIGKILL
 * included) or a crash leaves a file holding everything but the last
 * moments (docs/recording.md, "Flight recorder").
 *
 * A writer thread follows the session (core/follow.h: published records
 * only; the recording threads never wait for it) and every
 * PP_STREAM_PERIOD_MS appends what was recorded to the file as complete
 * .pptrace blocks: new strings, new tracks, then events with their
 * annotations. Until the session stops the file has no END block, and
 * readers call it truncated and recover every complete block. At stop the
 * thread writes the rest, the thread table, META and END, one batch of
 * events at a time: stopping needs no model of the whole recording. */
#ifndef PP_CAPTURE_PPTRACE_STREAM_H
#define PP_CAPTURE_PPTRACE_STREAM_H

#include "core/error.h"
#include "pipeprof/trace.h"

/* How often the writer thread appends to the file. A record reaches the
 * file at most two periods after it was recorded (a thread's last record
 * waits one period for annotations that may follow it). */
#define PP_STREAM_PERIOD_MS 100

typedef struct pp_pptrace_stream pp_pptrace_stream;

/* Creates `path` (replacing any file there) and starts writing `s` to it.
 * Call it before the session records (it follows from what is recorded
 * now). PP_EUNSUPPORTED under the ring policy (chunks are overwritten
 * there), PP_EIO when the file cannot be created, PP_ENOMEM; the message
 * names the path. At most one stream exists at a time (PP_ESTATE). */
int pp_pptrace_stream_open(pp_session *s, const char *path, pp_error *err);
/* Whether `s` is being streamed out (then pp_session_stop finishes it). */
int pp_pptrace_stream_active(const pp_session *s);
/* For a stopped session that is streamed: drains what is left, writes the
 * thread table, META and END, and closes the file. On a failed write the
 * file is removed and err says why (PP_EIO). PP_ENOTFOUND when `s` has no
 * stream. */
int pp_pptrace_stream_finish(pp_session *s, pp_error *err);
/* The path s's flight recording writes, into buf ("" when it has none). */
void pp_pptrace_stream_path(const pp_session *s, char *buf, size_t cap);
/* pp_session_stop that also says which file it wrote ("" for none):
 * the record log of env activation names it (env.c). */
int pp_session_stop_written(pp_session *s, char *written, size_t cap, pp_error *err);

#endif
