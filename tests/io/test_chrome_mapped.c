/* A plain regular file is mapped by the Chrome JSON reader rather than read
 * into its window (src/io/json_scan.c). The same bytes through a pipe take
 * the read() path; both must give the same model or the same message, also
 * where the file ends exactly at a page boundary (the bytes after it then
 * come from the zero page the mapping reserves, not from the file's last
 * page) and for one value longer than the reader's 64 MiB bound. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/trace_read.h"
#include "pipeprof/io.h"
#include "testutil.h"

static void write_file(const char *path, const char *text, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, n, f) != n) {
        pp_test_fail(__FILE__, __LINE__, "cannot write %s", path);
        if (f)
            fclose(f);
        return;
    }
    fclose(f);
}

/* Reads `path` through a pipe (the read() path): returns the status, the
 * model in *out and the message in err. */
static int read_through_pipe(const char *path, pp_model **out, pp_error *err) {
    FILE *f = fopen(path, "rb");
    int fds[2];
    if (!f || pipe(fds) != 0) {
        pp_test_fail(__FILE__, __LINE__, "cannot open %s or a pipe", path);
        if (f)
            fclose(f);
        return PP_EIO;
    }
    pid_t child = fork();
    if (child == 0) { /* the writer: the file into the pipe */
        close(fds[0]);
        char buf[1 << 16];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            if (write(fds[1], buf, n) != (ssize_t)n)
                _exit(1);
        _exit(0);
    }
    fclose(f);
    close(fds[1]);
    int rc = pp_chrome_read_fd(fds[0], path, out, err);
    if (rc != PP_OK) { /* the reader stopped early: let the writer finish */
        char sink[1 << 16];
        while (read(fds[0], sink, sizeof sink) > 0)
            ;
    }
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    return rc;
}

/* Both paths on `path`: the same status, the same message, the same
 * number of events; returns that status. */
static int read_both_ways(const char *path, size_t *events) {
    pp_model *mapped = NULL, *piped = NULL;
    pp_error err_mapped = {{0}}, err_piped = {{0}};
    int rc = pp_chrome_read(path, &mapped, &err_mapped);
    EXPECT_EQ_I64(read_through_pipe(path, &piped, &err_piped), rc);
    EXPECT_STR(err_mapped.msg, err_piped.msg);
    *events = mapped ? pp_model_event_count(mapped) : 0;
    EXPECT_EQ_U64(piped ? pp_model_event_count(piped) : 0, *events);
    pp_model_free(mapped);
    pp_model_free(piped);
    return rc;
}

/* `head` then spaces (or, with `fill`, that byte) up to exactly one page,
 * then `tail`: a file that ends at a page boundary when tail is empty. */
static char *page_file(const char *head, char fill, const char *tail, size_t *n) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), h = strlen(head), t = strlen(tail);
    char *text = malloc(page + t);
    memcpy(text, head, h);
    memset(text + h, fill, page - h);
    memcpy(text + page, tail, t);
    *n = page + t;
    return text;
}

/* A whole trace of exactly one page: two events read, the trailing spaces
 * skipped. */
static void test_trace_ending_at_a_page_boundary(void) {
    const char *path = pp_test_path("page.json");
    size_t n, events = 0;
    char *text = page_file("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2},\n"
                           " {\"ph\":\"i\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":5}]",
                           ' ', "", &n);
    write_file(path, text, n);
    free(text);
    EXPECT_EQ_I64(read_both_ways(path, &events), PP_OK);
    EXPECT_EQ_U64(events, 2);
}

/* A file cut inside a string, a number and after a key, each exactly at a
 * page boundary: the reader stops at the end of the file, with the message
 * the read() path gives. */
static void test_cut_at_a_page_boundary(void) {
    static const struct {
        const char *head;
        char fill;
    } cuts[] = {
        {"[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,\"name\":\"", 'a'}, /* in a string */
        {"[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"dur\":2,\"name\":\"n\",\"ts\":", '7'},  /* in a number */
    };
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        const char *path = pp_test_path("cut.json");
        size_t n, events = 0;
        char *text = page_file(cuts[k].head, cuts[k].fill, "", &n);
        write_file(path, text, n);
        free(text);
        EXPECT_EQ_I64(read_both_ways(path, &events), PP_EFORMAT);
    }
}

/* One event whose name is 65 MiB: refused at the value's start with the
 * bound in the message, though a mapped file would hold it. */
static void test_one_huge_value_in_a_plain_file_is_refused(void) {
    const char *path = pp_test_path("huge.json");
    const char *head = "[\n{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1,\"name\":\"", *tail = "\"}]";
    size_t h = strlen(head), t = strlen(tail), body = (size_t)65 << 20;
    char *text = malloc(h + body + t);
    memcpy(text, head, h);
    memset(text + h, 'a', body);
    memcpy(text + h + body, tail, t);
    write_file(path, text, h + body + t);
    free(text);
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_chrome_read(path, &m, &err), PP_EFORMAT);
    EXPECT(m == NULL);
    EXPECT_CONTAINS(err.msg, "huge.json:2:1 (byte 2): the value that starts here is longer than 64 MiB");
    remove(path);
}

int main(void) {
    RUN(test_trace_ending_at_a_page_boundary);
    RUN(test_cut_at_a_page_boundary);
    RUN(test_one_huge_value_in_a_plain_file_is_refused);
    return pp_test_finish();
}
