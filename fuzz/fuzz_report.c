/* libFuzzer harness: the analyzer (pp_report_build) and every renderer of
 * its report on whatever model the Chrome JSON reader makes of the input.
 * Each model is analyzed four ways: as it is; labeled by name patterns (a
 * stage and batch in one name, a batch from an enclosing ProfilerStep#N);
 * over a window cut to the middle of the trace; and over a region. A
 * report that builds is written as text, JSON (file and memory), CSV and
 * HTML, into memory files and /dev/shm (the scratch names fuzz/run.sh
 * removes). As it is and labeled by ProfilerStep#N, a second model read
 * from the input is analyzed by pp_report_build_owned too, which must give
 * the same result and the same JSON. An error with a message is a fine
 * outcome; a crash, leak, undefined behaviour, a report the renderers
 * choke on or two builds that differ is not. */
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fuzz_input.h"
#include "fuzz_model.h"
#include "pipeprof/analyze.h"

/* Removes the CSV folder and the tables in it. */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char file[512];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        remove(file);
    }
    closedir(d);
    rmdir(dir);
}

static void render(const pp_report *r, const pp_model *m) {
    char path[128];
    pp_error err = {{0}};
    FILE *sink = fopen("/dev/null", "w");
    if (sink) {
        pp_report_write_text(r, sink);
        pp_report_write_json(r, sink);
        fclose(sink);
    }
    char *json = NULL;
    size_t len = 0;
    if (pp_report_json(r, &json, &len) == PP_OK && strlen(json) != len) {
        fprintf(stderr, "pp_report_json: %zu bytes said, %zu before the NUL\n", len, strlen(json));
        abort();
    }
    pp_report_json_free(json);
    snprintf(path, sizeof path, "/dev/shm/pp-fuzz-csv-%d", (int)getpid());
    if (mkdir(path, 0700) == 0) {
        pp_report_write_csv(r, path, &err);
        remove_dir(path);
    }
    snprintf(path, sizeof path, "/dev/shm/pp-fuzz-%d.html", (int)getpid());
    if (pp_report_write_html(r, m, path, &err) == PP_OK)
        remove(path);
}

static char *report_json(const pp_report *r) {
    char *json = NULL;
    return r && pp_report_json(r, &json, NULL) == PP_OK ? json : NULL;
}

/* With `path`, the input's file: also the owned build of a second model read
 * from it, compared. */
static void analyze(const pp_model *m, const pp_analyze_options *o, const char *path) {
    pp_report *r = NULL;
    pp_error err = {{0}};
    int rc = pp_report_build(m, o, &r, &err);
    if (rc == PP_OK)
        render(r, m);
    pp_model *again = NULL;
    pp_error err_again = {{0}};
    if (path && pp_chrome_read(path, &again, &err_again) == PP_OK) {
        pp_report *owned = NULL;
        int rc_owned = pp_report_build_owned(again, o, &owned, &err_again);
        char *a = report_json(r), *b = report_json(owned);
        int differ = a && b && strcmp(a, b) != 0;
        if (rc_owned != rc || strcmp(err.msg, err_again.msg) != 0 || differ) {
            fprintf(stderr, "pp_report_build_owned: %d \"%s\", pp_report_build: %d \"%s\"%s\n",
                    rc_owned, err_again.msg, rc, err.msg, differ ? ", JSON differs" : "");
            abort();
        }
        pp_report_json_free(a);
        pp_report_json_free(b);
        pp_report_free(owned);
    }
    pp_report_free(r);
}

/* The first start and the last end over the events (0, 0 when none). */
static void span_of(const pp_model *m, int64_t *first, int64_t *last) {
    pp_event_columns c;
    pp_model_columns(m, &c);
    *first = *last = 0;
    for (size_t i = 0; i < c.count; i++) {
        int64_t end = c.ts_ns[i] > INT64_MAX - c.dur_ns[i] ? INT64_MAX : c.ts_ns[i] + c.dur_ns[i];
        if (i == 0 || c.ts_ns[i] < *first)
            *first = c.ts_ns[i];
        if (i == 0 || end > *last)
            *last = end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_input_file(data, size, path);
    if (fd < 0)
        return 0;
    pp_model *m = NULL;
    pp_error err = {{0}};
    if (pp_chrome_read(path, &m, &err) == PP_OK) {
        pp_analyze_options o;
        pp_analyze_options_init(&o);
        o.source = "fuzz.json";
        analyze(m, &o, path);
        o.batch_pattern = "^(?<stage>.+)/batch(?<batch>[0-9]+)$";
        analyze(m, &o, NULL);
        o.batch_pattern = "^ProfilerStep#(?<batch>[0-9]+)$";
        o.stage_pattern = "^(?<stage>Stage[0-9]_[A-Za-z]+)(/batch(?<batch>[0-9]+))?$";
        analyze(m, &o, path);
        pp_analyze_options_init(&o);
        int64_t first, last;
        span_of(m, &first, &last);
        o.has_from = o.has_to = 1;
        o.from_ns = first + (last / 4 - first / 4);
        o.to_ns = last - (last / 4 - first / 4);
        analyze(m, &o, NULL);
        pp_analyze_options_init(&o);
        o.region = "warm up";
        analyze(m, &o, NULL);
    }
    pp_model_free(m);
    close(fd);
    return 0;
}
