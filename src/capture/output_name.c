/* Output name patterns (docs/recording.md, "File name patterns"): one
 * PIPEPROF_OUTPUT or `record -o` for a pipeline of several processes, each
 * with several sessions, that never overwrite each other's traces.
 *
 *   %p  the process id       %n  the process's session number (0, 1, ...)
 *   %h  the host name        %%  a literal percent sign
 *
 * The session number counts the sessions of this process that wrote (or
 * tried to write) a patterned output at stop, so two sessions of one
 * process get trace-PID-0 and trace-PID-1. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "capture/output_name.h"
#include "pipeprof/trace.h"

static atomic_uint next_session_no;

unsigned pp_output_next_session_no(void) {
    return atomic_fetch_add(&next_session_no, 1u);
}

int pp_output_expand(const char *pattern, unsigned session_no, char *out, size_t cap,
                     pp_error *err) {
    char host[256], piece[32];
    size_t len = 0;
    if (!pattern || !out || cap == 0)
        return pp_set_error(err, PP_EINVAL, "pp_output_expand: pattern and out are required");
    for (const char *p = pattern; *p; p++) {
        const char *add = piece;
        size_t n = 1;
        piece[0] = *p;
        if (*p == '%') {
            switch (p[1]) {
            case 'p': n = (size_t)snprintf(piece, sizeof piece, "%ld", (long)getpid()); break;
            case 'n': n = (size_t)snprintf(piece, sizeof piece, "%u", session_no); break;
            case 'h':
                if (gethostname(host, sizeof host) != 0)
                    strcpy(host, "unknown-host");
                host[sizeof host - 1] = '\0';
                add = host;
                n = strlen(host);
                break;
            case '%': break;
            case '\0':
                return pp_set_error(err, PP_EINVAL,
                                    "output name \"%s\": a lone %% at the end (write %%%% for a "
                                    "percent sign)", pattern);
            default:
                return pp_set_error(err, PP_EINVAL,
                                    "output name \"%s\": unknown pattern %%%c (have: %%p process "
                                    "id, %%n session number, %%h host name, %%%% percent sign)",
                                    pattern, p[1]);
            }
            p++;
        }
        if (len + n >= cap)
            return pp_set_error(err, PP_EINVAL, "output name \"%s\": expands to more than %zu bytes",
                                pattern, cap - 1);
        memcpy(out + len, add, n);
        len += n;
    }
    out[len] = '\0';
    return PP_OK;
}
