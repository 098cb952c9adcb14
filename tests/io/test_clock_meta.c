/* Every recorded trace says which clock its timestamps are on (the clock,
 * the host and the kernel's boot id), in every format that reads back, so
 * that `pipeprof merge` can tell "same host, same clock" from a trace that
 * needs aligning (docs/merging.md). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "testutil.h"

static pp_model *recorded_model(void) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_model *m = NULL;
    pp_session_config_init(&cfg);
    if (pp_session_open(&cfg, &s) != PP_OK || pp_session_start(s) != PP_OK)
        return NULL;
    pp_track t;
    pp_track_thread(s, "main", &t);
    pp_mark(s, t, pp_intern("sync"), pp_now());
    pp_session_stop(s, NULL);
    pp_model_from_session(s, &m);
    pp_session_close(s);
    return m;
}

static void expect_this_hosts_clock(const pp_model *m, const char *what) {
    char host[256], boot[64] = "";
    const pp_model_meta *meta = pp_model_meta_get(m);
    EXPECT_EQ_I64(gethostname(host, sizeof host), 0);
    char *text = pp_test_read_file("/proc/sys/kernel/random/boot_id", NULL);
    if (text)
        snprintf(boot, sizeof boot, "%.*s", (int)strcspn(text, "\n"), text);
    free(text);
    if (strcmp(pp_model_string(m, meta->clock), "CLOCK_MONOTONIC") != 0 ||
        strcmp(pp_model_string(m, meta->host), host) != 0 ||
        strcmp(pp_model_string(m, meta->boot_id), boot) != 0)
        pp_test_fail(__FILE__, __LINE__, "%s: clock \"%s\" host \"%s\" boot \"%s\", expected "
                     "CLOCK_MONOTONIC, \"%s\", \"%s\"", what, pp_model_string(m, meta->clock),
                     pp_model_string(m, meta->host), pp_model_string(m, meta->boot_id), host, boot);
    EXPECT(boot[0] != '\0'); /* Linux has a boot id: without it no clock is shared */
    EXPECT_EQ_I64(meta->alignment, 0);
    EXPECT_EQ_I64(meta->alignment_error_ns, 0);
}

static void test_session_records_its_clock(void) {
    pp_model *m = recorded_model();
    EXPECT(m != NULL);
    if (m)
        expect_this_hosts_clock(m, "session");
    pp_model_free(m);
}

/* .pptrace (its optional CLOCK block) and Chrome JSON (otherData) keep it. */
static void test_clock_survives_both_formats(void) {
    pp_model *m = recorded_model();
    const char *paths[] = {pp_test_path("clock.pptrace"), pp_test_path("clock.json")};
    for (int i = 0; m && i < 2; i++) {
        pp_model *back = NULL;
        pp_error err = {{0}};
        EXPECT_EQ_I64(pp_trace_write(m, paths[i], &err), PP_OK);
        EXPECT_EQ_I64(pp_trace_read(paths[i], &back, &err), PP_OK);
        if (back)
            expect_this_hosts_clock(back, paths[i]);
        pp_model_free(back);
    }
    pp_model_free(m);
}

/* A foreign trace says nothing of its clock: the fields stay empty. */
static void test_foreign_trace_has_no_clock(void) {
    const char *path = pp_test_path("foreign.json");
    const char *text = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"ts\":1,\"dur\":2,"
                       "\"pid\":1,\"tid\":1}]}";
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_test_write_file(path, text, strlen(text)), 0);
    EXPECT_EQ_I64(pp_trace_read(path, &m, &err), PP_OK);
    if (m) {
        EXPECT_EQ_I64(pp_model_meta_get(m)->clock, 0);
        EXPECT_EQ_I64(pp_model_meta_get(m)->boot_id, 0);
    }
    pp_model_free(m);
}

int main(void) {
    RUN(test_session_records_its_clock);
    RUN(test_clock_survives_both_formats);
    RUN(test_foreign_trace_has_no_clock);
    return pp_test_finish();
}
