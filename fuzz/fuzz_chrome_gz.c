/* libFuzzer harness: the Chrome JSON reader's gzip path. An input that
 * starts with the gzip magic is read as is (corrupt streams, truncation);
 * anything else is gzip-compressed first, so the JSON inside a .json.gz is
 * fuzzed as well as the stream around it. */
#include <zlib.h>

#include "fuzz_input.h"
#include "fuzz_model.h"

/* gzip of data[0..size) into a malloc'd buffer; NULL on failure. */
static uint8_t *gzip(const uint8_t *data, size_t size, size_t *out_len) {
    z_stream z = {0};
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, (uLong)size) + 32;
    uint8_t *out = malloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = out ? deflate(&z, Z_FINISH) : Z_MEM_ERROR;
    *out_len = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *packed = NULL;
    size_t len = size;
    if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {
        if (!(packed = gzip(data, size, &len)))
            return 0;
        data = packed;
    }
    char path[64];
    int fd = fuzz_input_file(data, len, path);
    free(packed);
    if (fd < 0)
        return 0;
    pp_model *m = NULL;
    pp_error err = {{0}};
    if (pp_chrome_read(path, &m, &err) == PP_OK)
        fuzz_walk_model(m);
    pp_model_free(m);
    close(fd);
    return 0;
}
