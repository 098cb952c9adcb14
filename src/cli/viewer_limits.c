/* viewer_limits.c — the warning printed after writing a .pftrace or Chrome
 * JSON file too large for Perfetto to open (docs/format-perfetto.md,
 * "Size limits").
 *
 * The Perfetto UI runs its trace processor as WebAssembly in the browser,
 * whose memory is typically capped near 2 GB, and the loaded trace takes 2-4
 * times the file's size; the native trace processor (`trace_processor
 * --httpd`, which the UI can use instead) refuses files of 4 GiB or more (a
 * 32-bit size check, google/perfetto#3537). pipeprof writes such a file
 * whole — it is a correct trace for other tools, and splitting a Perfetto
 * trace into parts would split tracks and flows across files — and says so
 * on stderr: the command still succeeds. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "pipeprof/io.h"

#define UI_LIMIT_BYTES ((uint64_t)2 << 30) /* 2 GiB */

/* The UI limit: PIPEPROF_VIEWER_LIMIT_BYTES (for tests and for users whose
 * browser allows less or more), else 2 GiB. The trace processor's cap is
 * twice it (4 GiB by default). */
static uint64_t ui_limit(void) {
    const char *env = getenv("PIPEPROF_VIEWER_LIMIT_BYTES");
    char *end = NULL;
    unsigned long long v = env ? strtoull(env, &end, 10) : 0;
    return env && *env && end && *end == 0 && v > 0 ? (uint64_t)v : UI_LIMIT_BYTES;
}

void cli_viewer_limits_warn(const char *path) {
    pp_format f = pp_format_from_path(path);
    struct stat st;
    if ((f != PP_FORMAT_PERFETTO && f != PP_FORMAT_CHROME_JSON) || stat(path, &st) != 0)
        return;
    uint64_t size = (uint64_t)st.st_size, ui = ui_limit();
    if (size >= 2 * ui)
        cli_error("warning: %s is %llu bytes: Perfetto's trace processor loads at most %llu "
                  "(google/perfetto#3537), so neither ui.perfetto.dev nor trace_processor --httpd "
                  "opens it; pipeprof analyze reads it, and a shorter recording makes a smaller "
                  "one", path, (unsigned long long)size, (unsigned long long)(2 * ui - 1));
    else if (size > ui)
        cli_error("warning: %s is %llu bytes, more than the about %llu that ui.perfetto.dev opens "
                  "in a browser: run trace_processor --httpd %s and open the UI, which then uses "
                  "it", path, (unsigned long long)size, (unsigned long long)ui, path);
}
