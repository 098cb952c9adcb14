/* The bounded batch queue between two stages (queue.h). */
#include <stdlib.h>

#include "pipeline/queue.h"
#include "pipeprof/common.h"

int batch_queue_init(batch_queue *q, int cap) {
    q->items = malloc((size_t)cap * sizeof *q->items);
    if (!q->items)
        return PP_ENOMEM;
    q->cap = cap;
    q->head = q->count = q->closed = 0;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->changed, NULL);
    return PP_OK;
}

void batch_queue_destroy(batch_queue *q) {
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->changed);
    free(q->items);
}

int batch_queue_push(batch_queue *q, int64_t batch) {
    pthread_mutex_lock(&q->lock);
    while (q->count == q->cap && !q->closed)
        pthread_cond_wait(&q->changed, &q->lock);
    int pushed = !q->closed;
    if (pushed) {
        q->items[(q->head + q->count) % q->cap] = batch;
        q->count++;
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->lock);
    return pushed;
}

int batch_queue_pop(batch_queue *q, int64_t *batch) {
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->changed, &q->lock);
    int popped = q->count > 0;
    if (popped) {
        *batch = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->lock);
    return popped;
}

void batch_queue_close(batch_queue *q) {
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}
