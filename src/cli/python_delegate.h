/* python_delegate.h — running a subcommand that lives in the Python package
 * (python -m pipeprof: SQL with DuckDB, Parquet datasets), for the CLI's
 * `pipeprof sql` and `pipeprof export --to parquet`. */
#ifndef PP_CLI_PYTHON_DELEGATE_H
#define PP_CLI_PYTHON_DELEGATE_H

/* Runs `python -m pipeprof COMMAND ARGS...` (argv[1..argc) as ARGS) with
 * $PIPEPROF_PYTHON, else python3, and returns its exit code. When Python,
 * the pipeprof package or one of its extras is missing it prints what is
 * missing and how to install it (`extra`: "sql"), and returns 1. */
int cli_python_delegate(const char *command, const char *extra, int argc, char **argv);

#endif
