/* util.c — what every file of the whatif layer uses: error messages,
 * formatted strings, and finding a stage or device of a model by name. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif_impl.h"

char *wi_strdupf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

int wi_error(pp_error *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A simulated device is named "NPU (simulated)" in reports; "NPU" finds it
 * too, as a user (or a sweep's table) names it. */
int wi_device_index(const pp_whatif_costs *c, const char *name) {
    for (size_t d = 0; d < c->ndevices; d++)
        if (strcmp(c->devices[d], name) == 0)
            return (int)d;
    size_t n = strlen(name);
    for (size_t d = 0; d < c->ndevices; d++)
        if (strncmp(c->devices[d], name, n) == 0 && strcmp(c->devices[d] + n, " (simulated)") == 0)
            return (int)d;
    return -1;
}

int wi_stage_index(const pp_whatif_costs *c, const char *name) {
    for (size_t s = 0; s < c->nstages; s++)
        if (strcmp(c->stages[s].name, name) == 0)
            return (int)s;
    return -1;
}
