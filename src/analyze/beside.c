/* beside.c — the device step on a thread of its own, beside the op,
 * decomposition, bandwidth-sum, stage, data-parallel, cycle and contention
 * steps (report.c).
 *
 * Why: the device step is about a sixth of a build and shares nothing with
 * those steps. It reads what the steps before them made (the window, the
 * exec view, the host spans' partitions and merges, the track rows of
 * an_tracks_list, the device table) and none of them writes any of that; it
 * fills its own tables (the track and device figures in place, the
 * bubbles) and none of them
 * reads those. So it runs on a shallow copy of the report whose scratch
 * buffers are its own, and an_devices_join takes the tables it made back.
 * On a machine of one CPU, or when no thread can be had, it runs in place
 * of the join, the same step on the same copy. */
#include <pthread.h>
#include <stdlib.h>

#include "analyze/report.h"
#include "core/cpus.h"
#include "core/error.h"

struct an_beside {
    pp_report copy; /* the report as the device step reads it, scratch of its own */
    pp_error err;
    int rc, threaded;
    pthread_t thread;
};

/* The step, then its scratch freed at once: it would otherwise sit beside
 * the tables of the steps running meanwhile until the join. */
static void *devices_main(void *arg) {
    an_beside *b = arg;
    b->rc = an_devices_compute(&b->copy, &b->err);
    an_scratch_free(&b->copy);
    return NULL;
}

int an_devices_start(pp_report *r, an_beside **out, pp_error *err) {
    an_beside *b = calloc(1, sizeof *b);
    if (!b)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    b->copy = *r;
    an_scratch_forget(&b->copy);
    b->threaded = pp_cpus_online() > 1 &&
                  pthread_create(&b->thread, NULL, devices_main, b) == 0;
    *out = b;
    return PP_OK;
}

int an_devices_join(pp_report *r, an_beside *b, pp_error *err) {
    if (!b)
        return PP_OK;
    if (b->threaded)
        pthread_join(b->thread, NULL);
    else
        devices_main(b);
    r->gap_bytes = b->copy.gap_bytes;
    r->gap_at = b->copy.gap_at;
    r->ngaps = b->copy.ngaps;
    int rc = b->rc;
    if (rc != PP_OK && err)
        *err = b->err;
    free(b);
    return rc;
}
