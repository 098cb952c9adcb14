/* The whole-process scheduler sampler (PP_COLLECT_THREADS; docs/recording.md
 * "Scheduler figures"): a thread of the session that, every
 * `sched_sample_ns` (10 ms unless set), reads /proc/self/task/<tid>/schedstat
 * of every thread of the process and records, per thread, two counters on
 * its own track: the share of the period it was on a CPU ("cpu% NAME
 * [tid]") and the share it waited on a run queue ("runq% NAME [tid]"), so
 * the timeline shows when threads competed for cores. NAME is the thread's
 * pipeprof track name where it has one, else its comm. At the start it
 * marks the process's CPUs: online, allowed by its affinity, and the
 * affinity list; at the end its own CPU time, which is its cost.
 *
 * Cost: one open, pread and close per thread per period, about 3 us a
 * thread (bench/bench_sched.c gives the sampler's CPU per second). It never
 * touches the recording threads. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/cpus.h"
#include "core/grow.h"
#include "core/sampler.h"

typedef struct sampled_thread {
    int64_t tid;
    int64_t cpu, wait; /* cumulative ns at the last sample */
    pp_str cpu_name, wait_name; /* 0 until the first counter */
    int seen;          /* in the last pass over /proc/self/task */
} sampled_thread;

struct pp_sampler {
    pp_session *s;
    pthread_t thread;
    int64_t pid;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
    pp_track track;
    int64_t last; /* the previous pass's time, 0 before the first */
    sampled_thread *threads;
    size_t nthreads, cap;
};

static int read_schedstat(int64_t tid, int64_t *cpu, int64_t *wait) {
    char path[64], buf[96];
    snprintf(path, sizeof path, "/proc/self/task/%lld/schedstat", (long long)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    long long c, w;
    if (sscanf(buf, "%lld %lld", &c, &w) != 2)
        return -1;
    *cpu = c;
    *wait = w;
    return 0;
}

/* The thread's name: its pipeprof track's, else its comm. */
static void thread_name(pp_session *s, int64_t tid, char *out, size_t len) {
    out[0] = '\0';
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->ntracks; i++)
        if (s->tracks[i].kind == PP_TRACK_KIND_THREAD && s->tracks[i].tid == tid) {
            snprintf(out, len, "%s", pp_str_text(s->tracks[i].name));
            break;
        }
    pthread_mutex_unlock(&s->lock);
    if (out[0])
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%lld/comm", (long long)tid);
    FILE *f = fopen(path, "re");
    if (f) {
        if (fgets(out, (int)len, f))
            out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
    if (!out[0])
        snprintf(out, len, "thread");
}

static sampled_thread *find_thread(struct pp_sampler *sp, int64_t tid) {
    for (size_t i = 0; i < sp->nthreads; i++)
        if (sp->threads[i].tid == tid)
            return &sp->threads[i];
    if (pp_grow((void **)&sp->threads, &sp->cap, sp->nthreads, sizeof *sp->threads) != PP_OK)
        return NULL;
    sp->threads[sp->nthreads] = (sampled_thread){.tid = tid, .cpu = -1};
    return &sp->threads[sp->nthreads++];
}

/* One pass: a counter pair per thread seen before, a baseline for a new one. */
static void sample(struct pp_sampler *sp) {
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    int64_t now = pp_now();
    int64_t period = sp->last ? now - sp->last : 0;
    sp->last = now;
    for (struct dirent *e; (e = readdir(d));) {
        int64_t tid = strtoll(e->d_name, NULL, 10), cpu, wait;
        if (tid <= 0 || read_schedstat(tid, &cpu, &wait) != 0)
            continue;
        sampled_thread *t = find_thread(sp, tid);
        if (!t)
            break;
        if (t->cpu >= 0 && period > 0) {
            if (!t->cpu_name) {
                char name[64], text[96];
                thread_name(sp->s, tid, name, sizeof name);
                snprintf(text, sizeof text, "cpu%% %s [%lld]", name, (long long)tid);
                t->cpu_name = pp_intern(text);
                snprintf(text, sizeof text, "runq%% %s [%lld]", name, (long long)tid);
                t->wait_name = pp_intern(text);
            }
            pp_counter(sp->s, sp->track, t->cpu_name, now, 100.0 * (double)(cpu - t->cpu) / (double)period);
            pp_counter(sp->s, sp->track, t->wait_name, now, 100.0 * (double)(wait - t->wait) / (double)period);
        }
        t->cpu = cpu;
        t->wait = wait;
    }
    closedir(d);
}

/* "0-3,6" from a CPU set. */
static void affinity_text(const cpu_set_t *set, char *out, size_t len) {
    size_t used = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && used + 16 < len; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
            end++;
        used += (size_t)snprintf(out + used, len - used, end > c ? "%s%d-%d" : "%s%d",
                                 used ? "," : "", c, end);
        c = end;
    }
}

/* The process's CPUs, marked once on the sampler's track. */
static void mark_cpus(struct pp_sampler *sp) {
    cpu_set_t set;
    char list[256] = "";
    int allowed = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        allowed = CPU_COUNT(&set);
        affinity_text(&set, list, sizeof list);
    }
    if (pp_mark(sp->s, sp->track, pp_intern("sched sampler"), pp_now()) != PP_OK)
        return;
    pp_annotate_int(sp->s, pp_intern("cpus_online"), (int64_t)pp_cpus_online());
    pp_annotate_int(sp->s, pp_intern("cpus_allowed"), allowed);
    pp_annotate_str(sp->s, pp_intern("affinity"), pp_intern(list));
    pp_annotate_int(sp->s, pp_intern("period_ns"), sp->s->sched_sample_ns);
}

static void *sampler_main(void *arg) {
    struct pp_sampler *sp = arg;
    if (pp_track_thread(sp->s, "pipeprof sampler", &sp->track) != PP_OK)
        return NULL;
    mark_cpus(sp);
    struct timespec t0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    pthread_mutex_lock(&sp->lock);
    while (!sp->stop) {
        pthread_mutex_unlock(&sp->lock);
        sample(sp);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        int64_t ns = until.tv_nsec + sp->s->sched_sample_ns;
        until.tv_sec += ns / 1000000000;
        until.tv_nsec = ns % 1000000000;
        pthread_mutex_lock(&sp->lock);
        while (!sp->stop && pthread_cond_timedwait(&sp->wake, &sp->lock, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&sp->lock);
    struct timespec t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    if (pp_mark(sp->s, sp->track, pp_intern("sched sampler end"), pp_now()) == PP_OK)
        pp_annotate_int(sp->s, pp_intern("sampler_cpu_ns"),
                        (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
    return NULL;
}

int pp_sampler_start(pp_session *s) {
    if (!(s->collect & PP_COLLECT_THREADS) || s->sampler)
        return PP_OK;
    struct pp_sampler *sp = calloc(1, sizeof *sp);
    if (!sp)
        return PP_ENOMEM;
    sp->s = s;
    sp->pid = (int64_t)getpid();
    pthread_mutex_init(&sp->lock, NULL);
    pthread_cond_init(&sp->wake, NULL);
    if (pthread_create(&sp->thread, NULL, sampler_main, sp) != 0) {
        pthread_cond_destroy(&sp->wake);
        pthread_mutex_destroy(&sp->lock);
        free(sp);
        return PP_EIO;
    }
    s->sampler = sp;
    return PP_OK;
}

void pp_sampler_stop(pp_session *s) {
    struct pp_sampler *sp = s->sampler;
    if (!sp || sp->pid != (int64_t)getpid())
        return;
    pthread_mutex_lock(&sp->lock);
    sp->stop = 1;
    pthread_cond_signal(&sp->wake);
    pthread_mutex_unlock(&sp->lock);
    pthread_join(sp->thread, NULL);
    pthread_cond_destroy(&sp->wake);
    pthread_mutex_destroy(&sp->lock);
    free(sp->threads);
    free(sp);
    s->sampler = NULL;
}
