/* sim_model.h — the latency model of simulated devices, as a pure
 * discrete-event scheduler over a clock the caller advances.
 *
 * A job (one request) goes through: launch (fixed host/driver overhead) ->
 * queued for one of its device's execution units -> input transfer -> compute
 * (fixed time) -> output transfer -> done. Transfers of every device share one
 * memory bus by processor sharing: k transfers in flight each move at
 * bandwidth / k, so concurrent devices slow each other down exactly as much
 * as the bytes they move. Nothing here sleeps or locks: sim.c drives it in
 * real time, tests drive it step by step. Times are double nanoseconds. */
#ifndef PP_DEVICE_SIM_MODEL_H
#define PP_DEVICE_SIM_MODEL_H

typedef struct pp_sim_job pp_sim_job;

/* One simulated device: `units` jobs execute at once, the rest wait FIFO. */
typedef struct pp_sim_unit {
    int units, busy;
    pp_sim_job *queue_head, *queue_tail;
} pp_sim_unit;

typedef enum pp_sim_phase {
    PP_SIM_LAUNCH = 0,
    PP_SIM_QUEUED = 1,
    PP_SIM_XFER_IN = 2,
    PP_SIM_COMPUTE = 3,
    PP_SIM_XFER_OUT = 4,
    PP_SIM_DONE = 5
} pp_sim_phase;

struct pp_sim_job {
    /* set by the caller before pp_sim_sched_add */
    pp_sim_unit *unit;
    double launch_ns, compute_ns;
    double in_bytes, out_bytes;
    void *owner;
    /* filled by the model */
    double arrive, dev_start, in_end, compute_end, done;
    pp_sim_phase phase;
    double phase_end;  /* launch and compute */
    double remaining;  /* transfers: bytes still to move */
    pp_sim_job *next;  /* the active list, a unit's queue or the done list */
};

typedef struct pp_sim_sched {
    double bytes_per_ns; /* bus bandwidth */
    double now;
    pp_sim_job *active;  /* jobs with a pending event (not queued, not done) */
    int on_bus;          /* transfers in flight */
    pp_sim_job *done_head, *done_tail;
} pp_sim_sched;

void pp_sim_sched_init(pp_sim_sched *s, double bus_bytes_per_s, double now);
/* Advances to `t` (>= now) and adds a job arriving then. */
void pp_sim_sched_add(pp_sim_sched *s, pp_sim_job *j, double t);
/* The time of the next phase change; INFINITY when nothing is active. */
double pp_sim_sched_next(const pp_sim_sched *s);
/* Processes every phase change up to `t` in time order and moves the clock
 * to `t` (never backwards). Finished jobs go to the done list. */
void pp_sim_sched_advance(pp_sim_sched *s, double t);
/* Removes and returns the finished jobs, oldest first (NULL when none). */
pp_sim_job *pp_sim_sched_take_done(pp_sim_sched *s);

#endif
