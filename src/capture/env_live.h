/* env_live.h — the parts of env activation (env.c) that issue 16 added:
 * collection settings and a live stream from the environment.
 *
 *   PIPEPROF_COLLECT   a collect list ("spans,hw,ops,transfers,api", "all")
 *   PIPEPROF_DEVICES   devices to record, comma separated
 *   PIPEPROF_LIVE_FD   an inherited descriptor (a pipe's write end) that gets
 *                      every span as subscription records (pipeprof top) */
#ifndef PP_CAPTURE_ENV_LIVE_H
#define PP_CAPTURE_ENV_LIVE_H

#include "pipeprof/trace.h"

/* Whether the environment asks for a live stream (activates a session even
 * without PIPEPROF_OUTPUT). */
int pp_env_live_requested(void);
/* Applies PIPEPROF_COLLECT and PIPEPROF_DEVICES to the not yet started
 * session; 0, or -1 after printing what is wrong. */
int pp_env_apply_settings(pp_session *s);
/* Subscribes the started session to PIPEPROF_LIVE_FD when set (and removes
 * the variable, so the program's own children do not write to it too); 0,
 * or -1 after printing what is wrong. */
int pp_env_live_open(pp_session *s);
/* Ends the live stream after the session stopped: the rest is sent. */
void pp_env_live_close(void);

#endif
