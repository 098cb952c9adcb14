/* req_thread.c — the thread a backend keeps per request slot to finish its
 * runs off the caller's thread (the cpu backend computes there; openvino
 * and opencl wait there for the device). Starting a run is a wake-up, never
 * a thread creation; stopping lets a run already kicked finish first. */
#include <stdio.h>

#include "device/backend.h"

static void *req_thread_main(void *arg) {
    pp_req_thread *t = arg;
    for (;;) {
        pthread_mutex_lock(&t->lock);
        while (!t->pending && !t->quit)
            pthread_cond_wait(&t->wake, &t->lock);
        int quit = t->quit && !t->pending;
        t->pending = 0;
        pthread_mutex_unlock(&t->lock);
        if (quit)
            return NULL;
        t->run(t->r);
    }
}

int pp_req_thread_start(pp_req_thread *t, pp_request *r, void (*run)(pp_request *r),
                        const char *prefix) {
    *t = (pp_req_thread){.r = r, .run = run};
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    if (pthread_create(&t->thread, NULL, req_thread_main, t) != 0) {
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->wake);
        return PP_ENOMEM;
    }
    t->started = 1;
    char name[16];
    snprintf(name, sizeof name, "pp-%s-req%d", prefix, r->index % 100);
    pthread_setname_np(t->thread, name);
    return PP_OK;
}

void pp_req_thread_kick(pp_req_thread *t) {
    pthread_mutex_lock(&t->lock);
    t->pending = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
}

void pp_req_thread_stop(pp_req_thread *t) {
    if (!t->started)
        return;
    pthread_mutex_lock(&t->lock);
    t->quit = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->wake);
    t->started = 0;
}
