/* memory_check.c — before a command reads its traces whole: a warning when
 * what reading and analyzing them holds passes the memory this process can
 * have, so that a trace too large for the machine is named before the
 * kernel stops pipeprof without a word (an out-of-memory kill), together
 * with the way to analyze a part of it. Only .pptrace inputs are sized: their
 * END block states their events and annotations; other inputs are not. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/load_traces.h"
#include "io/trace_read.h"

/* What reading and analyzing holds at its peak, per event and per
 * annotation, for a pipeline trace that uses every column it reads (batch,
 * stage, hardware and transfer times): the model's 28 and the analysis's
 * 23 bytes an event, 16 an annotation (docs/analysis.md, "Memory": 62 in
 * all at 0.7 annotations an event, where the caller keeps the model, as
 * export and report do, and analyze where the model's columns do not
 * narrow; analyze holds 40 of that trace, whose columns narrow: reading is
 * its peak). Other traces hold less. */
#define PEAK_BYTES_PER_EVENT 51
#define PEAK_BYTES_PER_ANNOTATION 16

/* The first number in the file at `path` after `key` (NULL: at its start);
 * 0 when there is none. */
static uint64_t number_in_file(const char *path, const char *key) {
    char text[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *at = key ? strstr(text, key) : text;
    return at ? strtoull(at + (key ? strlen(key) : 0), NULL, 10) : 0;
}

/* Bytes this process can take: PIPEPROF_MEM_AVAILABLE when set, else the
 * kernel's MemAvailable, or a container's memory limit when lower (the
 * cgroup v2 or v1 limit of the cgroup mounted at /sys/fs/cgroup, which is a
 * container's own; "max" or a huge v1 figure means none); 0 when not
 * known. The limit, not the limit less what the cgroup uses: its use counts
 * the page cache, which the kernel gives back. */
static uint64_t memory_available(void) {
    static const char *const limits[] = {"/sys/fs/cgroup/memory.max",
                                         "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    const char *env = getenv("PIPEPROF_MEM_AVAILABLE");
    if (env && *env) {
        char *end;
        unsigned long long bytes = strtoull(env, &end, 10);
        if (*end == '\0' && env[0] >= '0' && env[0] <= '9')
            return bytes;
        cli_error("warning: PIPEPROF_MEM_AVAILABLE=\"%s\" is not a number of bytes; ignored", env);
    }
    uint64_t avail = number_in_file("/proc/meminfo", "MemAvailable:") * 1024;
    for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
        uint64_t limit = number_in_file(limits[k], NULL);
        if (limit && (avail == 0 || limit < avail))
            avail = limit;
    }
    return avail;
}

/* `bytes` as "12.3 GB", or "45 MB" below a GB. */
static void format_bytes(char *out, size_t cap, double bytes) {
    if (bytes >= 1e9)
        snprintf(out, cap, "%.1f GB", bytes / 1e9);
    else
        snprintf(out, cap, "%.0f MB", bytes / 1e6);
}

void cli_memory_check(const char *verb, const cli_traces *t) {
    uint64_t events = 0, annotations = 0;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t e, a;
        if (pptrace_peek_totals(t->paths[i], &e, &a))
            events += e, annotations += a;
    }
    double need = (double)events * PEAK_BYTES_PER_EVENT +
                  (double)annotations * PEAK_BYTES_PER_ANNOTATION;
    uint64_t avail = memory_available();
    char need_text[32], avail_text[32];
    if (events == 0 || avail == 0 || need <= (double)avail)
        return;
    format_bytes(need_text, sizeof need_text, need);
    format_bytes(avail_text, sizeof avail_text, (double)avail);
    cli_error("warning: %s %s %" PRIu64 " events: %s them takes up to about %s of memory and "
              "about %s is available, so the system may stop pipeprof for lack of it; "
              "`pipeprof convert TRACE PART.pptrace --from NS --to NS` cuts out a part in a "
              "few MB",
              t->n > 1 ? "the traces" : t->paths[0], t->n > 1 ? "hold" : "holds", events, verb,
              need_text, avail_text);
}
