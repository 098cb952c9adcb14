/* The HTML report's data: the figures of the report it was built from, names
 * that cannot break out of the page, the timeline's span cap, and clear
 * errors. (tests/analyze/test_html_browser.sh checks the page in Chromium.) */
#include <errno.h>
#include <unistd.h>

#include "analyze/render_html.h"
#include "builder.h"

/* Writes the report of `m` as HTML and returns the page (malloc'd). */
static char *html_of(const pp_model *m, const char *file) {
    pp_report *r = b_report(m, NULL);
    const char *path = pp_test_path(file);
    pp_error err = {{0}};
    int rc = pp_report_write_html(r, m, path, &err);
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "pp_report_write_html: %s (%s)", pp_strerror(rc), err.msg);
    pp_report_free(r);
    char *page = pp_test_read_file(path, NULL);
    EXPECT(page != NULL);
    remove(path);
    return page;
}

/* The text from `from` up to the next `to` (malloc'd), for checking one
 * object of the page's data. */
static char *between(const char *page, const char *from, const char *to) {
    const char *a = page ? strstr(page, from) : NULL;
    const char *b = a ? strstr(a + strlen(from), to) : NULL;
    if (!a || !b) {
        pp_test_fail(__FILE__, __LINE__, "no \"%s\" .. \"%s\" in the page", from, to);
        return strdup("");
    }
    return strndup(a, (size_t)(b - a));
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Decode (CPU) takes 300 ns and Classify (simulated GPU) 900 ns per batch,
 * four batches one after the other: Classify is the bottleneck of all four
 * cycles, its stage time is 900 at every percentile, and the GPU's track
 * rows say simulated. */
static void test_page_holds_the_report_figures(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), gpu = b_device(m, "GPU", 0, 1);
    for (int64_t b = 0; b < 4; b++) {
        b_exec(m, cpu, "Decode", b, b * 1200, b * 1200 + 300, 250, 0);
        b_exec(m, gpu, "Classify", b, b * 1200 + 300, b * 1200 + 1200, 800, 40);
    }
    char *page = html_of(m, "figures.html");
    EXPECT_CONTAINS(page, "<!DOCTYPE html>");
    char *stage = between(page, "{\"name\": \"Classify\"", "\"time_hist\"");
    EXPECT_CONTAINS(stage, "\"bottleneck_count\": 4");
    EXPECT_CONTAINS(stage, "\"p50\": 900, ");
    EXPECT_CONTAINS(stage, "\"max\": 900, ");
    EXPECT_CONTAINS(stage, "\"hw_ns\": 3200");
    EXPECT_CONTAINS(stage, "\"xfer_ns\": 160");
    free(stage);
    stage = between(page, "{\"name\": \"Decode\"", "\"time_hist\"");
    EXPECT_CONTAINS(stage, "\"bottleneck_count\": 0");
    EXPECT_CONTAINS(stage, "\"p50\": 300, ");
    free(stage);
    /* 900 ns lies in the quarter-octave bin [2^(39/4), 2^(40/4)) = [861.08, 1024),
     * whose lower edge is written rounded up. */
    char *hist = between(page, "{\"name\": \"Classify\"", "]]}");
    EXPECT_STR(strstr(hist, "\"time_hist\""), "\"time_hist\": [[862, 4"); /* up to "]]}" */
    free(hist);
    char *gpu_dev = between(page, "{\"name\": \"GPU\"", "\"bubble_hist\"");
    EXPECT_CONTAINS(gpu_dev, "\"simulated\": true");
    /* W = [0, 4800): the GPU is busy 4 * 900 ns of it */
    EXPECT_CONTAINS(gpu_dev, "\"busy_ns\": 3600");
    EXPECT_CONTAINS(gpu_dev, "\"wall_util\": 0.75");
    free(gpu_dev);
    char *cycles = between(page, "\"cycles\": {", "]}");
    EXPECT_CONTAINS(cycles, "\"batches\": 4");
    /* batch 0: cycle 900, bottleneck stage index 1 (Classify), end to end
     * 1200, stage times Decode 300, Classify 900 */
    EXPECT_CONTAINS(cycles, "[0, true, 900, 1, 1200, [300, 900]]");
    free(cycles);
    EXPECT_CONTAINS(page, "Bottleneck: stage \\\"Classify\\\"");
    char *rows = between(page, "\"rows\": [", "\"spans\"");
    EXPECT_CONTAINS(rows, "{\"group\": \"CPU\", \"name\": \"stream 0\", \"kind\": \"device\", \"simulated\": false}");
    EXPECT_CONTAINS(rows, "{\"group\": \"GPU\", \"name\": \"stream 0\", \"kind\": \"device\", \"simulated\": true}");
    free(rows);
    /* 8 spans, all drawn in full */
    EXPECT_CONTAINS(page, "\"spans_total\": 8, \"duration_ns\": 4800, \"detail\": [0, 4800]");
    EXPECT(!strstr(page, "\"buckets\""));
    free(page);
    pp_model_free(m);
}

/* A device, a stage and a track named to close the data's script element
 * and open one of their own stay inside the JSON: the page holds exactly the
 * script elements of its template, and the names appear escaped. */
static void test_hostile_names_cannot_break_out(void) {
    const char *evil = "</script><script>alert(1)</script><!--";
    pp_model *m = b_model();
    uint32_t dev = b_device(m, evil, 0, 0), host = b_thread(m, evil);
    b_exec(m, dev, evil, 0, 0, 100, 0, 0);
    b_span(m, host, PP_ROLE_USER, evil, NULL, -1, 0, 50, 0, 0);
    char *page = html_of(m, "evil.html");
    EXPECT_EQ_U64(count(page, "<script"), count(html_page, "<script"));
    EXPECT_EQ_U64(count(page, "</script"), count(html_page, "</script"));
    EXPECT_EQ_U64(count(page, "<!--"), count(html_page, "<!--"));
    EXPECT_CONTAINS(page, "\"\\u003c/script>\\u003cscript>alert(1)\\u003c/script>\\u003c!--\"");
    free(page);
    pp_model_free(m);
}

/* 30000 execs 100 ns apart: the first 15000 last 10 ns, the rest 90 ns. The
 * page keeps the cap's 20000 spans in full, and the busiest stretch of that
 * many is the last: spans 10000 .. 29999, from 1000000 ns on (the long ones
 * and the 5000 short ones before them). The rest is
 * summarized in buckets. */
static void test_large_timeline_keeps_the_busiest_stretch(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0);
    for (int64_t i = 0; i < 30000; i++)
        b_exec(m, cpu, "S", i, i * 100, i * 100 + (i < 15000 ? 10 : 90), 0, 0);
    char *page = html_of(m, "large.html");
    EXPECT_CONTAINS(page, "\"cap\": 20000, \"spans_total\": 30000");
    const char *d = strstr(page, "\"detail\": [");
    long long from = -1, to = -1;
    EXPECT(d && sscanf(d, "\"detail\": [%lld, %lld]", &from, &to) == 2);
    EXPECT(from > 999900 && from <= 1000000);
    EXPECT_EQ_I64(to, 29999 * 100 + 90);
    char *spans = between(page, "\"spans\": [", "\"buckets\"");
    EXPECT_EQ_U64(count(spans, "\n[0,"), 20000);
    EXPECT(strstr(spans, "\n[0,1000000,10,0,1,10000,"));
    EXPECT(strstr(spans, "\n[0,2999900,90,0,1,29999,"));
    EXPECT(!strstr(spans, "\n[0,999900,"));
    free(spans);
    EXPECT_CONTAINS(page, "\"buckets\": {\"n\": 2000, \"rows\": [");
    free(page);
    pp_model_free(m);
}

/* A page that cannot be written is an I/O error naming the path, and leaves
 * nothing behind. */
static void test_unwritable_path_fails_cleanly(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0);
    b_exec(m, cpu, "S", 0, 0, 100, 0, 0);
    pp_report *r = b_report(m, NULL);
    pp_error err = {{0}};
    const char *path = pp_test_path("no-such-dir/report.html");
    EXPECT_EQ_I64(pp_report_write_html(r, m, path, &err), PP_EIO);
    EXPECT_CONTAINS(err.msg, "no-such-dir/report.html: cannot write");
    EXPECT(access(path, F_OK) != 0);
    pp_report_free(r);
    pp_model_free(m);
}

/* A model other than the report's is refused, not read out of bounds. */
static void test_another_model_is_refused(void) {
    pp_model *m = b_model();
    b_device(m, "CPU", 0, 0);
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, gpu, "S", 0, 0, 100, 0, 0);
    pp_model *other = b_model();
    pp_report *r = b_report(m, NULL);
    pp_error err = {{0}};
    const char *path = pp_test_path("other.html");
    EXPECT_EQ_I64(pp_report_write_html(r, other, path, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "not the one the report was built from");
    EXPECT(access(path, F_OK) != 0);
    pp_report_free(r);
    pp_model_free(other);
    pp_model_free(m);
}

int main(void) {
    RUN(test_page_holds_the_report_figures);
    RUN(test_hostile_names_cannot_break_out);
    RUN(test_large_timeline_keeps_the_busiest_stretch);
    RUN(test_unwritable_path_fails_cleanly);
    RUN(test_another_model_is_refused);
    return pp_test_finish();
}
