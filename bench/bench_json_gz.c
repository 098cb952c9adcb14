/* bench_json_gz — reading gzip-compressed Chrome JSON (.json.gz): zlib,
 * which the reader streams through, against libdeflate, the fastest
 * packaged inflater here, on the same file. Prints BENCH lines (rates in MB
 * of JSON per second of this process's CPU time; above 1 is better):
 *
 *   gzip_inflate_MBps  zlib's gzread in the reader's 1 MiB chunks
 *                      (baseline: libdeflate_gzip_decompress of the whole
 *                      file into one buffer, file read and buffer included)
 *   json_gz_read_MBps  pp_chrome_read of the .json.gz, building the model
 *                      (baseline: pp_chrome_read of the same JSON uncompressed)
 *   json_gz_read_wall_MBps  the same reads in wall time: the reader inflates
 *                      on a thread of its own (src/io/gz_pipe.h), which
 *                      the CPU-time line counts in full and wall time shows
 *                      overlapping the parse where a core is free
 *
 * libdeflate only inflates whole buffers (libdeflate.h: the output buffer
 * must hold all of it), so the reader would need the whole inflated trace
 * in memory, where zlib lets it stream in a bounded window: the first line
 * says what that would buy. Without libdeflate at build time that line is
 * left out with a note. The file is bench/pipeline_trace.h's pipeline
 * (about 1.1M events) compressed at zlib's default level, as gzip and the
 * PyTorch profiler write it. Each figure is the best of 3 rounds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifdef PP_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "pipeline_trace.h"
#include "pipeprof/io.h"

#define ROUNDS 3
#define CHUNK (1u << 20) /* the reader's gzread size (src/io/json_scan.c) */

/* CPU time of this process, user + system, in seconds. */
static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "bench_json_gz: %s\n", what);
    exit(1);
}

/* Compresses `in` into `out` at zlib's default level. */
static void gzip_file(const char *in, const char *out) {
    FILE *f = fopen(in, "rb");
    gzFile gz = gzopen(out, "wb6");
    char *buf = malloc(CHUNK);
    size_t n;
    if (!f || !gz || !buf)
        die("cannot compress the trace");
    while ((n = fread(buf, 1, CHUNK, f)) > 0)
        if (gzwrite(gz, buf, (unsigned)n) != (int)n)
            die("gzwrite failed");
    fclose(f);
    free(buf);
    if (gzclose(gz) != Z_OK)
        die("gzclose failed");
}

/* zlib as the reader runs it; returns the bytes inflated. */
static size_t inflate_zlib(const char *path) {
    gzFile gz = gzopen(path, "rb");
    char *buf = malloc(CHUNK);
    size_t total = 0;
    int n;
    if (!gz || !buf)
        die("gzopen failed");
    gzbuffer(gz, CHUNK);
    while ((n = gzread(gz, buf, CHUNK)) > 0)
        total += (size_t)n;
    if (n < 0)
        die("gzread failed");
    gzclose(gz);
    free(buf);
    return total;
}

#ifdef PP_HAVE_LIBDEFLATE
/* libdeflate as a whole-buffer reader would run it: the file into memory,
 * an output buffer of the size the gzip trailer gives, one call. */
static size_t inflate_libdeflate(const char *path) {
    struct stat st;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 18)
        die("cannot open the .gz");
    unsigned char *in = malloc((size_t)st.st_size);
    if (!in || read(fd, in, (size_t)st.st_size) != st.st_size)
        die("cannot read the .gz");
    close(fd);
    const unsigned char *t = in + st.st_size - 4; /* ISIZE: the size mod 2^32 */
    size_t size = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
    char *out = malloc(size);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t got = 0;
    if (!out || !d ||
        libdeflate_gzip_decompress(d, in, (size_t)st.st_size, out, size, &got) != LIBDEFLATE_SUCCESS)
        die("libdeflate_gzip_decompress failed");
    libdeflate_free_decompressor(d);
    free(in);
    free(out);
    return got;
}
#endif

static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Best-of-ROUNDS CPU seconds of pp_chrome_read on `path`, and in *wall its
 * best wall-clock seconds. */
static double read_seconds(const char *path, size_t events, double *wall) {
    double best = 1e9;
    *wall = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        pp_model *m = NULL;
        pp_error err = {{0}};
        double t0 = cpu_seconds(), w0 = wall_seconds();
        if (pp_chrome_read(path, &m, &err) != PP_OK) {
            fprintf(stderr, "bench_json_gz: %s\n", err.msg);
            exit(1);
        }
        double s = cpu_seconds() - t0, w = wall_seconds() - w0;
        best = s < best ? s : best;
        *wall = w < *wall ? w : *wall;
        if (pp_model_event_count(m) != events)
            die("read back a different number of events");
        pp_model_free(m);
    }
    return best;
}

int main(void) {
    char path[4096], gz[4200];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/pp_bench_json_gz_%ld.json", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    snprintf(gz, sizeof gz, "%s.gz", path);
    pp_model *m = build_pipeline_model();
    pp_error err = {{0}};
    if (pp_chrome_write(m, path, &err) != PP_OK)
        die(err.msg);
    size_t events = pp_model_event_count(m);
    pp_model_free(m);
    gzip_file(path, gz);
    struct stat st, gst;
    if (stat(path, &st) != 0 || stat(gz, &gst) != 0)
        die("cannot stat the files");
    double mb = (double)st.st_size / 1e6;
    fprintf(stderr, "bench_json_gz: %zu events, %.1f MB of JSON, %.1f MB gzip\n", events, mb,
            (double)gst.st_size / 1e6);

    double zlib_s = 1e9, deflate_s = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = cpu_seconds();
        if (inflate_zlib(gz) != (size_t)st.st_size)
            die("zlib inflated a different size");
        double s = cpu_seconds() - t0;
        zlib_s = s < zlib_s ? s : zlib_s;
#ifdef PP_HAVE_LIBDEFLATE
        t0 = cpu_seconds();
        if (inflate_libdeflate(gz) != (size_t)st.st_size)
            die("libdeflate inflated a different size");
        s = cpu_seconds() - t0;
        deflate_s = s < deflate_s ? s : deflate_s;
#endif
    }
    double plain_wall, gz_wall;
    double plain_s = read_seconds(path, events, &plain_wall), gz_s = read_seconds(gz, events, &gz_wall);
    remove(path);
    remove(gz);
#ifdef PP_HAVE_LIBDEFLATE
    printf("BENCH gzip_inflate_MBps value=%.1f unit=MB/cpu-s baseline=libdeflate_whole_buffer:%.1f ratio=%.2f\n",
           mb / zlib_s, mb / deflate_s, deflate_s / zlib_s);
#else
    (void)deflate_s;
    fprintf(stderr, "bench_json_gz: libdeflate (libdeflate-dev) was not found at build time; "
                    "the gzip_inflate line is left out\n");
#endif
    printf("BENCH json_gz_read_MBps value=%.1f unit=MB/cpu-s baseline=json_plain_read:%.1f ratio=%.2f\n",
           mb / gz_s, mb / plain_s, plain_s / gz_s);
    printf("BENCH json_gz_read_wall_MBps value=%.1f unit=MB/s baseline=json_plain_read_wall:%.1f "
           "ratio=%.2f\n", mb / gz_wall, mb / plain_wall, plain_wall / gz_wall);
    return 0;
}
