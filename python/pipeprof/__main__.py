"""python -m pipeprof: the commands that need Python's data stack, which
the C CLI (`pipeprof sql`, `pipeprof export --to parquet`) delegates to.

  python -m pipeprof sql TRACE... QUERY [--csv] [--exclude-region NAME] ...
  python -m pipeprof export TRACE --to parquet DIR

Exit status: 0, 2 for bad input (a message naming it), 1 for a failure of
the machine, 3 when a Python extra is missing (the message says which and
how to install it).
"""
import argparse
import sys

EXAMPLES = """examples:
  python -m pipeprof sql trace.pptrace "SELECT stage, count(*) FROM stage_times GROUP BY stage"
  python -m pipeprof sql a.pptrace b.pptrace \\
      "SELECT trace, stage, avg(time_ns) FROM stage_times GROUP BY ALL ORDER BY ALL"
  python -m pipeprof export trace.pptrace --to parquet trace.parquet.d
"""

MISSING_EXTRA = 3


def _window(args):
    return {k: v for k, v in (("region", args.region), ("exclude_region", args.exclude_region),
                              ("from_ns", args.from_ns), ("to_ns", args.to_ns)) if v is not None}


def _parser():
    p = argparse.ArgumentParser(prog="python -m pipeprof", epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                description="SQL over traces and Parquet datasets "
                                            "(docs/python.md, docs/tables.md)")
    sub = p.add_subparsers(dest="command", required=True)
    q = sub.add_parser("sql", help="run a DuckDB query over the tables of traces",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("args", nargs="+", metavar="TRACE... QUERY",
                   help="traces (files or Parquet dataset directories), then the query")
    q.add_argument("--csv", action="store_true", help="print CSV instead of an aligned table")
    e = sub.add_parser("export", help="write a trace's tables as a Parquet dataset",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("trace")
    e.add_argument("--to", required=True, choices=["parquet"], help="the format: parquet")
    e.add_argument("out", metavar="DIR", nargs="?", help="the directory (made if missing)")
    e.add_argument("-o", "--output", dest="output", metavar="DIR", help="the same as DIR")
    for s in (q, e):
        s.add_argument("--region", help="report tables over the hull of these regions")
        s.add_argument("--exclude-region", help="report tables without these regions")
        s.add_argument("--from-ns", type=int, help="report tables over [NS, ...)")
        s.add_argument("--to-ns", type=int, help="report tables over [..., NS)")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        import pipeprof
        from pipeprof import dataset, query
        if args.command == "sql":
            if len(args.args) < 2:
                print("pipeprof sql: expected TRACE... QUERY (the query last)", file=sys.stderr)
                return 2
            *paths, text = args.args
            df = query.sql(text, *paths, **_window(args))
            print(df.to_csv(index=False) if args.csv else df.to_string(index=False))
        else:
            out = args.out or args.output
            if not out:
                print("pipeprof export: expected the directory: --to parquet DIR", file=sys.stderr)
                return 2
            written = dataset.export_parquet(pipeprof.load(args.trace), out, **_window(args))
            print(f"pipeprof: {args.trace} -> {out}: {len(written)} Parquet tables",
                  file=sys.stderr)
        return 0
    except ImportError as e:
        print(str(e), file=sys.stderr)
        return MISSING_EXTRA
    except pipeprof.PipeprofError as e:
        print(f"pipeprof: {e}", file=sys.stderr)
        return 1 if e.code in (pipeprof._lib.PP_EIO, pipeprof._lib.PP_ENOMEM) else 2
    except Exception as e:  # DuckDB's errors: the query is the user's input
        if "duckdb" in type(e).__module__ or isinstance(e, ValueError):
            print(f"pipeprof sql: {e}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
