/* two_process — a pipeline of two processes, recorded and merged.
 *
 * A producer process prepares batches and hands their ids through a pipe to
 * a consumer process, which "infers" each one: the common deployment of a
 * preprocessing process feeding an inference server. Each process records
 * its own trace through env activation; both use the same batch ids, so the
 * merged trace sees each batch cross from one process to the other:
 *
 *   pipeprof record -o 'two-%p.pptrace' -- ./two_process [BATCHES]
 *   pipeprof merge two-*.pptrace -o pipeline.pptrace
 *   pipeprof analyze pipeline.pptrace      # stages of both processes, one cycle per batch
 *
 * The producer forks and the child re-executes this program as the consumer
 * (a fresh process image, so the library activates a session of its own
 * there: a forked child does not inherit its parent's). The consumer says
 * it is ready through a second pipe, and both record a mark named "sync" at
 * that handshake (a pipe write and read apart), so the traces can be
 * aligned even when their clocks differ (recorded on two hosts); on one
 * host they share CLOCK_MONOTONIC and need no mark. Without PIPEPROF_OUTPUT
 * it runs unrecorded. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pipeprof/trace.h>

/* Real work so the spans measure something. */
static double work(int n, unsigned seed) {
    double acc = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            acc += (double)((i * 31u + j * 17u + seed) % 97u) * 1e-3;
    return acc;
}

static void span(pp_session *s, pp_track t, const char *name, const char *stage, pp_role role,
                 int64_t batch, int64_t start) {
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern(name);
    r.stage = pp_intern(stage);
    r.role = role;
    r.batch = batch;
    r.ts_ns = start;
    r.dur_ns = pp_now() - start;
    pp_span(s, &r);
}

static int consumer(int fd, int ready_fd) {
    pp_session *s = pp_default_session(); /* NULL when not recording: calls do nothing */
    pp_track host, device;
    pp_track_thread(s, "consumer", &host);
    pp_track_device(s, "CPU", 0, "req 0", 0, &device);
    int64_t batch;
    double total = 0;
    pp_mark(s, host, pp_intern("sync"), pp_now()); /* the handshake */
    if (write(ready_fd, "r", 1) != 1)
        return 1;
    close(ready_fd);
    while (read(fd, &batch, sizeof batch) == (ssize_t)sizeof batch && batch >= 0) {
        int64_t start = pp_now();
        total += work(300, (unsigned)batch);
        span(s, device, "infer", "Infer", PP_ROLE_EXEC, batch, start);
        pp_flow(s, device, pp_intern("batch"), start, (uint64_t)batch + 1, PP_FLOW_END);
    }
    printf("two_process: consumer %ld inferred (checksum %.3f)\n", (long)getpid(), total);
    return 0;
}

static int producer(const char *self, int batches) {
    int fds[2], ready[2];
    if (pipe(fds) != 0 || pipe(ready) != 0) {
        perror("two_process: pipe");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("two_process: fork");
        return 1;
    }
    if (child == 0) {
        char fd[16], ready_fd[16];
        close(fds[1]);
        close(ready[0]);
        snprintf(fd, sizeof fd, "%d", fds[0]);
        snprintf(ready_fd, sizeof ready_fd, "%d", ready[1]);
        execl(self, self, "--consumer", fd, ready_fd, (char *)NULL);
        perror("two_process: exec");
        _exit(127);
    }
    close(fds[0]);
    close(ready[1]);
    pp_session *s = pp_default_session();
    pp_track host;
    pp_track_thread(s, "producer", &host);
    int64_t batch;
    double total = 0;
    char c;
    int ok = read(ready[0], &c, 1) == 1; /* the consumer is up */
    pp_mark(s, host, pp_intern("sync"), pp_now());
    close(ready[0]);
    for (batch = 0; ok && batch < batches; batch++) {
        int64_t start = pp_now();
        total += work(200, (unsigned)batch);
        span(s, host, "prepare", "Prepare", PP_ROLE_STAGE, batch, start);
        pp_flow(s, host, pp_intern("batch"), start, (uint64_t)batch + 1, PP_FLOW_BEGIN);
        ok = write(fds[1], &batch, sizeof batch) == (ssize_t)sizeof batch;
    }
    batch = -1; /* end of stream */
    ok = ok && write(fds[1], &batch, sizeof batch) == (ssize_t)sizeof batch;
    close(fds[1]);
    int status = 0;
    waitpid(child, &status, 0);
    printf("two_process: producer %ld prepared %d batches (checksum %.3f)\n", (long)getpid(),
           batches, total);
    return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--consumer") == 0)
        return consumer(atoi(argv[2]), atoi(argv[3]));
    int batches = argc > 1 ? atoi(argv[1]) : 20;
    if (argc > 2 || batches < 1) {
        fprintf(stderr, "usage: two_process [BATCHES]   (BATCHES >= 1, default 20)\n");
        return 2;
    }
    /* /proc/self/exe: this very program, whatever directory it was started from */
    return producer("/proc/self/exe", batches);
}
