#!/usr/bin/env bash
# `pipeprof export` as a user meets it: a trace becomes a self-contained HTML
# report holding the analysis (or another trace format), and every mistake
# is a one-line message with exit status 2 that leaves no file behind.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1
cp "$PP_SOURCE_DIR/tests/analyze/data/pipeline_small.json" small.json

# The page's data, parsed as the page parses it (JSON.parse of the script
# element's text).
page_get() {
    "$PY" - "$1" "$2" <<'PYEOF'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="pp-data">(.*?)</script>', html, re.S)
d = json.loads(m.group(1))
print(eval(sys.argv[2]))
PYEOF
}

run "$P" export --help
expect "export --help shows usage, the formats and an example" 0 "usage: pipeprof export" \
    "--to FORMAT" "20000" "example"

run "$P" export small.json --to html -o report.html
expect "export writes the HTML report" 0 "small.json -> report.html (html)"
check "the report is one HTML page" grep -q '^<!DOCTYPE html>' report.html
check "the page fetches nothing: no src= or href= attributes" \
    test "$(grep -cE '(src|href)=' report.html)" = 0
analyze_bn=$("$P" analyze small.json --json | "$PY" -c \
    'import json,sys; d=json.load(sys.stdin); print(max(d["stages"], key=lambda s: s["bottleneck_count"])["name"])')
check "the page's bottleneck stage is analyze's" \
    test "$(page_get report.html 'max(d["stages"], key=lambda s: s["bottleneck_count"])["name"]')" = "$analyze_bn"
check "the page's findings are analyze's" test \
    "$(page_get report.html 'd["findings"]')" = \
    "$("$P" analyze small.json --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["findings"])')"
check "the page states the records dropped while recording" \
    test "$(page_get report.html 'd["data_loss"]["dropped_records"]')" = 3
check "the simulated NPU is marked simulated" \
    test "$(page_get report.html '[x["simulated"] for x in d["devices"] if x["name"] == "NPU"]')" = "[True]"

run "$P" export small.json --to html
expect "without -o the report goes beside the trace" 0 "small.json -> small.html"
check "small.html was written" test -s small.html

run "$P" export small.json --to html --region nope -o r.html
expect "an unknown region names the problem" 2 'export: small.json: no region named "nope"'
check "no report after a failed export" test ! -e r.html

run "$P" export small.json --to pptrace -o small.pptrace
expect "export --to pptrace converts" 0 "small.json -> small.pptrace (pptrace)"
run "$P" export small.pptrace --to json -o again.json
expect "export --to json converts back" 0 "small.pptrace -> again.json (json)"
check "the converted JSON is valid JSON" "$PY" -m json.tool again.json /dev/null
run "$P" convert small.pptrace converted.json
check "export --to json writes what convert writes" cmp again.json converted.json
run "$P" convert small.pptrace window.json --from 100000 --to 400000
run "$P" export small.pptrace --to json --from 100000 --to 400000 -o window-export.json
expect "export to a trace format keeps a window (--to with a number ends it)" 0 \
    "small.pptrace -> window-export.json (json)"
check "the window convert keeps" cmp window.json window-export.json
check "which is not the whole trace" test "$(stat -c %s window.json)" -lt "$(stat -c %s again.json)"
run "$P" export small.json --to json --region warm -o x.json
expect "--region with a trace format is bad input" 2 \
    "export: --region, --exclude-region and the name patterns are for --to html"
run "$P" export small.json --to html --to json -o x.html
expect "a second format is bad input" 2 'export: --to "json": the format is given twice (--to html)'
run "$P" export small.json --to json --from 5 --to 5 -o x.json
expect "an empty window is bad input" 2 "export: --from 5 is not before --to 5"
head -c $(($(stat -c %s small.pptrace) - 20)) small.pptrace > cut.pptrace
run "$P" export cut.pptrace --to json -o cut.json
expect "export of a cut .pptrace warns and exports the rest" 0 "warning: cut.pptrace: truncated" \
    "exporting the rest" "cut.pptrace -> cut.json (json)"
run "$P" export small.pptrace --to pftrace
expect "export --to pftrace writes Perfetto protobuf beside the trace" 0 \
    "small.pptrace -> small.pftrace (pftrace)"
pftrace_check "the exported .pftrace decodes and equals the trace" small.pftrace again.json

run "$P" export small.json --to svg -o x.svg
expect "an unknown --to is bad input" 2 'export: --to "svg": unknown format (have: html, pptrace, json, pftrace)'
run "$P" export small.json -o x.html
expect "--to is required" 2 "export: expected a TRACE and --to"
run "$P" export --to html
expect "a TRACE is required" 2 "export: expected a TRACE and --to"
run "$P" export small.json --to json -o x.pptrace
expect "a trace output must carry its format's extension" 2 \
    "export: -o x.pptrace: a json trace's name ends in .json"
run "$P" export small.json --to json
expect "export will not replace its input" 2 "export: writing small.json would replace TRACE"
run "$P" export missing.pptrace --to html -o m.html
expect "a missing trace is bad input" 2 "missing.pptrace: cannot open"
check "no report for a missing trace" test ! -e m.html
printf '{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": ' >broken.json
run "$P" export broken.json --to html -o b.html
expect "an unreadable trace names the file" 2 "broken.json:1:"
check "no report for an unreadable trace" test ! -e b.html
printf '{"traceEvents": []}' >empty.json
run "$P" export empty.json --to html -o e.html
expect "a trace without execs is bad input" 2 "export: empty.json:"
check "no report for an empty trace" test ! -e e.html
run "$P" export small.json --to html -o no-such-dir/r.html
expect "an unwritable output is an I/O failure" 1 "no-such-dir/r.html: cannot write"
check "no temporary file is left" test -z "$(ls -A | grep tmp || true)"
run "$P" export small.json --to html --bogus
expect "an unknown option is bad input" 2 'export: unknown option "--bogus"'
run "$P" export small.json --region a --exclude-region b --to html
expect "--region and --exclude-region exclude each other" 2 "exclude each other"

finish
