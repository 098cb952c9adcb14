/* subscribe_pipe — a consumer thread reading a running pipeline's op and
 * exec spans from a pipe, as they end (docs/recording.md, "Live
 * subscriptions").
 *
 * The demo pipeline runs at level 2 (one span per op); a subscription writes
 * each exec and op span as a fixed-size record to the pipe; the consumer
 * reads whole records and uses the accessors. At the end it prints the
 * busiest op types and what the subscription lost (nothing, unless the
 * consumer falls behind).
 *
 *   ./subscribe_pipe [BATCHES]     (default 50)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pipeprof/pipeline.h>
#include <pipeprof/subscribe.h>

#define MAX_TYPES 32

typedef struct consumer {
    int fd;
    long execs, ops;
    char types[MAX_TYPES][32];
    double type_ms[MAX_TYPES];
    int ntypes;
} consumer;

static void take(consumer *c, const void *buf, size_t i) {
    if (pp_subrec_kind_of(buf, i) != PP_SUBREC_SPAN)
        return; /* a STATUS record: loss totals so far */
    if (pp_subrec_role(buf, i) == PP_ROLE_EXEC) {
        if (c->execs++ < 3)
            printf("exec  %-10s on %-4s batch %3lld: %8.3f ms wall, %8.3f ms on the device%s\n",
                   pp_subrec_stage(buf, i), pp_subrec_device(buf, i),
                   (long long)pp_subrec_batch(buf, i), pp_subrec_duration_ns(buf, i) / 1e6,
                   pp_subrec_hw_ns(buf, i) / 1e6,
                   pp_subrec_flags(buf, i) & PP_SUBREC_SIMULATED ? " (simulated)" : "");
        return;
    }
    c->ops++;
    int k = 0;
    while (k < c->ntypes && strcmp(c->types[k], pp_subrec_type(buf, i)) != 0)
        k++;
    if (k == c->ntypes && c->ntypes < MAX_TYPES)
        snprintf(c->types[c->ntypes++], sizeof c->types[0], "%s", pp_subrec_type(buf, i));
    if (k < MAX_TYPES)
        c->type_ms[k] += pp_subrec_duration_ns(buf, i) / 1e6;
}

/* Reads whole records until the subscription closes the pipe. */
static void *consume(void *arg) {
    consumer *c = arg;
    unsigned char buf[64 * PP_SUBREC_SIZE];
    size_t have = 0;
    ssize_t n;
    while ((n = read(c->fd, buf + have, sizeof buf - have)) > 0) {
        have += (size_t)n;
        size_t whole = pp_subrec_count(have);
        for (size_t i = 0; i < whole; i++)
            take(c, buf, i);
        memmove(buf, buf + whole * PP_SUBREC_SIZE, have - whole * PP_SUBREC_SIZE);
        have -= whole * PP_SUBREC_SIZE;
    }
    return NULL;
}

int main(int argc, char **argv) {
    int batches = argc > 1 ? atoi(argv[1]) : 50;
    pp_error err = {{0}};
    pp_pipeline *p = NULL;
    if (batches < 1 || pp_pipeline_demo(&p, &err) != PP_OK) {
        fprintf(stderr, "subscribe_pipe: %s\n", batches < 1 ? "BATCHES must be >= 1" : err.msg);
        return 2;
    }
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    scfg.level = 2; /* per-op spans */
    pp_session *s = NULL;
    pp_session_open(&scfg, &s);

    int fds[2];
    if (pipe(fds) != 0) {
        perror("subscribe_pipe: pipe");
        return 1;
    }
    consumer c = {.fd = fds[0]};
    pthread_t th;
    pthread_create(&th, NULL, consume, &c);

    pp_subscription_config sc;
    pp_subscription_config_init(&sc);
    sc.fd = fds[1]; /* the subscription closes it at the end */
    sc.roles = PP_SUB_EXECS | PP_SUB_OPS;
    pp_subscription *sub = NULL;
    if (pp_subscription_open(s, &sc, &sub, &err) != PP_OK) {
        fprintf(stderr, "subscribe_pipe: %s\n", err.msg);
        return 1;
    }
    pp_session_start(s);
    pp_run_options opt = {.batches = batches, .warmup = -1};
    int rc = pp_pipeline_run(p, s, &opt, NULL, &err);
    pp_session_stop(s, NULL);
    pp_subscription_stats st;
    pp_subscription_close(sub, &st); /* the rest is sent; the consumer sees end of file */
    pthread_join(th, NULL);
    close(fds[0]);
    pp_session_close(s);
    pp_pipeline_free(p);
    if (rc != PP_OK) {
        fprintf(stderr, "subscribe_pipe: %s\n", err.msg);
        return 1;
    }
    printf("...\n%ld execs and %ld ops arrived; lost %llu, dropped by the session %llu\n", c.execs,
           c.ops, (unsigned long long)st.lost, (unsigned long long)st.session_dropped);
    printf("time per op type:\n");
    for (int k = 0; k < c.ntypes; k++)
        printf("  %-12s %10.3f ms\n", c.types[k], c.type_ms[k]);
    return 0;
}
