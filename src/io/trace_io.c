/* Choosing a reader or writer: writers by extension, readers by content. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "io/trace_read.h"
#include "io/trace_write.h"
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

/* A pipe, FIFO or terminal can be read only once, and the readers need a
 * regular file (the .pptrace reader bounds lengths by the file's size, the
 * JSON reader sniffs gzip by its first bytes): copy it into an anonymous
 * in-memory file. Returns the new descriptor (fd is closed), or -1 with
 * errno set. */
static int spool(int fd) {
    int mem = memfd_create("pipeprof-input", MFD_CLOEXEC);
    char buf[1 << 16];
    ssize_t n = 0;
    while (mem >= 0 && (n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        for (ssize_t done = 0, w; done < n; done += w) {
            if ((w = write(mem, buf + done, (size_t)(n - done))) < 0) {
                n = -1;
                break;
            }
        }
        if (n < 0)
            break;
    }
    int e = errno;
    close(fd);
    if (mem >= 0 && (n < 0 || lseek(mem, 0, SEEK_SET) != 0)) {
        e = errno;
        close(mem);
        mem = -1;
    }
    errno = e;
    return mem;
}

int pp_json_dialect_from_name(const char *name) {
    if (!name)
        return -1;
    if (strcmp(name, "auto") == 0)
        return PP_DIALECT_AUTO;
    if (strcmp(name, "chrome") == 0)
        return PP_DIALECT_CHROME;
    if (strcmp(name, "pipelineprofiler") == 0)
        return PP_DIALECT_PIPELINE_PROFILER;
    return -1;
}

int pp_trace_read(const char *path, pp_model **out, pp_error *err) {
    return pp_trace_read_dialect(path, PP_DIALECT_AUTO, out, err);
}

int pp_trace_read_dialect(const char *path, pp_json_dialect dialect, pp_model **out,
                          pp_error *err) {
    unsigned char magic[8] = {0};
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pp_set_error(err, errno == ENOENT ? PP_ENOTFOUND : PP_EIO, "%s: cannot open: %s",
                            path, strerror(errno));
    int statted = fstat(fd, &st) == 0;
    if (statted && S_ISDIR(st.st_mode)) {
        close(fd);
        return pp_set_error(err, PP_EINVAL, "%s: is a directory, not a trace file", path);
    }
    if (statted && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) {
        /* a device (/dev/zero, a terminal) is no trace, and may never end */
        close(fd);
        return pp_set_error(err, PP_EINVAL, "%s: not a file or a pipe", path);
    }
    if (!statted || (!S_ISREG(st.st_mode) && (fd = spool(fd)) < 0)) {
        int e = errno;
        if (!statted)
            close(fd);
        return pp_set_error(err, PP_EIO, "%s: cannot read: %s", path, strerror(e));
    }
    ssize_t n = pread(fd, magic, sizeof magic, 0);
    if (n >= 7 && memcmp(magic, "PPTRACE", 7) == 0)
        return pp_pptrace_read_fd(fd, path, out, err);
    /* by name: a Perfetto trace's first byte, '\n', may also start JSON */
    if (pp_format_from_path(path) == PP_FORMAT_PERFETTO) {
        close(fd);
        return pp_set_error(err, PP_EUNSUPPORTED,
                            "%s: pipeprof writes Perfetto traces but does not read them (read "
                            "the .pptrace or .json it was written from)", path);
    }
    return pp_chrome_read_fd_dialect(fd, path, dialect, out, err);
}

int trace_writer_write(const trace_writer *w, const pp_model *m, const char *path, pp_error *err) {
    void *file;
    int rc = w->open(&file, m, path, err);
    if (rc)
        return rc;
    rc = w->events(file, m, err);
    int closed = w->close(file, rc == PP_OK, err);
    return rc ? rc : closed;
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
