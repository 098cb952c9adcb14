/* Mutation fuzzing of the Chrome JSON reader with a fixed seed: whatever
 * bytes it is given, it returns PP_OK or PP_EFORMAT with a message, never
 * crashes, never leaks (run under ASan in CI). PP_FUZZ_ITERATIONS overrides
 * the number of mutants. */
#include <stdlib.h>

#include "pipeprof/io.h"
#include "testutil.h"

static const char seed[] =
    "{\"otherData\":{\"pipeprof_version\":\"0.1.0\",\"level\":1,\"threads\":[{\"tid\":1,\"name\":\"m\","
    "\"recorded\":3,\"dropped\":1}]},\"traceEvents\":[\n"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"req 0\",\"pipeprof_track\":"
    "{\"kind\":\"device\",\"process\":\"NPU\",\"device\":\"NPU\",\"stream\":0,\"simulated\":true,\"pid\":9,"
    "\"os_tid\":0,\"sort_index\":1}}},\n"
    "{\"ph\":\"X\",\"name\":\"infer\\u00e9\",\"cat\":\"exec\",\"pid\":1,\"tid\":2,\"ts\":1.500,\"dur\":2.25,"
    "\"args\":{\"stage\":\"S\",\"batch_id\":3,\"hw_ns\":10,\"transfer_ns\":2,\"role\":\"exec\",\"k\":-1.5e3}},\n"
    "{\"ph\":\"B\",\"name\":\"b\",\"pid\":\"p\",\"tid\":\"t\",\"ts\":1},{\"ph\":\"E\",\"pid\":\"p\",\"tid\":\"t\",\"ts\":2},\n"
    "{\"ph\":\"C\",\"name\":\"c\",\"pid\":1,\"ts\":3,\"args\":{\"a\":1,\"b\":2}},\n"
    "{\"ph\":\"s\",\"name\":\"f\",\"id\":\"0x7\",\"pid\":1,\"tid\":2,\"ts\":4},\n"
    "{\"ph\":\"b\",\"name\":\"r\",\"cat\":\"range\",\"id\":4,\"pid\":1,\"tid\":3,\"ts\":5},"
    "{\"ph\":\"e\",\"name\":\"r\",\"cat\":\"range\",\"id\":4,\"pid\":1,\"tid\":3,\"ts\":6},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1e1,\"dur\":0.001}\n]}";

static void test_mutants_never_crash(void) {
    const char *env = getenv("PP_FUZZ_ITERATIONS");
    long iterations = env ? atol(env) : 3000;
    const char *path = pp_test_path("fuzz.json");
    size_t cap = sizeof seed * 2;
    char *buf = malloc(cap);
    long ok = 0, bad = 0;
    for (long it = 0; it < iterations; it++) {
        memcpy(buf, seed, sizeof seed - 1);
        size_t len = pp_test_mutate_text(buf, sizeof seed - 1, cap);
        pp_test_write_file(path, buf, len);
        pp_model *m = NULL;
        pp_error err = {{0}};
        int rc = pp_chrome_read(path, &m, &err);
        if (rc == PP_OK) {
            ok++;
            EXPECT(m != NULL);
        } else {
            bad++;
            EXPECT(m == NULL);
            EXPECT_EQ_I64(rc, PP_EFORMAT);
            EXPECT(err.msg[0] != 0);
        }
        pp_model_free(m);
        if (pp_test_failures) {
            fprintf(stderr, "mutant %ld kept as %s\n", it, path);
            break;
        }
    }
    fprintf(stderr, "%ld mutants: %ld read, %ld refused\n", iterations, ok, bad);
    EXPECT(ok > 0 && bad > 0);
    free(buf);
}

int main(void) {
    RUN(test_mutants_never_crash);
    return pp_test_finish();
}
