/* A name over PP_NAME_MAX_BYTES (an NVTX range of 70 MiB once lost the
 * whole trace: .pptrace refused the string, a .json was written that its
 * reader refused) is cut at record time: the trace keeps its head, ends it
 * with a marker saying how long it was, counts the bytes cut in the data
 * loss (meta.truncated_bytes), and every format the session writes reads
 * back. */
#include <stdlib.h>
#include <string.h>

#include "pipeprof/io.h"
#include "pipeprof/model.h"
#include "testutil.h"

enum { LONG_NAME = 70 << 20 };

/* "é" (2 bytes) repeated, so a cut in the middle of a character would
 * leave invalid UTF-8 behind. */
static char *long_name(size_t len) {
    char *s = malloc(len + 1);
    for (size_t i = 0; i + 1 < len; i += 2)
        memcpy(s + i, "\xc3\xa9", 2);
    s[len - 1] = 'x';
    s[len] = '\0';
    return s;
}

/* Checks the one recorded range of `path`: its name is the head of the long
 * name, cut on a character boundary, with the marker; the bytes cut are
 * counted. */
static void check_trace(const char *path, const char *name, size_t name_len) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    int rc = pp_trace_read(path, &m, &err);
    if (rc != PP_OK) {
        pp_test_fail(__FILE__, __LINE__, "%s: %s (%s)", path, pp_strerror(rc), err.msg);
        return;
    }
    pp_event_columns c;
    EXPECT_EQ_I64(pp_model_columns(m, &c), PP_OK);
    EXPECT_EQ_U64(pp_model_event_count(m), 1);
    const char *text = pp_model_string(m, c.name[0]);
    size_t len = strlen(text);
    EXPECT(len <= PP_NAME_MAX_BYTES);
    EXPECT(len > PP_NAME_MAX_BYTES - 64); /* only the marker's room is given up */
    char marker[64];
    snprintf(marker, sizeof marker, "...[cut from %zu bytes]", name_len);
    size_t mlen = strlen(marker), kept = len - mlen;
    EXPECT(len > mlen && strcmp(text + kept, marker) == 0);
    EXPECT(kept % 2 == 0 && memcmp(text, name, kept) == 0); /* whole characters */
    EXPECT_EQ_U64(pp_model_meta_get(m)->truncated_bytes, name_len - kept);
    pp_model_free(m);
}

static void test_over_long_range_name_is_cut_and_counted(void) {
    char *name = long_name(LONG_NAME);
    pp_str id = pp_intern(name);
    EXPECT(id != 0);
    EXPECT(strlen(pp_str_text(id)) <= PP_NAME_MAX_BYTES);
    EXPECT_EQ_U64(pp_intern(name), id); /* same text, same id */
    static const char *const outputs[] = {"long_name.pptrace", "long_name.json"};
    for (size_t i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s", pp_test_path(outputs[i]));
        pp_session_config cfg;
        pp_session_config_init(&cfg);
        cfg.output = path;
        pp_session *s = NULL;
        pp_track t;
        pp_error err = {{0}};
        EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
        EXPECT_EQ_I64(pp_session_start(s), PP_OK);
        EXPECT_EQ_I64(pp_track_thread(s, "main", &t), PP_OK);
        EXPECT_EQ_I64(pp_push(s, t, id), PP_OK);
        EXPECT_EQ_I64(pp_pop(s), PP_OK);
        int rc = pp_session_stop(s, &err);
        if (rc != PP_OK)
            pp_test_fail(__FILE__, __LINE__, "stop, writing %s: %s", path, err.msg);
        else
            check_trace(path, name, LONG_NAME);
        pp_session_close(s);
    }
    free(name);
}

/* A name at the limit is kept as it is. */
static void test_name_at_the_limit_is_kept(void) {
    char *name = long_name(PP_NAME_MAX_BYTES);
    EXPECT_STR(pp_str_text(pp_intern(name)), name);
    free(name);
}

int main(void) {
    RUN(test_name_at_the_limit_is_kept);
    RUN(test_over_long_range_name_is_cut_and_counted);
    return pp_test_finish();
}
