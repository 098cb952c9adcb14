/* queue.h — a bounded queue of batch numbers between two pipeline stages.
 *
 * The producer blocks while it is full, the consumer while it is empty; a
 * closed queue wakes both: pop then drains what is left and returns 0. */
#ifndef PP_PIPELINE_QUEUE_H
#define PP_PIPELINE_QUEUE_H

#include <pthread.h>
#include <stdint.h>

typedef struct batch_queue {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int64_t *items;
    int cap, head, count;
    int closed;
} batch_queue;

int batch_queue_init(batch_queue *q, int cap);
void batch_queue_destroy(batch_queue *q);
/* 1 when pushed, 0 when the queue was closed. */
int batch_queue_push(batch_queue *q, int64_t batch);
/* 1 with *batch set, 0 when the queue is closed and empty. */
int batch_queue_pop(batch_queue *q, int64_t *batch);
void batch_queue_close(batch_queue *q);

#endif
