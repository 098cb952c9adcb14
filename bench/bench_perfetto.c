/* bench_perfetto — the .pftrace writer beside the Chrome JSON writer on the
 * same model, in one run. Prints BENCH lines:
 *
 *   pftrace_write_Mevents_per_s   pp_perfetto_write   (baseline: pp_chrome_write;
 *                                 a rate: above 1 is better)
 *   pftrace_bytes_per_event       size of the .pftrace (baseline: the .json;
 *                                 below 1 is better)
 *   pftrace_encode_MBps           bytes of .pftrace produced per second
 *                                 (baseline: bytes of JSON per second)
 *   pftrace_write_sorted_Mevents_per_s
 *                                 the same after pp_model_sort_by_time, the
 *                                 order a recording's model comes in
 *                                 (baseline: pp_chrome_write of it)
 *
 * The model is the pipeline of about 1.1M events of bench/pipeline_trace.h,
 * appended batch by batch, so not in time order: the .pftrace writer sorts
 * it (io/perfetto_order.c); a recording's model needs far less.
 * Each figure is the best of 3 rounds (the least disturbed on a shared
 * machine). Both writers go through the same temporary-file-and-rename
 * output (io/outfile.h), to $TMPDIR or /tmp. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline_trace.h"
#include "pipeprof/io.h"

#define ROUNDS 3

typedef int (*writer_fn)(const pp_model *, const char *, pp_error *);

/* Best time of ROUNDS writes of `m` to `path`, in seconds; the file's size. */
static double best_write(writer_fn write, const char *what, const pp_model *m, const char *path,
                         double *bytes) {
    double best = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        pp_error err = {{0}};
        int64_t t0 = pp_now();
        if (write(m, path, &err) != PP_OK) {
            fprintf(stderr, "bench_perfetto: %s failed: %s\n", what, err.msg);
            exit(1);
        }
        double s = (double)(pp_now() - t0) / 1e9;
        best = s < best ? s : best;
    }
    struct stat st;
    *bytes = stat(path, &st) == 0 ? (double)st.st_size : 0;
    remove(path);
    return best;
}

int main(void) {
    char json[4096], pftrace[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(json, sizeof json, "%s/pp_bench_perfetto_%ld.json", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
    snprintf(pftrace, sizeof pftrace, "%s/pp_bench_perfetto_%ld.pftrace",
             tmp && *tmp ? tmp : "/tmp", (long)getpid());
    pp_model *m = build_pipeline_model();
    double n = (double)pp_model_event_count(m), json_bytes, pf_bytes;
    double json_s = best_write(pp_chrome_write, "pp_chrome_write", m, json, &json_bytes);
    double pf_s = best_write(pp_perfetto_write, "pp_perfetto_write", m, pftrace, &pf_bytes);
    if (pp_model_sort_by_time(m) != PP_OK) {
        fprintf(stderr, "bench_perfetto: cannot sort the model\n");
        return 1;
    }
    double sorted_json_s = best_write(pp_chrome_write, "pp_chrome_write", m, json, &json_bytes);
    double sorted_pf_s = best_write(pp_perfetto_write, "pp_perfetto_write", m, pftrace, &pf_bytes);
    pp_model_free(m);
    fprintf(stderr, "bench_perfetto: %.0f events; .json %.1f MB in %.3f s, .pftrace %.1f MB in %.3f s\n",
            n, json_bytes / 1e6, json_s, pf_bytes / 1e6, pf_s);
    double pf_rate = n / pf_s / 1e6, json_rate = n / json_s / 1e6;
    printf("BENCH pftrace_write_Mevents_per_s value=%.2f unit=Mevents/s baseline=chrome_json:%.2f "
           "ratio=%.2f\n", pf_rate, json_rate, pf_rate / json_rate);
    printf("BENCH pftrace_bytes_per_event value=%.1f unit=B baseline=chrome_json:%.1f ratio=%.3f\n",
           pf_bytes / n, json_bytes / n, pf_bytes / json_bytes);
    printf("BENCH pftrace_encode_MBps value=%.1f unit=MB/s baseline=chrome_json:%.1f ratio=%.2f\n",
           pf_bytes / 1e6 / pf_s, json_bytes / 1e6 / json_s,
           (pf_bytes / pf_s) / (json_bytes / json_s));
    pf_rate = n / sorted_pf_s / 1e6, json_rate = n / sorted_json_s / 1e6;
    printf("BENCH pftrace_write_sorted_Mevents_per_s value=%.2f unit=Mevents/s "
           "baseline=chrome_json:%.2f ratio=%.2f\n", pf_rate, json_rate, pf_rate / json_rate);
    return 0;
}
