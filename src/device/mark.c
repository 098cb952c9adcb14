/* Marks on a device stream (pp_request_mark): a mark waits behind the run in
 * flight on its request's stream and takes the device time at which that
 * run ended, as a marker enqueued on a GPU stream would. The device time
 * comes from the backend's run_device_end hook; a backend without one
 * (openvino, cpu) gets host-time marks, labeled as such. */
#include <stdlib.h>

#include "device/backend.h"

typedef struct pp_stream_mark {
    struct pp_stream_mark *next;
    pp_session *s;
    pp_track track;
    pp_str name;
} pp_stream_mark;

static void record_mark(pp_session *s, pp_track track, pp_str name, int64_t ts, pp_mark_clock clock) {
    if (pp_mark(s, track, name, ts) == PP_OK)
        pp_annotate_str(s, pp_intern("clock"), pp_intern(clock == PP_MARK_DEVICE ? "device" : "host"));
}

int pp_request_mark(pp_request *r, pp_session *s, pp_track track, pp_str name,
                    pp_mark_clock *clock) {
    if (!r->compiled->device->backend->run_device_end) {
        if (clock)
            *clock = PP_MARK_HOST;
        record_mark(s, track, name, pp_now(), PP_MARK_HOST);
        return PP_OK;
    }
    if (clock)
        *clock = PP_MARK_DEVICE;
    pp_stream_mark *m = malloc(sizeof *m);
    if (!m)
        return PP_ENOMEM;
    *m = (pp_stream_mark){.s = s, .track = track, .name = name};
    pthread_mutex_lock(&r->lock);
    int running = r->state == PP_REQ_RUNNING;
    if (running) { /* after the marks already waiting: they keep their order */
        pp_stream_mark **tail = &r->marks;
        while (*tail)
            tail = &(*tail)->next;
        *tail = m;
    }
    pthread_mutex_unlock(&r->lock);
    if (!running) {
        free(m);
        record_mark(s, track, name, pp_now(), PP_MARK_DEVICE); /* nothing queued before it */
    }
    return PP_OK;
}

void pp_request_record_marks(pp_request *r, pp_stream_mark *marks) {
    int64_t end = 0;
    pp_mark_clock clock = PP_MARK_DEVICE;
    if (marks && r->compiled->device->backend->run_device_end(r, &end) != PP_OK) {
        end = pp_now(); /* the device could not say for this run */
        clock = PP_MARK_HOST;
    }
    while (marks) {
        pp_stream_mark *next = marks->next;
        record_mark(marks->s, marks->track, marks->name, end, clock);
        free(marks);
        marks = next;
    }
}
