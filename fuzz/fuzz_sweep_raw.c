/* libFuzzer harness: a sweep's raw.jsonl (the records `sweep --resume` and
 * `sweep merge` read) for the small config fuzz/sweep_raw_config.json. When
 * every combination has a record, the tables are written from them and the
 * lookup table must load again: merge once wrote tables from records with
 * missing fields or wrong types that `plan` then refused. */
#include <sys/stat.h>

#include "fuzz_input.h"
#include "pipeprof/sweep.h"
#include "sweep/sweep_impl.h"

static pp_sweep_config *config;
static char dir[128];

static void setup(void) {
    pp_error err = {{0}};
    if (sw_config_load(FUZZ_SOURCE_DIR "/sweep_raw_config.json", 0, &config, &err) != PP_OK) {
        fprintf(stderr, "fuzz_sweep_raw: %s\n", err.msg);
        abort();
    }
    snprintf(dir, sizeof dir, "/dev/shm/pp-fuzz-raw-%d", (int)getpid());
    mkdir(dir, 0777);
}

static void put(const char *name, const uint8_t *data, size_t size) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!config)
        setup();
    put(SW_RAW, data, size);
    size_t n = pp_sweep_config_combinations(config), count = 0;
    json_t **recs = calloc(n, sizeof *recs);
    off_t end = 0;
    pp_error err = {{0}};
    if (recs && sw_raw_read(dir, config, recs, &count, &end, &err) == PP_OK && count == n &&
        sw_tables_write(dir, config, recs, &err) == PP_OK) {
        char path[256];
        pp_lookup *l = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, SW_LOOKUP);
        if (pp_lookup_load(path, &l, &err) != PP_OK) {
            fprintf(stderr, "tables written from checked records do not load: %s\n", err.msg);
            abort();
        }
        pp_lookup_free(l);
    }
    for (size_t i = 0; recs && i < n; i++)
        json_decref(recs[i]);
    free(recs);
    return 0;
}
