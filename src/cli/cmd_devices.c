/* pipeprof devices: the devices each backend can open, with the spec that
 * names them in a pipeline file or on --device options. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeprof/device.h"

static void devices_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof devices [--backend NAME]\n\n"
            "Lists the devices every backend of this build can open, one per line:\n"
            "the backend, the spec a pipeline file's \"device\" takes, and what the\n"
            "device is. cpu is this process's worker threads; sim's devices are\n"
            "simulated (a latency model, docs/backends.md) and labeled so; openvino's\n"
            "are the devices OpenVINO finds on this machine (CPU, GPU.0, NPU, ...;\n"
            "AUTO, HETERO:A,B and MULTI:A,B over them open too); opencl's are\n"
            "every OpenCL device (PoCL's CPU device, a GPU's driver), numbered over\n"
            "all platforms: opencl:0, opencl:1, ...\n"
            "Exit status: 0 ok, 1 a backend could not list its devices, 2 bad input.\n\n"
            "options:\n"
            "  --backend NAME  only this backend's devices (cpu, sim, openvino, opencl)\n"
            "  -h, --help      this help\n\n"
            "example:\n"
            "  pipeprof devices --backend openvino\n");
}

/* The header comes with the first device, so that an unknown backend
 * prints nothing but its error. */
static void print_device(void *ctx, const pp_device_info *info) {
    int *printed = ctx;
    if (!(*printed)++)
        printf("%-10s %-24s %s\n", "backend", "spec", "device");
    printf("%-10s %-24s %s%s\n", info->backend, info->spec, info->description,
           info->flags & PP_TRACK_SIMULATED && !strstr(info->description, "simulated")
               ? " (simulated)" : "");
}

static int devices_run(int argc, char **argv) {
    const char *backend = NULL;
    for (int i = 1; i < argc; i++) {
        int got = cli_option(argc, argv, &i, "--backend", &backend);
        if (got < 0)
            return CLI_BADINPUT;
        if (got == 0)
            return cli_unknown_option(argv[0], argv[i]);
    }
    pp_error err = {{0}};
    int printed = 0;
    int rc = pp_device_list(backend, NULL, print_device, &printed, &err);
    if (rc != PP_OK) {
        cli_error("devices: %s", err.msg);
        return rc == PP_ENOTFOUND ? CLI_BADINPUT : CLI_FAIL;
    }
    return CLI_OK;
}

const pp_command pp_cmd_devices = {
    .name = "devices",
    .summary = "list the devices each backend can run on",
    .run = devices_run,
    .help = devices_help,
};
