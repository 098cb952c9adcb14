#!/usr/bin/env bash
# `pipeprof record -o PATTERN` and PIPEPROF_OUTPUT patterns: the processes
# of one pipeline (and the sessions of one process) each write their own
# file (%p process id, %n session number, %h host name, %% a percent sign);
# a bad pattern is refused before anything runs, with what it should be.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

# ---- bad patterns -------------------------------------------------------------

run "$P" record -o 'x-%q.json' -- true
expect "record: an unknown pattern is bad input" 2 \
    'record: -o: output name "x-%q.json": unknown pattern %q (have: %p process id, %n session number, %h host name, %% percent sign)'
run "$P" record -o 'x%' -- true
expect "record: a lone % is bad input" 2 'record: -o: output name "x%": a lone % at the end'
run "$P" record -o 'run-%p/x.json' -- true
expect "record: a pattern in the directory is bad input" 2 \
    "record: -o run-%p/x.json: patterns (%p, %n, %h) go in the file name, not in its directory"
run "$P" record -o 'none-%p.json' -- true
expect "record: a pattern no process wrote: said, exit 1" 1 "true wrote no trace to none-%p.json"

basic=$PP_BINARY_DIR/examples/record_basic
if [[ ! -x $basic ]]; then
    skip_part "recording with patterns: $basic is not built"
    finish
fi

run env PIPEPROF_OUTPUT='t-%z.json' "$basic" "$tmp/plain.json"
expect "PIPEPROF_OUTPUT with an unknown pattern says so and does not record" 0 \
    'pipeprof: PIPEPROF_OUTPUT: output name "t-%z.json": unknown pattern %z'
check "no file named after the bad pattern" test ! -e 't-%z.json'

# ---- two processes, one pattern ---------------------------------------------

# Two processes of one "pipeline" under one record: each writes its own
# file named after its pid; record names both.
run "$P" record -o 'two-%p-%n-%h-100%%.pptrace' -- sh -c "'$basic' & '$basic'; wait"
expect "record of two processes with a pattern" 0 "wrote $tmp/two-"
files=(two-*-0-"$(hostname)"-100%.pptrace)
check "two files, one per process (session 0 of each)" test "${#files[@]}" = 2
check "record said it wrote both" test "$(grep -c ': wrote ' <<<"$out")" = 2
pids=$(printf '%s\n' "${files[@]}" | sed -E 's/^two-([0-9]+)-.*/\1/' | sort -u | wc -l)
check "the two files have different process ids" test "$pids" = 2
for f in "${files[@]}"; do
    run "$P" analyze "$f"
    expect "$f analyzes (its own process's 20 batches)" 0 "Cycles (20 batches"
done

# A second run adds files beside the first run's: nothing is overwritten.
run "$P" record -o 'two-%p-%n-%h-100%%.pptrace' -- "$basic"
expect "a second record with the same pattern" 0 "wrote $tmp/two-"
files=(two-*.pptrace)
check "the first run's files are still there beside the new one" test "${#files[@]}" = 3

finish
