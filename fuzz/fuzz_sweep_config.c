/* libFuzzer harness: sweep configs (the loader behind pp_sweep_config_load,
 * without asking the backends whether the devices exist, as merge does),
 * and the keys and counts of the combinations it gives. */
#include "fuzz_input.h"
#include "sweep/sweep_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_input_file(data, size, path);
    if (fd < 0)
        return 0;
    pp_sweep_config *c = NULL;
    pp_error err = {{0}};
    if (sw_config_load(path, 0, &c, &err) == PP_OK) {
        char key[256];
        size_t n = pp_sweep_config_combinations(c);
        for (size_t i = 0; i < n && i < 4096; i++) {
            pp_workload w;
            pp_model_input inputs[PP_MODEL_INPUTS_MAX];
            pp_sweep_config_key(c, i, key, sizeof key);
            sw_workload(c, i, &w, inputs);
        }
        pp_sweep_config_free(c);
    }
    close(fd);
    return 0;
}
