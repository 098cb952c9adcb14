/* A flight recording (src/capture/pptrace_stream.c) holds the same trace as
 * the model of the session written whole (pp_model_from_session): every
 * kind of record — spans with int, double and string annotations, marks,
 * counters, flows, push/pop, a range ended on another thread, a region, a
 * range that never ends — from two threads, spread over several of the
 * writer's periods. Only the order of events may differ, so both are
 * compared as sorted lists of events described by value (tracks by name).
 *
 * The child records, pauses, writes its model to MODEL.pptrace, resumes
 * and exits: the flight recorder then finishes FILE.pptrace. */
#include <pthread.h>
#include <stdio.h>

#include "env_child.h"

static pp_session *sess;
static uint64_t shared_range; /* begun on main, ended by the helper thread */

static void *helper(void *arg) {
    (void)arg;
    pp_track t;
    pp_track_thread(sess, "helper", &t);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern("help");
    for (int i = 0; i < 50; i++) {
        r.ts_ns = pp_now();
        r.dur_ns = 7;
        r.batch = i;
        pp_span(sess, &r);
        pp_annotate_str(sess, pp_intern("who"), pp_intern(i % 2 ? "odd" : "even"));
        usleep(4000);
    }
    pp_range_stop(sess, shared_range);
    return NULL;
}

static int same_child(const char *model_path) {
    sess = pp_default_session();
    if (!sess)
        return 3;
    pp_track main_t, gpu;
    pp_track_thread(sess, "main", &main_t);
    pp_track_device(sess, "GPU.0", 1, NULL, 0, &gpu);
    uint64_t region, never;
    pp_region_begin(sess, pp_intern("warm up"), &region);
    pp_range_start(sess, pp_intern("shared"), &shared_range);
    pp_range_start(sess, pp_intern("never ends"), &never);
    pthread_t th;
    if (pthread_create(&th, NULL, helper, NULL) != 0)
        return 4;
    pp_span_rec r;
    pp_span_rec_init(&r);
    for (int i = 0; i < 60; i++) {
        r.track = i % 2 ? gpu : main_t;
        r.name = pp_intern(i % 2 ? "exec" : "prep");
        r.stage = pp_intern(i % 3 ? "S1" : "S2");
        r.role = i % 2 ? PP_ROLE_EXEC : PP_ROLE_USER;
        r.ts_ns = pp_now();
        r.dur_ns = 100 + i;
        r.batch = i / 2;
        r.hw_ns = i % 2 ? 50 + (uint64_t)i : 0;
        r.xfer_ns = i % 2 ? 5 : 0;
        pp_span(sess, &r);
        pp_annotate_int(sess, pp_intern("i"), i);
        if (i % 5 == 0)
            pp_annotate_double(sess, pp_intern("x"), i / 4.0);
        pp_mark(sess, main_t, pp_intern("tick"), pp_now());
        pp_counter(sess, gpu, pp_intern("queue"), pp_now(), i * 1.5);
        pp_flow(sess, main_t, pp_intern("batch"), pp_now(), (uint64_t)i + 1, PP_FLOW_BEGIN);
        pp_push(sess, main_t, pp_intern("pushed"));
        pp_pop(sess);
        if (i == 30)
            pp_region_end(sess, region);
        usleep(5000); /* 60 x 5 ms: several of the writer's periods */
    }
    pthread_join(th, NULL);
    pp_session_pause(sess);
    pp_model *m = NULL;
    pp_error err = {{0}};
    if (pp_model_from_session(sess, &m) != PP_OK || pp_pptrace_write(m, model_path, &err) != PP_OK)
        return 5;
    pp_model_free(m);
    pp_session_resume(sess);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every event as one line of values, names and annotations, sorted. */
static char **describe(const pp_model *m, size_t *count) {
    pp_event_columns c;
    pp_model_columns(m, &c);
    const pp_annotation *anns = pp_model_annotations(m, &(size_t){0});
    char **lines = calloc(c.count ? c.count : 1, sizeof *lines);
    for (size_t i = 0; i < c.count; i++) {
        char buf[1024];
        const pp_track_info *t = pp_model_track(m, c.track[i]);
        int n = snprintf(buf, sizeof buf, "%s/%s/%s|%u|%lld|%lld|%s|%s|%lld|%llu|%llu|%llu|%g|%u|%u",
                         pp_model_string(m, t->process), pp_model_string(m, t->device),
                         pp_model_string(m, t->name), c.kind[i], (long long)c.ts_ns[i],
                         (long long)c.dur_ns[i], pp_model_string(m, c.name[i]),
                         pp_model_string(m, c.stage[i]), (long long)c.batch[i],
                         (unsigned long long)c.hw_ns[i], (unsigned long long)c.xfer_ns[i],
                         (unsigned long long)c.id[i], c.value[i], c.role[i], c.phase[i]);
        size_t first, k;
        pp_model_annotations_of(m, i, &first, &k);
        for (size_t j = first; j < first + k && n < (int)sizeof buf - 64; j++) {
            const pp_annotation *a = &anns[j];
            n += snprintf(buf + n, sizeof buf - (size_t)n, " %s=", pp_model_string(m, a->key));
            if (a->type == PP_VALUE_INT)
                n += snprintf(buf + n, sizeof buf - (size_t)n, "%lld", (long long)a->v.i);
            else if (a->type == PP_VALUE_DOUBLE)
                n += snprintf(buf + n, sizeof buf - (size_t)n, "%g", a->v.d);
            else
                n += snprintf(buf + n, sizeof buf - (size_t)n, "'%s'", pp_model_string(m, a->v.s));
        }
        lines[i] = strdup(buf);
    }
    qsort(lines, c.count, sizeof *lines, cmp_str);
    *count = c.count;
    return lines;
}

static void test_flight_recording_equals_the_model(void) {
    const char *flight = pp_test_path("same_flight.pptrace");
    const char *whole = pp_test_path("same_model.pptrace");
    pid_t pid = fork();
    if (pid == 0) {
        setenv("PIPEPROF_OUTPUT", flight, 1);
        unsetenv("PIPEPROF_OVERFLOW");
        execl("/proc/self/exe", "test_flight_same", "child", whole, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pp_model *a = read_trace(flight), *b = read_trace(whole);
    if (!a || !b) {
        pp_model_free(a);
        pp_model_free(b);
        return;
    }
    size_t na, nb;
    char **la = describe(a, &na), **lb = describe(b, &nb);
    /* 50 + 60 spans, 60 marks, counters, flows and pushes, 1 range, 1 region */
    EXPECT_EQ_U64(nb, 50 + 60 * 5 + 2);
    EXPECT_EQ_U64(na, nb);
    for (size_t i = 0; i < na && i < nb; i++)
        if (strcmp(la[i], lb[i]) != 0) {
            pp_test_fail(__FILE__, __LINE__, "event %zu differs:\n  flight: %s\n  model:  %s", i,
                         la[i], lb[i]);
            break;
        }
    const pp_model_meta *ma = pp_model_meta_get(a), *mb = pp_model_meta_get(b);
    EXPECT_EQ_I64(ma->level, mb->level);
    EXPECT_EQ_U64(ma->dropped_records, mb->dropped_records);
    EXPECT_STR(pp_model_string(a, ma->process_name), pp_model_string(b, mb->process_name));
    /* "never ends" was open in both (the model's session was paused, not
     * recording: an open range is unmatched there too) */
    EXPECT_EQ_U64(mb->unmatched_ends, 1);
    EXPECT_EQ_U64(ma->unmatched_ends, 1);
    EXPECT_EQ_U64(pp_model_thread_count(a), 2);
    for (size_t i = 0; i < na; i++)
        free(la[i]);
    for (size_t i = 0; i < nb; i++)
        free(lb[i]);
    free(la);
    free(lb);
    pp_model_free(a);
    pp_model_free(b);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return same_child(argv[2]);
    RUN(test_flight_recording_equals_the_model);
    return pp_test_finish();
}
