#!/usr/bin/env bash
# The pipeprof command line as a user meets it: help and version, every
# error a user can make with `record` and `convert` (message and exit code:
# 2 for bad input, 1 for a failure of the machine), and the two commands
# doing their job on a real program linked with libpipeprof.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1
if [[ ! -x $P ]]; then
    echo "FAIL: $P is not built"
    exit 1
fi

# ---- help, version, dispatch ------------------------------------------------

run "$P" --help
expect "--help lists the commands" 0 "usage: pipeprof" "record" "convert" "example"
run "$P"
expect "no command is bad input and shows the usage" 2 "usage: pipeprof"

version=$(sed -nE 's/^project\(pipeprof VERSION ([0-9.]+).*/\1/p' "$PP_SOURCE_DIR/CMakeLists.txt")
run "$P" --version
expect "--version names the project version and the features" 0 "pipeprof $version" "features:"

# Every command listed in --help has a help of its own with an example.
commands=$("$P" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
check "--help lists at least record and convert" test "$(wc -w <<<"$commands")" -ge 2
for cmd in $commands; do
    run "$P" "$cmd" --help
    expect "pipeprof $cmd --help shows usage and an example" 0 "usage: pipeprof $cmd" "example"
    run "$P" "$cmd" -h
    expect "pipeprof $cmd -h is --help" 0 "usage: pipeprof $cmd"
done

run "$P" frobnicate
expect "an unknown command is bad input" 2 'pipeprof: unknown command "frobnicate"'
run "$P" record --bogus -o x.json -- true
expect "record: an unknown option is bad input" 2 'record: unknown option "--bogus"'
run "$P" convert --bogus a.json b.json
expect "convert: an unknown option is bad input" 2 'convert: unknown option "--bogus"'

# The CLI links libpipeprof but must never record itself: a PIPEPROF_OUTPUT
# left in the shell would otherwise overwrite a trace with an empty one.
PIPEPROF_OUTPUT=$tmp/self.json "$P" --version >/dev/null
check "pipeprof itself ignores PIPEPROF_OUTPUT" test ! -e "$tmp/self.json"

# ---- record: bad input --------------------------------------------------------

run "$P" record -- true
expect "record without -o" 2 "record: no output file: give -o FILE"
run "$P" record -o
expect "record -o without a value" 2 "record: option -o needs a value"
run "$P" record -o x.txt -- true
expect "record to an unsupported extension" 2 "record: -o x.txt: a recording is written as .pptrace, .json or .pftrace"
run "$P" record -o x.json --level 3 -- true
expect "record --level out of range" 2 'record: --level "3": expected a whole number from 0 to 2'
run "$P" record -o x.json --level=one -- true
expect "record --level=VALUE that is not a number" 2 'record: --level "one"'
run "$P" record -o x.json --max-records 0 -- true
expect "record --max-records 0" 2 'record: --max-records "0": expected a whole number of at least 1'
run "$P" record -o x.json --max-records -5 -- true
expect "record --max-records negative" 2 'record: --max-records "-5"'
run "$P" record -o x.json --max-records 12k -- true
expect "record --max-records with a suffix" 2 'record: --max-records "12k"'
run "$P" record -o x.json --max-records 99999999999999999999 -- true
expect "record --max-records past 2^64" 2 'record: --max-records "99999999999999999999"'
run "$P" record -o x.json --overflow wrap -- true
expect "record --overflow unknown policy" 2 'record: --overflow "wrap": expected drop or ring'
run "$P" record -o x.json true
expect "record with the command not after --" 2 'record: unexpected argument "true": put the command after "--"'
run "$P" record -o x.json --
expect "record with nothing after --" 2 "record: no command to run"
run "$P" record -o x.json -- ./no-such-program
expect "record of a command that does not exist" 2 'record: cannot run "./no-such-program": command not found'
run "$P" record -o x.json -- "$tmp"
expect "record of something that cannot be executed" 2 "record: cannot run \"$tmp\": Permission denied"
run "$P" record -o no-such-dir/x.json -- true
expect "record into a folder that does not exist" 2 "record: -o no-such-dir/x.json: cannot write in"
check "no trace appears after bad input" test ! -e x.json

# ---- record: the child's side of the contract ---------------------------------

# shellcheck disable=SC2016 # expanded by the child's shell, not here
show_env='printf "%s|%s|%s|%s\n" "$PIPEPROF_OUTPUT" "$PIPEPROF_LEVEL" "$PIPEPROF_MAX_RECORDS" "$PIPEPROF_OVERFLOW"'
run "$P" record -o env.json --level 2 --max-records 5 --overflow ring -- sh -c "$show_env"
expect "record passes the options as PIPEPROF_* (output made absolute)" 1 "$tmp/env.json|2|5|ring"
run env PIPEPROF_LEVEL=0 PIPEPROF_MAX_RECORDS=7 PIPEPROF_OVERFLOW=ring \
    "$P" record -o env.pptrace -- sh -c "$show_env"
expect "record sets the defaults, whatever the shell had" 1 "$tmp/env.pptrace|1|$((1 << 24))|drop"

run "$P" record -o none.json -- true
expect "a program not linked with libpipeprof: no trace, exit 1" 1 \
    "pipeprof: true wrote no trace to none.json: does it use libpipeprof, NVTX or ITT?"
echo '{"traceEvents":[]}' >old.json
run "$P" record -o old.json -- true
expect "a trace left from an earlier run is not taken for a new one" 1 "true wrote no trace to old.json"
run "$P" record -o none.json -- sh -c 'exit 3'
expect "the child's failure is the exit status" 3 "wrote no trace to none.json (it exited with status 3)"

# SIGTERM sent to pipeprof alone (as a CI timeout does) reaches the child.
rm -f started
"$P" record -o term.json -- sh -c 'echo > started; exec sleep 30' >term.out 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -e started ]] && break; sleep 0.1; done
kill -TERM "$pid"
wait_run "$pid" term.out
expect "record passes SIGTERM on and exits 128+15" 143 "killed by signal 15"

# ---- record: a program linked with libpipeprof ------------------------------

basic=$PP_BINARY_DIR/examples/record_basic
if [[ ! -x $basic ]]; then
    skip_part "record and convert of a real trace: $basic is not built"
    finish
fi

# record_basic makes 20 batches, each one "prepare" stage span and one
# "compute" exec span (examples/record_basic.c).
run "$P" record -o basic.json -- "$basic"
expect "record of record_basic writes a JSON trace" 0 "pipeprof: $basic: wrote basic.json:" "events" \
    "0 dropped records"
check "the recorded JSON is valid JSON" "$PY" -m json.tool basic.json /dev/null
check "the trace holds the 20 compute execs" test \
    "$(json_get basic.json 'sum(e.get("name") == "compute" and e.get("ph") == "X" for e in d["traceEvents"])')" = 20
check "the trace says level 1 (the default)" test "$(json_get basic.json 'd["otherData"]["level"]')" = 1

run "$P" record -o basic.pftrace -- "$basic"
expect "record of record_basic writes a Perfetto trace" 0 "wrote basic.pftrace:" "bytes"
pftrace_check "the recorded .pftrace decodes" basic.pftrace
check "the .pftrace holds the 20 compute execs" test "$(grep -c 'name="compute" .*role="exec"' <<<"$out")" = 20
run "$P" convert basic.pftrace again.json
expect "a .pftrace is not read back: bad input, said" 2 \
    "basic.pftrace: pipeprof writes Perfetto traces but does not read them"

run "$P" record -o basic.pptrace --level 0 -- "$basic"
expect "record of record_basic writes a .pptrace" 0 "wrote basic.pptrace:"
check "the .pptrace starts with its magic" test "$(head -c 7 basic.pptrace)" = PPTRACE

# A program killed with SIGKILL leaves what the flight recorder wrote: the
# summary says the file was cut off, and does not claim 0 dropped records.
envchild=$PP_BINARY_DIR/tests/capture_test_env
if [[ -x $envchild ]]; then
    run "$P" record -o cut.pptrace -- sh -c '"$0" child -1 -1 & c=$!; sleep 1; kill -KILL $c; wait $c' "$envchild"
    expect "record of a program killed by SIGKILL" 137 "wrote cut.pptrace:" \
        "dropped records not known (the file was cut off)" "no META block"
    check "the cut summary claims no count of drops" test -z "$(grep -E '[0-9]+ dropped records' <<<"$out")"
else
    skip_part "record of a killed program: $envchild is not built"
fi

# A budget of 10 records is spent in the first batches: drops are counted
# and said, in the summary and in the file.
run "$P" record -o small.json --max-records 10 -- "$basic"
expect "record with a small budget" 0 "wrote small.json:" "--overflow ring"
dropped=$(sed -nE 's/.* ([0-9]+) dropped records.*/\1/p' <<<"$out")
check "the summary counts dropped records" test "${dropped:-0}" -gt 0
check "the file counts the same drops" test "$(json_get small.json 'd["otherData"]["dropped_records"]')" = "$dropped"
run "$P" record -o small.pftrace --max-records 10 -- "$basic"
expect "record to .pftrace with a small budget" 0 "wrote small.pftrace:" "records dropped"
pftrace_check "the small .pftrace decodes" small.pftrace
check "the .pftrace names its drops on the pipeprof track" \
    grep -qE 'track uuid=[0-9]+ name="pipeprof \([1-9][0-9]* records dropped\)"' <<<"$out"

# A program of our own that records, then waits to be stopped: the SIGTERM
# given to pipeprof reaches it, and its trace is still written.
san=$(sanitizer_flags)
cat >waiter.c <<'EOF'
#include <stdio.h>
#include <unistd.h>
#include <pipeprof/trace.h>
int main(void) {
    pp_session *s = pp_default_session();
    pp_track t;
    pp_span_rec r;
    pp_track_thread(s, "main", &t);
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern("before the signal");
    r.ts_ns = pp_now();
    r.dur_ns = 1000;
    pp_span(s, &r);
    FILE *ready = fopen("ready", "w"); /* tells the test the recording is under way */
    if (ready)
        fclose(ready);
    for (int i = 0; i < 300; i++)
        usleep(100000);
    return 0;
}
EOF
# $san is a list of flags (or none): split on purpose.
# shellcheck disable=SC2086
if cc $san -I"$PP_SOURCE_DIR/include" waiter.c -o waiter -L"$PP_BINARY_DIR" -lpipeprof \
    -Wl,-rpath,"$PP_BINARY_DIR" 2>cc.err; then
    rm -f ready
    "$P" record -o sig.json -- ./waiter >sig.out 2>&1 &
    pid=$!
    for _ in $(seq 100); do [[ -e ready ]] && break; sleep 0.1; done
    kill -TERM "$pid"
    wait_run "$pid" sig.out
    expect "a linked program stopped by SIGTERM through pipeprof" 143 "wrote sig.json:"
    check "its trace has what it recorded before the signal" test \
        "$(json_get sig.json 'sum(e.get("name") == "before the signal" for e in d["traceEvents"])')" = 1
else
    check "the waiter program compiles against libpipeprof ($(cat cc.err))" false
fi

# ---- convert ------------------------------------------------------------------

run "$P" convert basic.pptrace a.json
expect "convert .pptrace to .json" 0 "basic.pptrace -> a.json:"
check "the converted JSON is valid JSON" "$PY" -m json.tool a.json /dev/null
run "$P" convert basic.pptrace a.pftrace
expect "convert .pptrace to .pftrace" 0 "basic.pptrace -> a.pftrace:"
pftrace_check "the converted .pftrace holds what the converted JSON holds" a.pftrace a.json
run "$P" convert a.json b.pptrace
expect "convert .json back to .pptrace" 0 "a.json -> b.pptrace:"
run "$P" convert b.pptrace c.json
expect "and to .json again" 0 "b.pptrace -> c.json:"
check "pptrace -> json -> pptrace -> json loses nothing (same JSON twice)" cmp -s a.json c.json
run "$P" convert basic.pptrace all.json --from 0
expect "a window from 0 keeps the whole trace" 0 "basic.pptrace -> all.json:"
check "the same JSON as without a window" cmp -s a.json all.json
run "$P" convert basic.pptrace none.json --from 0 --to 1
expect "a window before the trace keeps no event" 0 "basic.pptrace -> none.json: 0 events"
run "$P" convert basic.pptrace x.json --from 5 --to 5
expect "an empty window is bad input" 2 "convert: --from 5 is not before --to 5"
run "$P" convert basic.pptrace x.json --from soon
expect "a window bound that is not a number is bad input" 2 "--from"

# A trace larger than the memory there is: a warning names it, its size and
# what to do, and the analysis goes on.
PIPEPROF_MEM_AVAILABLE=1000 run "$P" analyze basic.pptrace
expect "analyze warns of a trace larger than the memory available" 0 \
    "warning: basic.pptrace holds" "events: analyzing them takes up to about" \
    "and about 0 MB is available" "pipeprof convert TRACE PART.pptrace --from NS --to NS" \
    "cuts out a part in a few MB"
PIPEPROF_MEM_AVAILABLE=100000000000 run "$P" analyze basic.pptrace
check "no warning when it fits" test "${out#*warning: basic.pptrace holds}" = "$out"
PIPEPROF_MEM_AVAILABLE=lots run "$P" analyze basic.pptrace
expect "PIPEPROF_MEM_AVAILABLE that is no number is named and ignored" 0 \
    'warning: PIPEPROF_MEM_AVAILABLE="lots" is not a number of bytes; ignored'
PIPEPROF_MEM_AVAILABLE=1000 run "$P" convert basic.pptrace mem.pftrace
expect "convert to .pftrace, which reads whole, warns the same way" 0 \
    "warning: basic.pptrace holds" "converting them takes up to about"
PIPEPROF_MEM_AVAILABLE=1000 run "$P" convert basic.pptrace mem.json
check "convert to .json, in chunks, does not" test "${out#*warning:}" = "$out"

run "$P" convert a.json
expect "convert with one path" 2 "convert: expected IN OUT"
run "$P" convert a.json b.json c.json
expect "convert with three paths" 2 'convert: unexpected argument "c.json"'
run "$P" convert a.json out.xyz
expect "convert to an unknown extension" 2 "convert: out.xyz: unknown output format (use .pptrace, .json or .pftrace)"
check "no output for an unknown extension" test ! -e out.xyz
run "$P" convert missing.json out.json
expect "convert of a file that does not exist" 2 "missing.json"
run "$P" convert a.json no-such-dir/out.json
expect "convert into a folder that does not exist is an I/O failure" 1 "no-such-dir/out.json"

# Malformed JSON: the message names the file, line and column of the bad
# value; no output file (nor a temporary) is left behind.
line2_prefix='{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":'
printf '{"traceEvents":[\n%sx}]}\n' "$line2_prefix" >bad.json
run "$P" convert bad.json bad_out.pptrace
expect "convert of malformed JSON names the place" 2 "bad.json:2:$((${#line2_prefix} + 1))"
check "no output file after a failed convert" test -z "$(find . -name 'bad_out*')"

printf 'PPTRACE\0garbage, not blocks' >bad.pptrace
run "$P" convert bad.pptrace bad_out.json
expect "convert of a malformed .pptrace is bad input naming the file" 2 "pipeprof: bad.pptrace"
check "no output file after a failed convert of a .pptrace" test ! -e bad_out.json

# A .pptrace cut short: every complete block is converted, the loss is said
# and recorded in the output.
size=$(stat -c %s basic.pptrace)
head -c $((size - 5)) basic.pptrace >cut.pptrace
run "$P" convert cut.pptrace cut.json
expect "convert of a truncated .pptrace warns and succeeds" 0 "warning: cut.pptrace" "bytes lost; converted the rest" \
    "cut.pptrace -> cut.json:"
lost=$(sed -nE 's/.*\(([0-9]+) bytes lost;.*/\1/p' <<<"$out")
check "the warning names a number of bytes lost" test "${lost:-0}" -gt 0
check "the output's metadata records the same loss" test \
    "$(json_get cut.json 'd["otherData"]["truncated_bytes"]')" = "$lost"

finish
