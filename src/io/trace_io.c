/* Choosing a reader or writer: writers by extension, readers by content. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "pipeprof/io.h"

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

pp_format pp_format_from_path(const char *path) {
    if (ends_with(path, ".pptrace"))
        return PP_FORMAT_PPTRACE;
    if (ends_with(path, ".json.gz"))
        return PP_FORMAT_CHROME_JSON_GZ;
    if (ends_with(path, ".json"))
        return PP_FORMAT_CHROME_JSON;
    if (ends_with(path, ".pftrace"))
        return PP_FORMAT_PERFETTO;
    if (ends_with(path, ".csv"))
        return PP_FORMAT_CSV;
    if (ends_with(path, ".html"))
        return PP_FORMAT_HTML;
    return PP_FORMAT_UNKNOWN;
}

const char *pp_format_name(pp_format f) {
    switch (f) {
    case PP_FORMAT_PPTRACE: return "pptrace";
    case PP_FORMAT_CHROME_JSON: return "chrome-json";
    case PP_FORMAT_CHROME_JSON_GZ: return "chrome-json-gz";
    case PP_FORMAT_PERFETTO: return "perfetto";
    case PP_FORMAT_CSV: return "csv";
    case PP_FORMAT_HTML: return "html";
    default: return "unknown";
    }
}

int pp_trace_read(const char *path, pp_model **out, pp_error *err) {
    unsigned char magic[8] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return pp_set_error(err, errno == ENOENT ? PP_ENOTFOUND : PP_EIO, "%s: cannot open: %s",
                            path, strerror(errno));
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    if (n >= 7 && memcmp(magic, "PPTRACE", 7) == 0)
        return pp_pptrace_read(path, out, err);
    /* by name: a Perfetto trace's first byte, '\n', may also start JSON */
    if (pp_format_from_path(path) == PP_FORMAT_PERFETTO)
        return pp_set_error(err, PP_EUNSUPPORTED,
                            "%s: pipeprof writes Perfetto traces but does not read them (read "
                            "the .pptrace or .json it was written from)", path);
    return pp_chrome_read(path, out, err);
}

int pp_trace_write(const pp_model *m, const char *path, pp_error *err) {
    switch (pp_format_from_path(path)) {
    case PP_FORMAT_PPTRACE: return pp_pptrace_write(m, path, err);
    case PP_FORMAT_CHROME_JSON: return pp_chrome_write(m, path, err);
    case PP_FORMAT_PERFETTO: return pp_perfetto_write(m, path, err);
    default:
        return pp_set_error(err, PP_EUNSUPPORTED,
                            "%s: cannot write this format (use .pptrace, .json or .pftrace)", path);
    }
}
