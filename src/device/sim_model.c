/* The simulated devices' latency model: phases, execution units and the
 * processor-shared memory bus (sim_model.h). */
#include "device/sim_model.h"

#include <math.h>
#include <stddef.h>

void pp_sim_sched_init(pp_sim_sched *s, double bus_bytes_per_s, double now) {
    *s = (pp_sim_sched){.bytes_per_ns = bus_bytes_per_s / 1e9, .now = now};
}

static int on_bus(const pp_sim_job *j) {
    return j->phase == PP_SIM_XFER_IN || j->phase == PP_SIM_XFER_OUT;
}

/* When j's current phase ends if nothing else changes. */
static double event_time(const pp_sim_sched *s, const pp_sim_job *j) {
    if (on_bus(j))
        return s->now + j->remaining * (double)s->on_bus / s->bytes_per_ns;
    return j->phase_end;
}

double pp_sim_sched_next(const pp_sim_sched *s) {
    double next = INFINITY;
    for (const pp_sim_job *j = s->active; j; j = j->next) {
        double t = event_time(s, j);
        if (t < next)
            next = t;
    }
    return next;
}

/* Moves the clock to t, draining every transfer at its equal share of the bus. */
static void progress(pp_sim_sched *s, double t) {
    if (t <= s->now)
        return;
    if (s->on_bus > 0) {
        double moved = (t - s->now) * s->bytes_per_ns / (double)s->on_bus;
        for (pp_sim_job *j = s->active; j; j = j->next)
            if (on_bus(j))
                j->remaining = j->remaining > moved ? j->remaining - moved : 0.0;
    }
    s->now = t;
}

/* Appends, so that jobs whose events tie change phase in arrival order (the
 * first to arrive gets a free unit first). */
static void set_active(pp_sim_sched *s, pp_sim_job *j) {
    pp_sim_job **p = &s->active;
    while (*p)
        p = &(*p)->next;
    j->next = NULL;
    *p = j;
}

static void unset_active(pp_sim_sched *s, pp_sim_job *j) {
    for (pp_sim_job **p = &s->active; *p; p = &(*p)->next) {
        if (*p == j) {
            *p = j->next;
            return;
        }
    }
}

static void begin_transfer(pp_sim_sched *s, pp_sim_job *j, pp_sim_phase phase, double bytes) {
    j->phase = phase;
    j->remaining = bytes;
    s->on_bus++;
}

/* A unit was granted: the job's device time starts now. */
static void begin_device(pp_sim_sched *s, pp_sim_job *j) {
    j->dev_start = s->now;
    begin_transfer(s, j, PP_SIM_XFER_IN, j->in_bytes);
    set_active(s, j);
}

/* Ends j's current phase at s->now and starts the next one; zero-length
 * phases pass straight through. j is on the active list. */
static void step(pp_sim_sched *s, pp_sim_job *j) {
    switch (j->phase) {
    case PP_SIM_LAUNCH:
        unset_active(s, j);
        if (j->unit->busy < j->unit->units) {
            j->unit->busy++;
            begin_device(s, j);
        } else {
            j->phase = PP_SIM_QUEUED;
            j->next = NULL;
            if (j->unit->queue_tail)
                j->unit->queue_tail->next = j;
            else
                j->unit->queue_head = j;
            j->unit->queue_tail = j;
        }
        return;
    case PP_SIM_XFER_IN:
        s->on_bus--;
        j->in_end = s->now;
        j->phase = PP_SIM_COMPUTE;
        j->phase_end = s->now + j->compute_ns;
        return;
    case PP_SIM_COMPUTE:
        j->compute_end = s->now;
        begin_transfer(s, j, PP_SIM_XFER_OUT, j->out_bytes);
        return;
    case PP_SIM_XFER_OUT: {
        s->on_bus--;
        j->done = s->now;
        j->phase = PP_SIM_DONE;
        unset_active(s, j);
        j->next = NULL;
        if (s->done_tail)
            s->done_tail->next = j;
        else
            s->done_head = j;
        s->done_tail = j;
        pp_sim_unit *u = j->unit;
        pp_sim_job *q = u->queue_head;
        if (q) {
            u->queue_head = q->next;
            if (!u->queue_head)
                u->queue_tail = NULL;
            begin_device(s, q); /* the unit passes straight to the next job */
        } else {
            u->busy--;
        }
        return;
    }
    case PP_SIM_QUEUED:
    case PP_SIM_DONE:
        return;
    }
}

void pp_sim_sched_advance(pp_sim_sched *s, double t) {
    for (;;) {
        double next = pp_sim_sched_next(s);
        if (next > t)
            break;
        /* Every job whose event is exactly `next` changes phase now. Its
         * event time was computed before progress(), so rounding in the
         * drained bytes can never leave it a sliver short. */
        pp_sim_job *due = NULL;
        for (pp_sim_job *j = s->active; j; j = j->next) {
            if (event_time(s, j) <= next) {
                due = j;
                break;
            }
        }
        progress(s, next);
        due->remaining = 0.0;
        step(s, due);
    }
    progress(s, t);
}

void pp_sim_sched_add(pp_sim_sched *s, pp_sim_job *j, double t) {
    pp_sim_sched_advance(s, t);
    j->arrive = s->now;
    j->dev_start = j->in_end = j->compute_end = j->done = 0.0;
    j->phase = PP_SIM_LAUNCH;
    j->phase_end = s->now + j->launch_ns;
    set_active(s, j);
}

pp_sim_job *pp_sim_sched_take_done(pp_sim_sched *s) {
    pp_sim_job *head = s->done_head;
    s->done_head = s->done_tail = NULL;
    return head;
}
