/* libFuzzer harness: pipeline files (pp_pipeline_load: JSON syntax, keys,
 * types, ranges, stages, devices, splits). Only loaded, never run. */
#include "fuzz_input.h"
#include "pipeprof/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_input_file(data, size, path);
    if (fd < 0)
        return 0;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    if (pp_pipeline_load(path, &p, &err) == PP_OK)
        pp_pipeline_free(p);
    close(fd);
    return 0;
}
