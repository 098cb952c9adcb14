/* The session clock: CLOCK_MONOTONIC nanoseconds, read from the invariant
 * TSC where there is one (docs/architecture.md §3.3).
 *
 * pp_now returns nanoseconds already converted (one multiply and a shift of
 * the ticks since the last calibration) rather than raw ticks that a
 * snapshot would convert later: pp_now is public, and its values meet in the
 * same buffer with timestamps users pass themselves (Python's
 * time.monotonic_ns, device clocks mapped by the backends); raw ticks would
 * need a flag in every record and a conversion in every reader (snapshot,
 * followers, subscriptions), and the multiply is a fraction of a
 * nanosecond.
 *
 * The map from ticks to ns is fitted to clock_gettime(CLOCK_MONOTONIC):
 * a pair (ticks, ns) is taken at the first use, the slope once a second pair
 * is 10 ms away (clock_gettime serves until then), and again at least every
 * REFIT_NS (the first pp_now past it refits, as do session start, snapshot
 * and stop). The slope comes from pairs 5–10 s apart (a long baseline: the
 * TSC drifts from CLOCK_MONOTONIC only as NTP slews the latter), and the
 * map stays continuous: it starts where the old one was at the refit and
 * slews the error found there away over the next REFIT_NS, so pp_now never
 * steps back. Errors measured at refits stay far below 1 µs
 * (tests/core/test_clock.c).
 *
 * Falls back to clock_gettime where the CPU does not report an invariant
 * TSC (CPUID 0x80000007 EDX bit 8), where the kernel has dropped the TSC as
 * a clocksource, off x86, or with PIPEPROF_CLOCK=monotonic. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/clock_id.h"
#include "core/fork.h"
#include "pipeprof/trace.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define PP_HAVE_TSC 1
#else
#define PP_HAVE_TSC 0
#endif

enum { SOURCE_UNDECIDED = 0, SOURCE_TSC = 1, SOURCE_MONOTONIC = 2 };

#define REFIT_NS 100000000   /* 100 ms: the longest the map runs unchecked */
#define FIRST_SLOPE_NS 10000000 /* 10 ms between the first two pairs */
#define BASELINE_NS 5000000000LL /* the slope's pairs are 5–10 s apart */
#define STEP_NS 1000000      /* an error above 1 ms (suspend) is stepped, not slewed */

static _Atomic int source;
static const char *source_text = "monotonic";
static pthread_once_t source_once = PTHREAD_ONCE_INIT;

/* ns(t) = ns0 + ((t - tsc0) * mult >> 32) for t - tsc0 < limit ticks, then
 * on at `rate` (mult less the slew). limit is 0 until the first slope. Read
 * under a sequence lock (seq odd while the calibrating thread writes). */
static struct {
    _Atomic uint32_t seq;
    _Atomic uint64_t tsc0, mult, rate, limit;
    _Atomic int64_t ns0;
} map;

/* The calibrating thread's own state, under cal_lock. */
static pthread_mutex_t cal_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pair {
    uint64_t tsc;
    int64_t ns;
} base_old, base_new; /* the slope's baseline: base_old to the new pair */
static int have_pair;
static _Atomic int64_t max_error_ns;

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#if PP_HAVE_TSC
static inline uint64_t ticks(void) {
    return __rdtsc();
}

/* Whether the kernel still offers the TSC as a clocksource (it drops a TSC
 * it found unstable); 1 when sysfs cannot tell. */
static int kernel_keeps_tsc(void) {
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/available_clocksource", "r");
    if (!f)
        return 1;
    char line[256] = "";
    int found = 0;
    if (fgets(line, sizeof line, f))
        for (char *w = strtok(line, " \n"); w && !found; w = strtok(NULL, " \n"))
            found = strcmp(w, "tsc") == 0;
    fclose(f);
    return found;
}

static int tsc_invariant(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
        return 0;
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    return (d >> 8) & 1;
}
#else
static inline uint64_t ticks(void) {
    return 0;
}
#endif

static void decide_source(void) {
    pp_fork_handlers_register(); /* cal_lock is taken around fork too */
    const char *env = getenv("PIPEPROF_CLOCK");
    int use_tsc = 0;
    if (env && *env && strcmp(env, "tsc") != 0)
        source_text = strcmp(env, "monotonic") == 0 ? "monotonic: PIPEPROF_CLOCK=monotonic"
                                                     : "monotonic: PIPEPROF_CLOCK is not tsc";
#if PP_HAVE_TSC
    else if (!tsc_invariant())
        source_text = "monotonic: the TSC is not invariant";
    else if (!kernel_keeps_tsc())
        source_text = "monotonic: the kernel dropped the TSC as a clocksource";
    else
        use_tsc = 1;
#else
    else
        source_text = "monotonic: no TSC on this architecture";
#endif
    if (use_tsc)
        source_text = "tsc";
    atomic_store(&source, use_tsc ? SOURCE_TSC : SOURCE_MONOTONIC);
}

/* (t * m) >> 32 for t up to 2^64 and m below 2^40 (no 128-bit type in C11). */
static inline uint64_t scale(uint64_t t, uint64_t m) {
    return (t >> 32) * m + (((t & 0xffffffffu) * m) >> 32);
}

typedef struct map_copy {
    uint64_t tsc0, mult, rate, limit;
    int64_t ns0;
} map_copy;

/* A consistent copy of the map. Gives up after a while and returns a map
 * with limit 0 (callers then read clock_gettime): a signal handler that
 * reads the clock on the thread it interrupted in map_write would
 * otherwise wait forever. */
static map_copy map_read(void) {
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t seq = atomic_load_explicit(&map.seq, memory_order_acquire);
        map_copy m = {atomic_load_explicit(&map.tsc0, memory_order_relaxed),
                      atomic_load_explicit(&map.mult, memory_order_relaxed),
                      atomic_load_explicit(&map.rate, memory_order_relaxed),
                      atomic_load_explicit(&map.limit, memory_order_relaxed),
                      atomic_load_explicit(&map.ns0, memory_order_relaxed)};
        atomic_thread_fence(memory_order_acquire);
        if (!(seq & 1) && atomic_load_explicit(&map.seq, memory_order_relaxed) == seq)
            return m;
    }
    return (map_copy){.limit = 0};
}

static void map_write(const map_copy *m) {
    uint32_t seq = atomic_load_explicit(&map.seq, memory_order_relaxed);
    atomic_store_explicit(&map.seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&map.tsc0, m->tsc0, memory_order_relaxed);
    atomic_store_explicit(&map.mult, m->mult, memory_order_relaxed);
    atomic_store_explicit(&map.rate, m->rate, memory_order_relaxed);
    atomic_store_explicit(&map.limit, m->limit, memory_order_relaxed);
    atomic_store_explicit(&map.ns0, m->ns0, memory_order_relaxed);
    atomic_store_explicit(&map.seq, seq + 2, memory_order_release);
}

/* The map's ns at tick t, over any distance from its start (t may even be
 * a little before it, read on another CPU). */
static int64_t map_at(const map_copy *m, uint64_t t) {
    if (t < m->tsc0)
        return m->ns0 - (int64_t)scale(m->tsc0 - t, m->rate);
    uint64_t d = t - m->tsc0;
    if (d < m->limit)
        return m->ns0 + (int64_t)scale(d, m->mult);
    return m->ns0 + (int64_t)(scale(m->limit, m->mult) + scale(d - m->limit, m->rate));
}

/* A (ticks, ns) pair: the tightest of a few brackets of ticks around one
 * clock_gettime, its middle taken as the moment of the reading. */
static struct pair pair_now(void) {
    struct pair p = {0, 0};
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = ticks();
        int64_t ns = monotonic_ns();
        uint64_t b = ticks();
        if (b >= a && b - a < best) {
            best = b - a;
            p = (struct pair){a + (b - a) / 2, ns};
        }
    }
    return p;
}

/* ns per tick between two pairs, scaled by 2^32. */
static double slope(struct pair from, struct pair to) {
    return (double)(to.ns - from.ns) / (double)(to.tsc - from.tsc) * 4294967296.0;
}

/* Under cal_lock: a fresh pair, and the map refitted through it. */
static void refit(void) {
    map_copy old = map_read();
    if (have_pair && !old.limit && monotonic_ns() - base_old.ns < FIRST_SLOPE_NS)
        return; /* not yet: a pair costs eight clock reads */
    struct pair p = pair_now();
    if (!have_pair) {
        base_old = base_new = p;
        have_pair = 1;
        return;
    }
    if (p.tsc <= base_old.tsc || p.ns - base_old.ns < FIRST_SLOPE_NS)
        return;
    double rate = slope(base_old, p);
    map_copy m = {.tsc0 = p.tsc, .rate = (uint64_t)rate, .mult = (uint64_t)rate,
                  .limit = (uint64_t)(REFIT_NS / rate * 4294967296.0), .ns0 = p.ns};
    if (old.limit) {
        int64_t at = map_at(&old, p.tsc), error = p.ns - at;
        int64_t size = error < 0 ? -error : error;
        if (size > atomic_load(&max_error_ns))
            atomic_store(&max_error_ns, size);
        if (size <= STEP_NS) { /* continue from where the old map is, and slew */
            m.ns0 = at;
            m.mult = (uint64_t)(rate + (double)error / (double)m.limit * 4294967296.0);
        }
    }
    if (p.ns - base_new.ns >= BASELINE_NS) {
        base_old = base_new;
        base_new = p;
    }
    map_write(&m);
}

static void calibrate_when_due(int force) {
    if (pthread_mutex_trylock(&cal_lock) != 0)
        return; /* another thread calibrates; the current map still serves */
    map_copy m = map_read();
    if (force || !m.limit || ticks() - m.tsc0 >= m.limit)
        refit();
    pthread_mutex_unlock(&cal_lock);
}

static int64_t now_slow(void) {
    pthread_once(&source_once, decide_source);
    if (atomic_load_explicit(&source, memory_order_relaxed) != SOURCE_TSC)
        return monotonic_ns();
    calibrate_when_due(0);
    map_copy m = map_read();
    return m.limit ? map_at(&m, ticks()) : monotonic_ns();
}

int64_t pp_now(void) {
    if (PP_HAVE_TSC && atomic_load_explicit(&source, memory_order_relaxed) == SOURCE_TSC) {
        uint32_t seq = atomic_load_explicit(&map.seq, memory_order_acquire);
        uint64_t tsc0 = atomic_load_explicit(&map.tsc0, memory_order_relaxed);
        uint64_t mult = atomic_load_explicit(&map.mult, memory_order_relaxed);
        uint64_t limit = atomic_load_explicit(&map.limit, memory_order_relaxed);
        int64_t ns0 = atomic_load_explicit(&map.ns0, memory_order_relaxed);
        uint64_t d = ticks() - tsc0;
        atomic_thread_fence(memory_order_acquire);
        /* d < limit (100 ms of ticks) keeps d * mult below 2^63 */
        if (d < limit && !(seq & 1) && atomic_load_explicit(&map.seq, memory_order_relaxed) == seq)
            return ns0 + (int64_t)((d * mult) >> 32);
    }
    return now_slow();
}

void pp_clock_fork_lock(void) {
    pthread_mutex_lock(&cal_lock);
}

void pp_clock_fork_unlock(void) {
    pthread_mutex_unlock(&cal_lock);
}

void pp_clock_calibrate(void) {
    pthread_once(&source_once, decide_source);
    if (atomic_load(&source) == SOURCE_TSC)
        calibrate_when_due(1);
}

const char *pp_clock_source(void) {
    pthread_once(&source_once, decide_source);
    return source_text;
}

int64_t pp_clock_max_error_ns(void) {
    return atomic_load(&max_error_ns);
}

/* Read when a model is built from a session, never on the recording path. */
void pp_clock_identity(char *host, size_t host_cap, char *boot_id, size_t boot_cap) {
    if (gethostname(host, host_cap) != 0)
        host[0] = '\0';
    host[host_cap - 1] = '\0';
    boot_id[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return;
    if (!fgets(boot_id, (int)boot_cap, f))
        boot_id[0] = '\0';
    fclose(f);
    boot_id[strcspn(boot_id, "\n")] = '\0';
}
