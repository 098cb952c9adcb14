/* inject_env.h — how `pipeprof record` attaches its injection libraries
 * (NVTX, ITT, CUPTI) to the program it runs (docs/recording.md). */
#ifndef PP_CLI_INJECT_ENV_H
#define PP_CLI_INJECT_ENV_H

/* Which annotation APIs `record` attaches to. */
typedef struct inject_opts {
    int nvtx; /* set NVTX_INJECTION64_PATH */
    int itt;  /* set INTEL_LIBITTNOTIFY64 */
    int cupti; /* set CUDA_INJECTION64_PATH */
} inject_opts;

/* Takes --no-nvtx, --no-itt or --no-cupti at argv[i]: 1 when it was one, else 0. */
int inject_option(const char *arg, inject_opts *o);
/* Sets the variables for the child to this build's libraries. A library
 * that is not there (not built, or moved) is left out, and its variable is
 * left as the user's environment has it. Returns 0, or CLI_FAIL after a
 * message. */
int inject_setenv(const inject_opts *o);
/* The help text of the options. */
extern const char inject_help[];

#endif
