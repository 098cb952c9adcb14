/* pp_report_json renders the same bytes as pp_report_write_json, into a
 * buffer the caller frees (the Python package reads the report this way). */
#include <stdio.h>

#include "builder.h"

static void test_same_bytes_as_the_file_renderer(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0), npu = b_device(m, "NPU", 0, 1);
    b_exec(m, cpu, "A", 0, 0, 1000, 800, 100);
    b_exec(m, npu, "B", 0, 1000, 3000, 1500, 0);
    b_exec(m, cpu, "A", 1, 1200, 2000, 700, 50);
    pp_report *r = b_report(m, NULL);

    char *file_text = NULL;
    size_t file_len = 0;
    FILE *f = open_memstream(&file_text, &file_len);
    EXPECT(f != NULL);
    EXPECT_EQ_I64(pp_report_write_json(r, f), PP_OK);
    fclose(f);

    char *json = NULL;
    size_t len = 0;
    EXPECT_EQ_I64(pp_report_json(r, &json, &len), PP_OK);
    EXPECT(json != NULL);
    EXPECT_EQ_U64(len, file_len);
    EXPECT_EQ_U64(strlen(json), len);
    EXPECT(memcmp(json, file_text, len) == 0);
    EXPECT_CONTAINS(json, "\"schema\": \"pipeprof-report\"");
    EXPECT_CONTAINS(json, "\"name\": \"NPU\", \"simulated\": true");

    char *again = NULL;
    EXPECT_EQ_I64(pp_report_json(r, &again, NULL), PP_OK);
    EXPECT_EQ_U64(strlen(again), len);
    pp_report_json_free(again);
    pp_report_json_free(json);
    pp_report_json_free(NULL);
    free(file_text);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_same_bytes_as_the_file_renderer);
    return pp_test_finish();
}
