/* pp_trace_convert: a trace from one format to another, whole or a time
 * window of it.
 *
 * A .pptrace written as .json or .pptrace goes chunk by chunk: a first pass
 * reads everything but the events (the writer's head: strings, tracks,
 * threads, meta), a second hands the events on 65536 at a time
 * (io/trace_read.h) to a writer that appends them (io/trace_write.h), or
 * appends those inside the window (model/window_copy.h). Memory is then one
 * chunk and the head, whatever the trace's size, and the bytes written are
 * those of pp_trace_read + pp_trace_write. Every other pair reads the whole
 * trace first: a .pftrace is written in start order (io/perfetto_order.h),
 * and Chrome JSON is read whole (its begin/end pairs and flows are matched
 * across the file). So are the .pptrace files a chunk cannot carry (an
 * ANNOTATIONS block that reaches back past an EVENTS block), and any whose
 * first pass fails, so that the whole read names the problem. */
#include <string.h>

#include "core/error.h"
#include "io/trace_read.h"
#include "io/trace_write.h"
#include "model/window_copy.h"
#include "pipeprof/io.h"

#define CHUNK_EVENTS 65536 /* one full EVENTS block */

/* The window of `opt` ([INT64_MIN, INT64_MAX) for none); 0 when it keeps
 * every event. */
static int window_of(const pp_convert_options *opt, int64_t *from, int64_t *to) {
    *from = opt && opt->has_from ? opt->from_ns : INT64_MIN;
    *to = opt && opt->has_to ? opt->to_ns : INT64_MAX;
    return (opt && opt->has_from) || (opt && opt->has_to);
}

/* The output of a chunked conversion. */
typedef struct chunk_out {
    const trace_writer *writer;
    void *file;
    pp_model *cut;  /* with a window: the head's strings and tracks, a chunk's events inside */
    int64_t from, to;
    uint64_t events, chunks;
    const char *path; /* the output, for messages */
    pp_error *err;
} chunk_out;

static int write_chunk(void *ctx, const pp_model *chunk) {
    chunk_out *o = ctx;
    if (o->cut) {
        pp_model_clear_events(o->cut);
        int rc = pp_model_append_window(o->cut, chunk, o->from, o->to);
        if (rc)
            return pp_set_error(o->err, rc, "%s: out of memory", o->path);
        chunk = o->cut;
    }
    o->events += pp_model_event_count(chunk);
    o->chunks++;
    return o->writer->events(o->file, chunk, o->err);
}

static int convert_whole(const char *in, const char *out, const pp_convert_options *opt,
                         pp_convert_info *info, pp_error *err) {
    pp_model *m = NULL, *cut = NULL;
    int64_t from, to;
    int rc = pp_trace_read(in, &m, err);
    if (rc != PP_OK && rc != PP_ETRUNCATED) {
        pp_model_free(m);
        return rc;
    }
    pp_error write_err = {{0}};
    int wrc = PP_OK;
    if (window_of(opt, &from, &to) &&
        ((wrc = pp_model_copy_head(m, &cut)) || (wrc = pp_model_append_window(cut, m, from, to))))
        pp_set_error(&write_err, wrc, "%s: out of memory", out);
    const pp_model *written = cut ? cut : m;
    if (wrc == PP_OK)
        wrc = pp_trace_write(written, out, &write_err);
    info->events = pp_model_event_count(written);
    info->truncated_bytes = pp_model_meta_get(m)->truncated_bytes;
    pp_model_free(cut);
    pp_model_free(m);
    if (wrc != PP_OK) {
        *err = write_err;
        return wrc;
    }
    return rc;
}

/* The chunked conversion; PP_EUNSUPPORTED (and nothing written) when the
 * file needs the whole read. */
static int convert_chunks(const char *in, const char *out, pp_format format, size_t chunk_events,
                          const pp_convert_options *opt, pp_convert_info *info, pp_error *err) {
    pptrace_skeleton head;
    pp_error head_err = {{0}};
    int rc = pptrace_read_skeleton(in, &head, &head_err);
    if ((rc != PP_OK && rc != PP_ETRUNCATED) || head.interleaved) {
        pp_model_free(head.model);
        return PP_EUNSUPPORTED;
    }
    chunk_out o = {.writer = format == PP_FORMAT_CHROME_JSON ? &chrome_writer : &pptrace_writer,
                   .path = out, .err = err};
    int opened = window_of(opt, &o.from, &o.to) ? pp_model_copy_head(head.model, &o.cut) : PP_OK;
    if (opened != PP_OK)
        pp_set_error(err, opened, "%s: out of memory", out);
    else
        opened = o.writer->open(&o.file, head.model, out, err);
    if (opened == PP_OK) {
        rc = pptrace_read_chunks(in, &head, chunk_events, write_chunk, &o, err);
        pp_error close_err = {{0}};
        int closed = o.writer->close(o.file, rc == PP_OK || rc == PP_ETRUNCATED, &close_err);
        if (closed != PP_OK) {
            *err = close_err;
            rc = closed;
        }
        info->events = o.events;
        info->truncated_bytes = pp_model_meta_get(head.model)->truncated_bytes;
        info->chunks = o.chunks;
    } else {
        rc = opened;
    }
    pp_model_free(o.cut);
    pp_model_free(head.model);
    return rc;
}

int pp_trace_convert(const char *in, const char *out, const pp_convert_options *opt,
                     pp_convert_info *info, pp_error *err) {
    return pp_trace_convert_chunks(in, out, CHUNK_EVENTS, opt, info, err);
}

int pp_trace_convert_chunks(const char *in, const char *out, size_t chunk_events,
                            const pp_convert_options *opt, pp_convert_info *info, pp_error *err) {
    pp_convert_info ignored;
    if (!in || !out)
        return pp_set_error(err, PP_EINVAL, "pp_trace_convert: in and out are required");
    info = info ? info : &ignored;
    memset(info, 0, sizeof *info);
    pp_format format = pp_format_from_path(out);
    if ((format == PP_FORMAT_CHROME_JSON || format == PP_FORMAT_PPTRACE) && pptrace_is_file(in)) {
        int rc = convert_chunks(in, out, format, chunk_events, opt, info, err);
        if (rc != PP_EUNSUPPORTED)
            return rc;
    }
    return convert_whole(in, out, opt, info, err);
}
