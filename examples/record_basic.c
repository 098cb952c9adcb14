/* record_basic — the smallest complete use of the recording API.
 *
 * Runs a toy two-stage loop (a "prepare" step on the host thread, then a
 * "compute" step recorded as an exec on a device row) and records it:
 *
 *   ./record_basic [OUTPUT]          writes OUTPUT (default record_basic.json)
 *   PIPEPROF_OUTPUT=t.pptrace ./record_basic
 *                                    records into the env-activated session
 *                                    instead (what `pipeprof record` does)
 */
#include <stdio.h>
#include <stdlib.h>

#include <pipeprof/trace.h>

/* Real work so the spans measure something: a few matrix-vector products. */
static double compute(int n, unsigned seed) {
    double acc = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            acc += (double)((i * 31u + j * 17u + seed) % 97u) * 1e-3;
    return acc;
}

int main(int argc, char **argv) {
    pp_session *own = NULL, *s = pp_default_session();
    pp_error err = {{0}};
    if (!s) {
        pp_session_config cfg;
        pp_session_config_init(&cfg);
        cfg.output = argc > 1 ? argv[1] : "record_basic.json";
        if (pp_session_open(&cfg, &own) != PP_OK || pp_session_start(own) != PP_OK) {
            fprintf(stderr, "record_basic: cannot start a session\n");
            return 1;
        }
        s = own;
    }

    pp_track host, device;
    pp_track_thread(s, "main", &host);
    pp_track_device(s, "CPU", 0, "req 0", 0, &device);
    pp_str prepare = pp_intern("prepare"), exec = pp_intern("compute");
    pp_str stage_prep = pp_intern("Prepare"), stage_compute = pp_intern("Compute");
    pp_str batch_flow = pp_intern("batch"), checksum = pp_intern("checksum");

    uint64_t warm_up;
    double total = 0;
    pp_region_begin(s, pp_intern("warm up"), &warm_up);
    for (int batch = 0; batch < 20; batch++) {
        if (batch == 2)
            pp_region_end(s, warm_up);
        pp_span_rec rec;
        pp_span_rec_init(&rec);
        rec.track = host;
        rec.name = prepare;
        rec.stage = stage_prep;
        rec.role = PP_ROLE_STAGE;
        rec.batch = batch;
        rec.ts_ns = pp_now();
        total += compute(200, (unsigned)batch);
        rec.dur_ns = pp_now() - rec.ts_ns;
        pp_span(s, &rec);
        pp_flow(s, host, batch_flow, rec.ts_ns, (uint64_t)batch + 1, PP_FLOW_BEGIN);

        rec.track = device;
        rec.name = exec;
        rec.stage = stage_compute;
        rec.role = PP_ROLE_EXEC;
        rec.ts_ns = pp_now();
        total += compute(400, (unsigned)batch);
        rec.dur_ns = pp_now() - rec.ts_ns;
        rec.hw_ns = (uint64_t)rec.dur_ns;
        pp_span(s, &rec);
        pp_annotate_double(s, checksum, total);
        pp_flow(s, device, batch_flow, rec.ts_ns, (uint64_t)batch + 1, PP_FLOW_END);
        pp_counter(s, host, pp_intern("batches done"), pp_now(), batch + 1);
    }
    pp_mark(s, host, pp_intern("done"), pp_now());

    if (own) {
        if (pp_session_stop(own, &err) != PP_OK) {
            fprintf(stderr, "record_basic: %s\n", err.msg);
            pp_session_close(own);
            return 1;
        }
        pp_session_close(own);
        printf("record_basic: wrote %s (checksum %.3f)\n", argc > 1 ? argv[1] : "record_basic.json", total);
    }
    return 0;
}
