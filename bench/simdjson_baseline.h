/* simdjson_baseline.h — simdjson (Debian's libsimdjson-dev) on the files
 * bench_json reads and writes: the fastest packaged C/C++ JSON library here,
 * the baseline of the json_*_vs_simdjson figures. C++ in
 * simdjson_baseline.cpp behind this C interface; built only when CMake finds
 * simdjson (PP_HAVE_SIMDJSON), never part of the product. */
#ifndef PP_BENCH_SIMDJSON_BASELINE_H
#define PP_BENCH_SIMDJSON_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "pipeprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Both functions keep their simdjson parser from call to call, as a program
 * reading many files would: from the second call on its buffers are ready.
 *
 * Loads the Chrome JSON file at `path` and walks it with the On-Demand API
 * as a trace reader would: every field of every event, keys and strings
 * decoded, numbers and nested values taken as their text (not converted;
 * see the .cpp), args' fields one by one. `*events` counts the entries of
 * traceEvents; `*checksum` folds in what was read, so no work can be left
 * out. Returns 0, or -1 when simdjson fails. */
int simdjson_walk_file(const char *path, size_t *events, uint64_t *checksum);

/* The alternative to the hand-written reader for a plain file: simdjson
 * On-Demand building the model of the bench's pipeline trace (the kinds it
 * holds: X, i, C and s/t/f events; M events skipped), with the reader's
 * name cache, exact microseconds -> ns from the number's text, and a
 * (pid, tid) -> track map. Less than pp_chrome_read does (no B/E matching,
 * metadata, track names, error positions), so a lower bound on what
 * adopting simdjson would cost. Returns 0 and the model, or -1. */
int simdjson_model_file(const char *path, pp_model **out);

/* Parses `in` into simdjson's DOM (not timed), then writes it to `out` as
 * minified JSON (simdjson::minify of the DOM, then one fwrite): `*cpu_s`
 * is the CPU time of that writing, `*bytes` its size. Returns 0, or -1. */
int simdjson_write_file(const char *in, const char *out, double *cpu_s, size_t *bytes);

/* The SIMD kernel simdjson chose on this CPU ("icelake", "haswell", ...). */
const char *simdjson_kernel(void);

#ifdef __cplusplus
}
#endif

#endif
