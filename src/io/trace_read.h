/* trace_read.h — the readers on an open descriptor (not public), so that
 * pp_trace_read opens a path once: a pipe or FIFO can be read only once, and
 * the format sniff must not use up what the reader needs. Each takes over
 * `fd` (closes it); `path` names the input in messages. */
#ifndef PP_IO_TRACE_READ_H
#define PP_IO_TRACE_READ_H

#include "pipeprof/io.h"

int pp_pptrace_read_fd(int fd, const char *path, pp_model **out, pp_error *err);
int pp_chrome_read_fd(int fd, const char *path, pp_model **out, pp_error *err);

#endif
