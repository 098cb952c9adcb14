/* libFuzzer harness: lookup tables (pp_lookup_load, what `plan` and
 * `analyze --lookup` read), and the isolated hw_ns figures taken from one.
 * (pipeprof writes bandwidth_table.json but reads no bandwidth table.) */
#include "fuzz_input.h"
#include "pipeprof/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_input_file(data, size, path);
    if (fd < 0)
        return 0;
    pp_lookup *l = NULL;
    pp_error err = {{0}};
    if (pp_lookup_load(path, &l, &err) == PP_OK) {
        pp_isolated_hw *iso = NULL;
        size_t n = 0;
        if (pp_lookup_isolated(l, 1024, 8192, &iso, &n, &err) == PP_OK)
            free(iso);
        iso = NULL;
        if (pp_lookup_isolated(l, 0, 0, &iso, &n, &err) == PP_OK) /* the only size */
            free(iso);
        pp_lookup_simulated(l, "sim:NPU");
        pp_lookup_free(l);
    }
    close(fd);
    return 0;
}
