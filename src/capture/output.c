/* Ending a session and writing what it recorded: the glue between the
 * recording core and the file writers, so that `stop` can flush to the
 * output the session was opened with (a name pattern expanded there, so
 * that %n numbers the sessions that write). */
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

int pp_session_stop(pp_session *s, pp_error *err) {
    int rc = pp_session_halt(s);
    if (rc != PP_OK)
        return pp_set_error(err, rc, "stop: the session is not recording");
    if (pp_pptrace_stream_active(s)) /* the flight recorder wrote all but the end */
        return pp_pptrace_stream_finish(s, err);
    const char *out = pp_session_output(s);
    if (!out)
        return PP_OK;
    if (!strchr(out, '%'))
        return pp_session_write(s, out, err);
    char path[4096];
    rc = pp_output_expand(out, pp_output_next_session_no(), path, sizeof path, err);
    return rc ? rc : pp_session_write(s, path, err);
}
