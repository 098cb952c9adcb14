/* Finding the injection libraries and pointing the child's NVTX, ITT and
 * CUDA driver at them. They sit next to the pipeprof binary in the build
 * tree and in the library folder of an installed copy (bin/../lib). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/inject_env.h"

#ifndef PP_INJECT_LIBDIR
#define PP_INJECT_LIBDIR "lib"
#endif

const char inject_help[] =
    "  --no-nvtx             do not attach to NVTX (NVTX_INJECTION64_PATH is left\n"
    "                        as it is)\n"
    "  --no-itt              do not attach to ITT (INTEL_LIBITTNOTIFY64 likewise)\n"
    "  --no-cupti            do not record CUDA kernels and copies through CUPTI\n"
    "                        (CUDA_INJECTION64_PATH likewise)\n";

int inject_option(const char *arg, inject_opts *o) {
    if (strcmp(arg, "--no-nvtx") == 0)
        o->nvtx = 0;
    else if (strcmp(arg, "--no-itt") == 0)
        o->itt = 0;
    else if (strcmp(arg, "--no-cupti") == 0)
        o->cupti = 0;
    else
        return 0;
    return 1;
}

/* The absolute path of `file` in one of the library's places, in `out`;
 * 0 when found. */
static int find_library(const char *file, char *out, size_t size) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    const char *libdir = PP_INJECT_LIBDIR;
    char candidates[2][PATH_MAX + 64];
    snprintf(candidates[0], sizeof candidates[0], "%s/%s", exe, file);
    if (libdir[0] == '/')
        snprintf(candidates[1], sizeof candidates[1], "%s/%s", libdir, file);
    else
        snprintf(candidates[1], sizeof candidates[1], "%s/../%s/%s", exe, libdir, file);
    for (int i = 0; i < 2; i++)
        if (access(candidates[i], R_OK) == 0 && realpath(candidates[i], out) &&
            strlen(out) < size)
            return 0;
    return -1;
}

static int set_library(const char *var, const char *file) {
    char path[PATH_MAX];
    if (find_library(file, path, sizeof path) != 0)
        return 0;
    if (setenv(var, path, 1) != 0) {
        cli_error("record: cannot set %s: %s", var, strerror(errno));
        return CLI_FAIL;
    }
    return 0;
}

/* With ITT attached, the folder of the sitecustomize that switches torch's
 * ITT annotations on in every thread goes first on PYTHONPATH
 * (src/inject/python_site/sitecustomize.py; it does nothing to a program
 * that does not import torch). */
static int set_python_site(void) {
    char dir[PATH_MAX];
    if (find_library("pipeprof_python_site", dir, sizeof dir) != 0)
        return 0;
    const char *old = getenv("PYTHONPATH");
    size_t n = strlen(dir) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(n);
    if (!path)
        return CLI_FAIL;
    snprintf(path, n, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
    int rc = setenv("PYTHONPATH", path, 1);
    free(path);
    if (rc != 0) {
        cli_error("record: cannot set PYTHONPATH: %s", strerror(errno));
        return CLI_FAIL;
    }
    return 0;
}

int inject_setenv(const inject_opts *o) {
    int rc = 0;
    if (o->nvtx)
        rc = set_library("NVTX_INJECTION64_PATH", "libpipeprof_nvtx.so");
    if (rc == 0 && o->itt)
        rc = set_library("INTEL_LIBITTNOTIFY64", "libpipeprof_itt.so");
    if (rc == 0 && o->itt)
        rc = set_python_site();
    if (rc == 0 && o->cupti)
        rc = set_library("CUDA_INJECTION64_PATH", "libpipeprof_cupti.so");
    return rc;
}
