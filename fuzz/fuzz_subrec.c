/* libFuzzer harness: the live-subscription record decoder
 * (pipeprof/subscribe.h, pp_subrec_*) on a raw stream, as a reader of a pipe
 * gets it from a program it does not trust (`pipeprof top` reading
 * PIPEPROF_LIVE_FD). The stream's whole records are copied to a buffer of
 * exactly that size, so a read past a record's end is caught; every record
 * pp_subrec_valid passes is read through every accessor, its texts must end
 * inside their fields, and encoding the decoded fields again
 * (pp_subrec_encode) must decode to the same values. */
#include <stdlib.h>
#include <string.h>

#include "capture/subrec.h"

/* Every field of record i, re-encoded, decodes to the same values. */
static void check_round_trip(const unsigned char *buf, size_t i) {
    pp_subrec_fields f = {
        .kind = pp_subrec_kind_of(buf, i), .role = pp_subrec_role(buf, i),
        .flags = pp_subrec_flags(buf, i), .start_ns = pp_subrec_start_ns(buf, i),
        .end_ns = pp_subrec_end_ns(buf, i), .batch = pp_subrec_batch(buf, i),
        .hw_ns = pp_subrec_hw_ns(buf, i), .xfer_ns = pp_subrec_xfer_ns(buf, i),
        .seq = pp_subrec_seq(buf, i), .stream = pp_subrec_stream(buf, i),
        .name = pp_subrec_name(buf, i), .type = pp_subrec_type(buf, i),
        .device = pp_subrec_device(buf, i), .stage = pp_subrec_stage(buf, i),
        .track = pp_subrec_track(buf, i)};
    unsigned char again[PP_SUBREC_SIZE];
    pp_subrec_encode(again, &f);
    if (!pp_subrec_valid(again, 0) || pp_subrec_kind_of(again, 0) != f.kind ||
        pp_subrec_role(again, 0) != f.role || pp_subrec_flags(again, 0) != f.flags ||
        pp_subrec_start_ns(again, 0) != f.start_ns || pp_subrec_end_ns(again, 0) != f.end_ns ||
        pp_subrec_duration_ns(again, 0) != pp_subrec_duration_ns(buf, i) ||
        pp_subrec_batch(again, 0) != f.batch || pp_subrec_hw_ns(again, 0) != f.hw_ns ||
        pp_subrec_xfer_ns(again, 0) != f.xfer_ns || pp_subrec_seq(again, 0) != f.seq ||
        pp_subrec_stream(again, 0) != f.stream || pp_subrec_lost(again, 0) != pp_subrec_lost(buf, i) ||
        pp_subrec_session_dropped(again, 0) != pp_subrec_session_dropped(buf, i) ||
        strcmp(pp_subrec_name(again, 0), f.name) || strcmp(pp_subrec_type(again, 0), f.type) ||
        strcmp(pp_subrec_device(again, 0), f.device) || strcmp(pp_subrec_stage(again, 0), f.stage) ||
        strcmp(pp_subrec_track(again, 0), f.track))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t n = pp_subrec_count(size);
    if (n == 0)
        return 0;
    unsigned char *buf = malloc(n * PP_SUBREC_SIZE);
    if (!buf)
        return 0;
    memcpy(buf, data, n * PP_SUBREC_SIZE);
    for (size_t i = 0; i < n; i++) {
        if (!pp_subrec_valid(buf, i))
            continue;
        const unsigned char *rec = buf + i * PP_SUBREC_SIZE;
        /* the texts and their field sizes (docs/recording.md, "Record layout") */
        const char *texts[] = {pp_subrec_name(buf, i), pp_subrec_type(buf, i), pp_subrec_device(buf, i),
                               pp_subrec_stage(buf, i), pp_subrec_track(buf, i)};
        const size_t caps[] = {64, 32, 32, 32, 32};
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            if ((const unsigned char *)texts[k] < rec || (const unsigned char *)texts[k] >= rec + PP_SUBREC_SIZE)
                abort();
            if (strnlen(texts[k], caps[k]) == caps[k])
                abort(); /* a valid record's text ends inside its field */
        }
        check_round_trip(buf, i);
    }
    free(buf);
    return 0;
}
