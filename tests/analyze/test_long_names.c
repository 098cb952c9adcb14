/* Names longer than any buffer of the text report: a device, a stage and a
 * track name of a few hundred bytes are printed whole (render_text.c's
 * header promises no name is ever cut), and nothing is written past a
 * buffer (a 159-byte device name with the "*" of its hardware flag once
 * overflowed a 160-byte stack buffer; the suite's ASan build catches any
 * return of it). */
#include "builder.h"

/* A name of `len` bytes: "dev-" then a cycle of letters, ending in "END". */
static char *long_name(const char *prefix, size_t len) {
    char *s = malloc(len + 1);
    size_t p = strlen(prefix);
    memcpy(s, prefix, p);
    for (size_t i = p; i < len; i++)
        s[i] = (char)('a' + i % 26);
    memcpy(s + len - 3, "END", 3);
    s[len] = '\0';
    return s;
}

static char *text_report(const pp_report *r) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    EXPECT_EQ_I64(pp_report_write_text(r, f), PP_OK);
    fclose(f);
    return text;
}

/* Lengths around the old 160-byte buffers and far beyond them; the device
 * is simulated and reports hardware time above its wall, so its label is
 * the name, " (simulated)" and the "*" that points at the note. */
static void test_long_device_and_stage_names_printed_whole(void) {
    static const size_t lengths[] = {147, 148, 159, 160, 400, 5000};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        char *dev = long_name("dev-", lengths[k]);
        char *stage = long_name("stage-", lengths[k]);
        pp_model *m = b_model();
        uint32_t gpu = b_device(m, dev, 0, 1);
        b_exec(m, gpu, stage, 0, 0, 1000, 2000, 0); /* hw 2000 > wall 1000 */
        b_exec(m, gpu, stage, 1, 2000, 3000, 500, 0);
        pp_report *r = b_report(m, NULL);
        char *text = text_report(r);
        char *starred = malloc(lengths[k] + 32);
        snprintf(starred, lengths[k] + 32, "%s (simulated)*", dev);
        EXPECT_CONTAINS(text, starred); /* the devices table */
        snprintf(starred, lengths[k] + 32, "* %s (simulated): ", dev);
        EXPECT_CONTAINS(text, starred); /* the note the star points at */
        snprintf(starred, lengths[k] + 32, "simulated devices: %s", dev);
        EXPECT_CONTAINS(text, starred); /* the header (" (simulated)" may wrap) */
        EXPECT_CONTAINS(text, stage);
        free(starred);
        free(text);
        pp_report_free(r);
        pp_model_free(m);
        free(stage);
        free(dev);
    }
}

int main(void) {
    RUN(test_long_device_and_stage_names_printed_whole);
    return pp_test_finish();
}
