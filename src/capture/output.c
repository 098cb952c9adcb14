/* Ending a session and writing what it recorded: the glue between the
 * recording core and the file writers, so that `stop` can flush to the
 * output the session was opened with (a name pattern expanded there, so
 * that %n numbers the sessions that write). */
#include <stdio.h>
#include <string.h>

#include "capture/output_name.h"
#include "capture/pptrace_stream.h"
#include "core/error.h"
#include "core/session.h"
#include "pipeprof/io.h"

int pp_session_write(pp_session *s, const char *path, pp_error *err) {
    if (!s || !path)
        return pp_set_error(err, PP_EINVAL, "no session or no output path");
    /* A file is what was recorded, not a snapshot of a session still going. */
    if (pp_session_recording(s))
        return pp_set_error(err, PP_ESTATE,
                            "%s: the session is still recording (stop or pause it first)", path);
    pp_model *m = NULL;
    int rc = pp_model_from_session(s, &m);
    if (rc != PP_OK)
        return pp_set_error(err, rc, "%s: cannot collect the records: %s", path, pp_strerror(rc));
    rc = pp_trace_write(m, path, err);
    pp_model_free(m);
    return rc;
}

int pp_session_stop_written(pp_session *s, char *written, size_t cap, pp_error *err) {
    if (cap)
        written[0] = '\0';
    int rc = pp_session_halt(s);
    if (rc != PP_OK)
        return pp_set_error(err, rc, "stop: the session is not recording");
    if (pp_pptrace_stream_active(s)) { /* the flight recorder wrote all but the end */
        pp_pptrace_stream_path(s, written, cap);
        return pp_pptrace_stream_finish(s, err);
    }
    const char *out = pp_session_output(s);
    if (!out)
        return PP_OK;
    char path[4096];
    if (!strchr(out, '%'))
        snprintf(path, sizeof path, "%s", out);
    else if ((rc = pp_output_expand(out, pp_output_next_session_no(), path, sizeof path, err)))
        return rc;
    if (cap)
        snprintf(written, cap, "%s", path);
    return pp_session_write(s, path, err);
}

int pp_session_stop(pp_session *s, pp_error *err) {
    char written[4096];
    return pp_session_stop_written(s, written, sizeof written, err);
}
