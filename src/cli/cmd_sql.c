/* pipeprof sql: SQL over the tables of traces (docs/tables.md), run by
 * DuckDB in the Python package (python -m pipeprof sql). */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/python_delegate.h"

static void sql_help(FILE *out) {
    fputs("usage: pipeprof sql TRACE... QUERY [--csv] [--region NAME] [--exclude-region NAME]\n"
          "                    [--from-ns NS] [--to-ns NS]\n\n"
          "Runs QUERY (DuckDB SQL) over the tables of the traces (docs/tables.md):\n"
          "the model's events, track_info, annotations, strings, threads and the\n"
          "report's stages, stage_times, batches, cycles, devices, tracks, execs,\n"
          "decomposition, data_parallel, dp_devices, ops, op_types. With several\n"
          "traces every table gains a first column `trace`. A TRACE is any trace\n"
          "pipeprof reads or a Parquet dataset directory (pipeprof export --to parquet).\n"
          "Runs in Python (python -m pipeprof sql): needs pip install \"pipeprof[sql]\"\n"
          "(pyarrow, duckdb); PIPEPROF_PYTHON names the Python (default python3).\n\n"
          "options:\n"
          "  --csv                  print CSV instead of an aligned table\n"
          "  --region NAME, --exclude-region NAME, --from-ns NS, --to-ns NS\n"
          "                         the window of the report's tables (pipeprof analyze)\n"
          "  -h, --help             this help\n\n"
          "examples:\n"
          "  pipeprof sql trace.pptrace \"SELECT stage, count(*) AS batches, avg(time_ns)\n"
          "      FROM stage_times GROUP BY stage ORDER BY stage\"\n"
          "  pipeprof sql a.pptrace b.pptrace \"SELECT trace, name, sum(dur_ns) FROM events\n"
          "      WHERE kind = 'span' GROUP BY ALL ORDER BY 3 DESC LIMIT 10\"\n",
          out);
}

static int sql_run(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) {
            sql_help(stdout);
            return CLI_OK;
        }
    if (argc < 3) {
        cli_error("sql: expected TRACE... QUERY (pipeprof sql trace.pptrace \"SELECT count(*) "
                  "FROM events\")");
        return CLI_BADINPUT;
    }
    return cli_python_delegate("sql", "sql", argc, argv);
}

const pp_command pp_cmd_sql = {
    .name = "sql",
    .summary = "run SQL (DuckDB) over the tables of traces, in Python",
    .run = sql_run,
    .help = sql_help,
};
