/* libFuzzer harness: the Chrome JSON reader on any bytes (pp_chrome_read);
 * the model it gives is walked through every accessor and must survive a
 * round trip through .pptrace. */
#include "fuzz_input.h"
#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_input_file(data, size, path);
    if (fd < 0)
        return 0;
    pp_model *m = NULL;
    pp_error err = {{0}};
    if (pp_chrome_read(path, &m, &err) == PP_OK) {
        fuzz_walk_model(m);
        fuzz_round_trip(m, ".pptrace");
    }
    pp_model_free(m);
    close(fd);
    return 0;
}
