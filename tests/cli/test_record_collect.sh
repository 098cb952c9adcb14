#!/usr/bin/env bash
# pipeprof record's collection settings: --collect and --devices reach the
# child as PIPEPROF_COLLECT / PIPEPROF_DEVICES (and values left in the shell
# do not), and bad lists are refused before anything runs, naming the item.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

run "$P" record -o x.json --collect spans,gpu -- true
expect "an unknown collect item is refused" 2 \
    'record: --collect: collect "spans,gpu": unknown item "gpu" (have: spans, hw, ops, transfers, api, sched, threads, or all)'
run "$P" record -o x.json --devices "NPU,,GPU" -- true
expect "an empty device name is refused" 2 'record: --devices: devices "NPU,,GPU": an empty device name'
check "no trace appears after bad input" test ! -e x.json

# shellcheck disable=SC2016 # expanded by the child's shell, not here
show='printf "[%s|%s]\n" "$PIPEPROF_COLLECT" "$PIPEPROF_DEVICES"'
run "$P" record -o env.json --collect spans,api --devices NPU,GPU.0 -- sh -c "$show"
expect "the settings reach the child" 1 "[spans,api|NPU,GPU.0]"
run env PIPEPROF_COLLECT=ops PIPEPROF_DEVICES=CPU "$P" record -o env.json -- sh -c "$show"
expect "values left in the shell do not" 1 "[|]"
run "$P" record --help
expect "record --help names the options" 0 "--collect LIST" "--devices LIST"
finish
