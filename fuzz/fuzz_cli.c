/* libFuzzer harness: the CLI's option parsing, through pipeprof's own
 * main(): the input is a command and its arguments, NUL-separated. Only
 * subcommands that read (analyze, convert, export, plan, sweep) are run,
 * from a folder of their own in /dev/shm holding t.json and k.json (traces)
 * and sweep.json, with stdin on /dev/null: record, run and
 * demo would start programs and pipelines, which is not option parsing.
 * The runner passes -close_fd_mask=3, so the messages go nowhere. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_input.h"

int pp_cli_main(int argc, char **argv); /* src/cli/main.c, renamed for the harness */

#define MAX_ARGS 16

static const char *const commands[] = {"analyze", "convert", "export", "plan", "sweep", "--version",
                                       "--help"};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Copies a trace of tests/ into the working folder as `name`, so that the
 * arguments name files there (and outputs land there, never in tests/). */
static void copy_trace(const char *from, const char *name) {
    FILE *in = fopen(from, "rb"), *out = fopen(name, "wb");
    char buf[4096];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
}

static void setup(void) {
    char dir[128];
    snprintf(dir, sizeof dir, "/dev/shm/pp-fuzz-cli-%d", (int)getpid());
    mkdir(dir, 0777);
    if (chdir(dir) != 0)
        abort();
    copy_trace(FUZZ_SOURCE_DIR "/../tests/analyze/data/pipeline_small.json", "t.json");
    copy_trace(FUZZ_SOURCE_DIR "/../tests/io/data/kineto_small.json", "k.json");
    copy_trace(FUZZ_SOURCE_DIR "/sweep_raw_config.json", "sweep.json");
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) {
        dup2(null, 0);
        close(null);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready)
        ready = (setup(), 1);
    if (size < 1 || size > 4096)
        return 0;
    char *text = malloc(size); /* data[1..] with a NUL after the last argument */
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    char *argv[MAX_ARGS + 3];
    int argc = 0;
    argv[argc++] = "pipeprof";
    argv[argc++] = (char *)commands[data[0] % NCOMMANDS];
    for (char *p = text; p < text + size - 1 && argc < MAX_ARGS + 2; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    pp_cli_main(argc, argv);
    free(text);
    return 0;
}
