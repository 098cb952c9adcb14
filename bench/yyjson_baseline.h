/* yyjson_baseline.h — yyjson's DOM parse of the file bench_json reads: the
 * fastest C JSON DOM parser we know of, the baseline of the
 * json_read_vs_yyjson figure (docs/format-chrome-json.md). yyjson is not in
 * Debian 12: it is built from a copy of its source kept outside the
 * repository (cmake -DPIPEPROF_YYJSON_DIR=<dir with yyjson.c and yyjson.h>;
 * bench/CMakeLists.txt), never part of the product. Without it the line is
 * left out with a note. */
#ifndef PP_BENCH_YYJSON_BASELINE_H
#define PP_BENCH_YYJSON_BASELINE_H

#include <stddef.h>

/* The least CPU time (user + system, s) of `rounds` yyjson DOM parses of the
 * file at `path`, after one untimed parse that warms up. As strong as yyjson
 * gets: the text is read into memory once, untimed, and every parse reuses
 * one pool allocator whose pages the warm-up parse has faulted in, as a
 * program parsing many files would keep its memory; so no round pays for
 * reading the file or faulting in its DOM, which pp_chrome_read does pay
 * for (mapping the file, growing the model). `*values` counts the DOM's
 * values. Returns 0, or -1 when the file cannot be read or parsed. */
int yyjson_dom_parse_cpu(const char *path, int rounds, double *cpu_s, size_t *values);

/* The same parse as a program reading one file would run it: the least CPU
 * time of `rounds` yyjson_read_file calls (reading the file into fresh
 * memory, parsing into a fresh DOM, page faults included), as
 * pp_chrome_read is timed. Returns 0, or -1. */
int yyjson_file_parse_cpu(const char *path, int rounds, double *cpu_s);

/* yyjson's version, "0.12.0". */
const char *yyjson_baseline_version(void);

#endif
