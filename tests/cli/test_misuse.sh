#!/usr/bin/env bash
# The CLI's answers to misuse that once went wrong: an output that names the
# input, a directory where a file belongs, a trace read from a pipe, a byte
# order mark (and an empty --from/--to window, refused all along). Each is a one-line message with
# exit status 2 (bad input), or a clean read; never a destroyed input.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1
cp "$PP_SOURCE_DIR/tests/analyze/data/pipeline_small.json" small.json
cp small.json small.orig
mkdir adir

# -o naming TRACE itself would overwrite the trace with the report.
run "$P" export small.json --to html -o small.json
expect "export -o TRACE is refused" 2 "pipeprof: export: -o small.json is TRACE itself"
check "the trace is unchanged" cmp -s small.json small.orig
run "$P" export small.json --to html -o ./adir/../small.json
expect "export -o TRACE through another path is refused" 2 "is TRACE itself"
run "$P" convert small.json ./small.json
expect "convert IN IN is refused" 2 "pipeprof: convert: ./small.json is IN itself"
check "the trace is still unchanged" cmp -s small.json small.orig

# A directory is bad input (2), said as such, not a failed read (1).
run "$P" analyze adir
expect "analyze DIR" 2 "pipeprof: adir: is a directory, not a trace file"
run "$P" convert adir out.json
expect "convert DIR" 2 "pipeprof: adir: is a directory, not a trace file"
run "$P" run adir
expect "run DIR" 2 "pipeprof: adir: is a directory, not a JSON file"
run "$P" plan adir adir
expect "plan DIR" 2 "pipeprof: plan: adir: is a directory, not a JSON file"

# The demo's message names the command once.
run "$P" demo --backend tpu
expect "demo --backend tpu" 2 "pipeprof: demo: unknown backend \"tpu\" for the demo (have: cpu, openvino)"
check "the message does not repeat \"demo:\"" test "${out/demo: demo:/}" = "$out"

# An inverted or empty window selects nothing: refused, not an empty report.
run "$P" analyze small.json --from 2000 --to 1000
expect "--from after --to" 2 "small.json: the window is empty (whole trace, from 2000 to 1000 ns"
run "$P" analyze small.json --from 1000 --to 1000
expect "--from equal to --to" 2 "the window is empty"

# A trace from a pipe: the format is sniffed without using up the stream.
want=$("$P" analyze small.json --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["stages"])')
run "$P" analyze /dev/stdin --json <small.json
expect "analyze /dev/stdin reads JSON from a pipe" 0 '"stages"'
check "and finds what the file gives" test "$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["stages"])' "$out")" = "$want"
"$P" convert small.json small.pptrace 2>/dev/null
run "$P" analyze <(cat small.pptrace) --json
expect "analyze <(...) reads a .pptrace from a pipe" 0 '"stages"'
gzip -c small.json >small.json.gz
run "$P" convert <(cat small.json.gz) piped.json
expect "convert reads gzip JSON from a pipe" 0 "-> piped.json"

# A device is no trace and may never end (found by fuzz_cli: /dev/full
# was read into memory forever).
run "$P" analyze /dev/zero
expect "analyze /dev/zero is refused" 2 "pipeprof: /dev/zero: not a file or a pipe"

# A UTF-8 byte order mark before valid JSON is not part of the trace.
printf '\xef\xbb\xbf' >bom.json
cat small.json >>bom.json
run "$P" analyze bom.json --json
expect "a trace with a UTF-8 BOM is read" 0 '"stages"'
check "and reads as the same trace" test "$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["stages"])' "$out")" = "$want"

# --lookup-size is parsed as strictly as every other number: no blanks or
# signs (sscanf took " +5"), no value past int64 (sscanf overflowed).
for size in " +5,3" "5, 3" "+5,3" "5,99999999999999999999" "0,3" "5,3x" "5" "5,3,1"; do
    run "$P" analyze small.json --lookup-size "$size"
    expect "--lookup-size \"$size\" is refused" 2 "--lookup-size"
done
run "$P" analyze small.json --lookup-size 5,3
expect "--lookup-size 5,3 is taken" 0 "Findings"
finish
