/* libFuzzer harness: the .pptrace reader on any bytes (pp_pptrace_read; a
 * truncated file's partial model too); the model it gives is walked and
 * must survive a round trip through Chrome JSON; and a conversion of the
 * same bytes (in chunks of one EVENTS block where it can) must give the
 * read's status and message, and the JSON that writing its model gives,
 * and a window of it must keep the events it meets. Every input is read twice:
 * as is, and with each block's CRC recomputed, so that mutations reach the
 * block decoders instead of stopping at the checksum. */
#include <string.h>
#include <zlib.h>

#include "fuzz_input.h"
#include "fuzz_model.h"
#include "io/pptrace_format.h"
#include "io/trace_write.h"
#include "model/window_copy.h"

static int same_bytes(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int ca = 0, cb = 0;
    while (fa && fb && (ca = getc(fa)) == (cb = getc(fb)) && ca != EOF)
        ;
    int same = fa && fb && ca == cb;
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* pp_trace_convert of the input against the read's status, message and
 * model written whole. */
static void check_convert(const char *path, int read_rc, const pp_error *read_err,
                          const pp_model *m) {
    char whole[96], chunks[96];
    snprintf(whole, sizeof whole, "/dev/shm/pp-fuzz-%d-whole.json", (int)getpid());
    snprintf(chunks, sizeof chunks, "/dev/shm/pp-fuzz-%d-chunks.json", (int)getpid());
    pp_error err = {{0}};
    int rc = pp_trace_convert_chunks(path, chunks, 1, NULL, NULL, &err); /* a chunk a block */
    if (rc == PP_ENOMEM || read_rc == PP_ENOMEM)
        return;
    int wrote = (read_rc == PP_OK || read_rc == PP_ETRUNCATED) &&
                pp_trace_write(m, whole, &(pp_error){{0}}) == PP_OK;
    if (rc != read_rc || (read_rc != PP_OK && strcmp(err.msg, read_err->msg) != 0) ||
        (wrote && !same_bytes(whole, chunks))) {
        fprintf(stderr, "convert gave %d \"%s\", the read %d \"%s\"%s\n", rc, err.msg, read_rc,
                read_err->msg, wrote ? " (or other JSON)" : "");
        abort();
    }
    remove(whole);
    /* a window from the middle event on keeps the events it meets */
    size_t n = m ? pp_model_event_count(m) : 0, inside = 0;
    pp_event mid;
    remove(chunks);
    if (n == 0 || rc != PP_OK)
        return;
    pp_model_event(m, n / 2, &mid);
    pp_convert_options opt = {.has_from = 1, .from_ns = mid.ts_ns};
    for (size_t i = 0; i < n; i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        inside += pp_in_window(e.ts_ns, e.dur_ns, mid.ts_ns, INT64_MAX);
    }
    pp_convert_info info;
    rc = pp_trace_convert_chunks(path, chunks, 1, &opt, &info, &err);
    if (rc != PP_OK || info.events != inside) {
        fprintf(stderr, "a window kept %llu events of %zu inside (%d \"%s\")\n",
                (unsigned long long)info.events, inside, rc, err.msg);
        abort();
    }
    remove(chunks);
}

static void read_once(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_input_file(data, size, path);
    if (fd < 0)
        return;
    pp_model *m = NULL;
    pp_error err = {{0}};
    int rc = pp_pptrace_read(path, &m, &err);
    if (m) {
        fuzz_walk_model(m);
        if (rc == PP_OK)
            fuzz_round_trip(m, ".json");
    }
    if (size >= 7 && memcmp(data, "PPTRACE", 7) == 0) /* else convert reads it as JSON */
        check_convert(path, rc, &err, m);
    pp_model_free(m);
    close(fd);
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Recomputes the CRC of every whole block (head, payload, crc32). */
static void fix_crcs(uint8_t *d, size_t size) {
    size_t at = PPTRACE_HEADER_LEN;
    while (at + PPTRACE_BLOCK_HEAD_LEN + PPTRACE_BLOCK_TAIL_LEN <= size) {
        uint32_t len = get32(d + at + 4);
        if (len > size - at - PPTRACE_BLOCK_HEAD_LEN - PPTRACE_BLOCK_TAIL_LEN)
            return;
        size_t covered = PPTRACE_BLOCK_HEAD_LEN + (size_t)len;
        uint32_t crc = (uint32_t)crc32(0L, d + at, (uInt)covered);
        for (int i = 0; i < 4; i++)
            d[at + covered + (size_t)i] = (uint8_t)(crc >> 8 * i);
        at += covered + PPTRACE_BLOCK_TAIL_LEN;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    read_once(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_crcs(copy, size);
    if (memcmp(copy, data, size) != 0)
        read_once(copy, size);
    free(copy);
    return 0;
}
