/* Inflating on a thread of its own (gz_pipe.h).
 *
 * A ring of chunk buffers between the inflating thread and the reader: the
 * thread fills the next free one with one gzread, the reader copies out of
 * the oldest full one and frees it when it has taken all of it. A read of
 * 0 (the end) or -1 (an error, with gzerror's words) is the thread's last. */
#include "io/gz_pipe.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpus.h"

#define SLOTS 4

typedef struct slot {
    char *data;
    long n;          /* what gzread returned */
    size_t taken;    /* bytes the reader has copied out */
    int full;
    gz_pipe_error error;
} slot;

struct gz_pipe {
    gzFile gz;
    size_t chunk;
    slot slots[SLOTS];
    size_t head;     /* the reader's slot */
    int stop, done;  /* done: the reader has seen the last read */
    long last;       /* that read: 0 or -1 */
    gz_pipe_error last_error;
    pthread_mutex_t lock;
    pthread_cond_t filled, emptied;
    pthread_t thread;
};

void gz_pipe_error_read(gzFile gz, gz_pipe_error *out) {
    out->err_no = errno;
    const char *why = gzerror(gz, &out->zerr);
    if (strncmp(why, "<fd:", 4) == 0 && strstr(why, ">: "))
        why = strstr(why, ">: ") + 3;
    snprintf(out->why, sizeof out->why, "%s", why);
}

static void *inflate_main(void *arg) {
    gz_pipe *p = arg;
    for (size_t k = 0;; k = (k + 1) % SLOTS) {
        slot *s = &p->slots[k];
        pthread_mutex_lock(&p->lock);
        while (s->full && !p->stop)
            pthread_cond_wait(&p->emptied, &p->lock);
        int stop = p->stop;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            return NULL;
        gz_pipe_error error = {0};
        long n = gzread(p->gz, s->data, (unsigned)p->chunk);
        if (n < 0)
            gz_pipe_error_read(p->gz, &error);
        pthread_mutex_lock(&p->lock);
        s->n = n;
        s->taken = 0;
        s->error = error;
        s->full = 1;
        pthread_cond_signal(&p->filled);
        pthread_mutex_unlock(&p->lock);
        if (n <= 0)
            return NULL;
    }
}

static void pipe_free(gz_pipe *p) {
    for (size_t k = 0; k < SLOTS; k++)
        free(p->slots[k].data);
    free(p);
}

gz_pipe *gz_pipe_start(gzFile gz, size_t chunk) {
    if (pp_cpus_online() < 2)
        return NULL;
    gz_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->gz = gz;
    p->chunk = chunk;
    for (size_t k = 0; k < SLOTS; k++)
        if (!(p->slots[k].data = malloc(chunk))) {
            pipe_free(p);
            return NULL;
        }
    int inited = 0; /* how many of lock, filled, emptied exist */
    if (pthread_mutex_init(&p->lock, NULL) == 0 && ++inited &&
        pthread_cond_init(&p->filled, NULL) == 0 && ++inited &&
        pthread_cond_init(&p->emptied, NULL) == 0 && ++inited &&
        pthread_create(&p->thread, NULL, inflate_main, p) == 0)
        return p;
    if (inited > 2)
        pthread_cond_destroy(&p->emptied);
    if (inited > 1)
        pthread_cond_destroy(&p->filled);
    if (inited > 0)
        pthread_mutex_destroy(&p->lock);
    pipe_free(p);
    return NULL;
}

long gz_pipe_read(gz_pipe *p, char *dst, size_t max, gz_pipe_error *error) {
    if (p->done) {
        *error = p->last_error;
        return p->last;
    }
    slot *s = &p->slots[p->head];
    pthread_mutex_lock(&p->lock);
    while (!s->full)
        pthread_cond_wait(&p->filled, &p->lock);
    pthread_mutex_unlock(&p->lock);
    if (s->n <= 0) {
        p->done = 1;
        p->last = s->n;
        p->last_error = s->error;
        *error = s->error;
        return s->n;
    }
    size_t left = (size_t)s->n - s->taken, n = max < left ? max : left;
    memcpy(dst, s->data + s->taken, n);
    s->taken += n;
    if (s->taken == (size_t)s->n) {
        pthread_mutex_lock(&p->lock);
        s->full = 0;
        pthread_cond_signal(&p->emptied);
        pthread_mutex_unlock(&p->lock);
        p->head = (p->head + 1) % SLOTS;
    }
    return (long)n;
}

void gz_pipe_stop(gz_pipe *p) {
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->emptied);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->filled);
    pthread_cond_destroy(&p->emptied);
    pthread_mutex_destroy(&p->lock);
    pipe_free(p);
}
