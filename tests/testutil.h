/* testutil.h — the small harness every C test uses.
 *
 * A test file defines static test functions and a main() that runs them with
 * RUN(test_fn). EXPECT_* macros record a failure with file:line and go on, so
 * one run shows every broken expectation; main returns pp_test_finish(), which
 * is non-zero when anything failed. A test that cannot run here calls
 * pp_test_skip(reason) (exit 77, which CTest reports as skipped). */
#ifndef PP_TESTUTIL_H
#define PP_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern int pp_test_failures;
extern int pp_test_checks;

void pp_test_fail(const char *file, int line, const char *fmt, ...);
int pp_test_finish(void);
void pp_test_skip(const char *reason);

/* A fresh path under the test tmp dir: "<tmp>/<name>"; the file is removed. */
const char *pp_test_path(const char *name);
/* Reads a whole file into a malloc'd NUL-terminated buffer (NULL on error). */
char *pp_test_read_file(const char *path, size_t *len);
/* Writes `len` bytes to path; returns 0 on success. */
int pp_test_write_file(const char *path, const void *data, size_t len);
/* Runs a shell command, captures stdout+stderr into *out (malloc'd); returns
 * the exit status (or -1). */
int pp_test_run(const char *cmd, char **out);
/* Mutation fuzzing of text formats (JSON): 1 to 4 random edits of buf[0..len)
 * (a byte replaced by a JSON token character or a high byte, a bit flipped,
 * the rest cut off, a run deleted, a run duplicated while it fits in cap);
 * returns the new length. The random sequence has a fixed seed, so every run
 * tries the same mutants. */
size_t pp_test_mutate_text(char *buf, size_t len, size_t cap);

/* The backends of this build, as "unknown backend" messages list them. */
#ifdef PP_HAVE_OPENVINO
#define PP_TEST_BACKENDS_OV ", openvino"
#else
#define PP_TEST_BACKENDS_OV ""
#endif
#ifdef PP_HAVE_OPENCL
#define PP_TEST_BACKENDS_CL ", opencl"
#else
#define PP_TEST_BACKENDS_CL ""
#endif
#define PP_TEST_BACKENDS "cpu, sim" PP_TEST_BACKENDS_OV PP_TEST_BACKENDS_CL

#define RUN(fn) do { int before_ = pp_test_failures; fn(); \
    fprintf(stderr, "%s %s\n", pp_test_failures == before_ ? "ok  " : "FAIL", #fn); } while (0)

#define EXPECT(cond) do { pp_test_checks++; if (!(cond)) \
    pp_test_fail(__FILE__, __LINE__, "expected %s", #cond); } while (0)
#define EXPECT_EQ_I64(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); pp_test_checks++; \
    if (a_ != b_) pp_test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, b_); } while (0)
#define EXPECT_EQ_U64(a, b) do { unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
    pp_test_checks++; if (a_ != b_) \
    pp_test_fail(__FILE__, __LINE__, "%s == %llu, expected %s == %llu", #a, a_, #b, b_); } while (0)
#define EXPECT_NEAR(a, b, tol) do { double a_ = (double)(a), b_ = (double)(b); pp_test_checks++; \
    if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) \
    pp_test_fail(__FILE__, __LINE__, "%s == %.9g, expected %.9g +- %g", #a, a_, b_, (double)(tol)); } while (0)
#define EXPECT_STR(a, b) do { const char *a_ = (a), *b_ = (b); pp_test_checks++; \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) \
    pp_test_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } while (0)
#define EXPECT_CONTAINS(hay, needle) do { const char *h_ = (hay), *n_ = (needle); pp_test_checks++; \
    if (!h_ || !strstr(h_, n_)) \
    pp_test_fail(__FILE__, __LINE__, "expected \"%s\" in: %s", n_, h_ ? h_ : "(null)"); } while (0)

/* Compares two models field by field (strings by text, not id): every
 * event, annotation, track, thread and meta field. Returns 1 when equal;
 * otherwise 0 with the first difference described in `why`. */
struct pp_model;
int pp_test_models_equal(const struct pp_model *a, const struct pp_model *b, char *why, size_t whylen);

#endif
