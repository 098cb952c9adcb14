#!/usr/bin/env bash
# `pipeprof report TRACE -o DIR` as a user meets it: every file written and
# each read back by its own reader (summary.txt against `analyze`, the CSV
# tables against `analyze --csv`, the workbook by openpyxl, the .pftrace by
# the Perfetto proto check, the HTML page in headless Chromium); each
# output switched off on its own; the directory never left half written;
# and every error a user can make, with its message and exit status.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
D=$PP_SOURCE_DIR/tests/analyze/data
cd "$tmp" || exit 1

run "$P" report --help
expect "help shows usage, the outputs, the switches and an example" 0 \
    "usage: pipeprof report TRACE... -o DIR" "summary.txt" "report.xlsx" "--no-xlsx" \
    "--exclude-region NAME" "examples:"

run "$P" demo --out demo --batches 8 --level 2
expect "demo runs" 0
T=demo/trace.pptrace
has_xlsx=0
[[ $("$P" --version) == *" xlsx"* ]] && has_xlsx=1

run "$P" report "$T" -o r --exclude-region "warm up"
expect "report writes the directory" 0 "report r: summary, html"
csvs=(devices tracks stages batches gaps ops op_types decomposition bandwidth)
for f in summary.txt report.html trace.pftrace "${csvs[@]/%/.csv}"; do
    check "r/$f written" test -s "r/$f"
done
check "nothing staged is left beside or inside r" test -z "$(ls -a . r | grep '\.tmp')"

# summary.txt is the text report of the same window, findings first
"$P" analyze "$T" --exclude-region "warm up" --csv want >analyze.txt 2>/dev/null
check "summary.txt is analyze's text report" cmp -s r/summary.txt analyze.txt
check "summary.txt: findings before the tables" test \
    "$(grep -n '^Findings' r/summary.txt | cut -d: -f1)" -lt \
    "$(grep -n '^Devices' r/summary.txt | cut -d: -f1)"
check "summary.txt: bandwidth per device" grep -q "^Bandwidth" r/summary.txt
for f in "${csvs[@]}"; do
    check "$f.csv is analyze --csv's" cmp -s "r/$f.csv" "want/$f.csv"
done

# the workbook, read by openpyxl against the JSON report of the same window
"$P" analyze "$T" --exclude-region "warm up" --json >report.json 2>/dev/null
if ((has_xlsx)); then
    check "report.xlsx written" test -s r/report.xlsx
    run "$PY" "$PP_SOURCE_DIR/tests/cli/xlsx_check.py" r/report.xlsx report.json
    if [[ $rc == 77 ]]; then
        skip_part "report.xlsx: $out"
    else
        expect "openpyxl reads report.xlsx: sheets, frozen headers, filters, ms/µs, figures" 0 \
            "ok: r/report.xlsx"
        echo "$out" | grep -v '^ok '
    fi
else
    expect "without libxlsxwriter the report says the workbook is left out" 0 \
        "xlsx is not built" "report.xlsx is left out"
    check "no report.xlsx without libxlsxwriter" test ! -e r/report.xlsx
    skip_part "report.xlsx: this build has no libxlsxwriter (Debian: libxlsxwriter-dev)"
fi

# the .pftrace is the trace itself, as convert writes it
"$P" convert "$T" same.json >/dev/null 2>&1
pftrace_check "the Perfetto proto check reads trace.pftrace, equal to the trace" \
    r/trace.pftrace same.json

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [[ -n $CHROMIUM ]]; then
    run "$PY" "$PP_SOURCE_DIR/tests/analyze/html_browser.py" "$CHROMIUM" "$tmp/profile" \
        r/report.html "$tmp/report.png"
    expect "report.html renders in headless Chromium, bandwidth table included" 0 \
        "no console errors" "ok   the bandwidth table has a row per device"
else
    skip_part "report.html in a browser: chromium is not installed (scripts/setup installs it)"
fi

# each output switched off on its own
all=(summary.txt report.html report.xlsx trace.pftrace devices.csv)
switch=(--no-summary --no-html --no-xlsx --no-pftrace --no-csv)
for k in "${!switch[@]}"; do
    run "$P" report "$T" -o "off$k" "${switch[$k]}"
    expect "${switch[$k]} runs" 0
    check "${switch[$k]} leaves ${all[$k]} out" test ! -e "off$k/${all[$k]}"
    check "${switch[$k]} writes the rest" test -s "off$k/${all[$(((k + 1) % 5))]}" -o \
        "${all[$(((k + 1) % 5))]}" = report.xlsx -a "$has_xlsx" = 0
done

# an existing directory: the new files replace the old ones, others stay
mkdir old && echo stale >old/summary.txt && echo mine >old/notes.txt
run "$P" report "$T" -o old --no-html --no-xlsx --no-pftrace --no-csv
expect "report into an existing directory" 0
check "its summary.txt is the new one" grep -q "^Findings" old/summary.txt
check "a file of the user's is left alone" grep -q mine old/notes.txt
check "no staging directory is left inside" test -z "$(ls -a old | grep '\.tmp')"

# a truncated trace: every complete block is reported, and the loss stated
size=$(stat -c %s "$T")
head -c $((size * 2 / 3)) "$T" >cut.pptrace
run "$P" report cut.pptrace -o cut
expect "a truncated trace is reported with a warning" 0 "warning: cut.pptrace: truncated at byte" \
    "the report states the loss"
check "summary.txt states the truncated bytes" grep -q "^data loss: .* truncated bytes" cut/summary.txt

# errors: the message, the status, and no directory
run "$P" report "$T"
expect "no -o" 2 "expected a TRACE and -o DIR"
run "$P" report -o e1
expect "no TRACE" 2 "expected a TRACE and -o DIR"
run "$P" report "$T" -o e2 --frobnicate
expect "unknown option" 2 'unknown option "--frobnicate"'
run "$P" report missing.pptrace -o e3
expect "a missing trace" 2 "missing.pptrace"
check "a missing trace makes no directory" test ! -e e3
echo '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5},' >bad.json
run "$P" report bad.json -o e4
expect "a malformed trace" 2 "bad.json"
check "a malformed trace makes no directory" test ! -e e4
echo '{"traceEvents": [{"ph": "X", "name": "work", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}' >noexec.json
run "$P" report noexec.json -o e5
expect "a trace without execs" 2 "the trace has no execs"
check "a trace without execs makes no directory" test ! -e e5
run "$P" report "$T" "$D/pipeline_small.json" -o e6
expect "a second TRACE that is no trace" 2 "pipeline_small.json"
check "a bad second trace makes no directory" test ! -e e6
run "$P" report "$T" -o e7 --region "warm up" --exclude-region "warm up"
expect "conflicting window options" 2 "--region and --exclude-region exclude each other"
run "$P" report "$T" -o e8 --region nosuch
expect "an unknown region" 2 'nosuch'
echo file >afile
run "$P" report "$T" -o afile
expect "-o naming a file" 2 "-o afile: exists and is not a directory"
run "$P" report "$T" -o /proc/no/such/dir
expect "-o where no directory can be made" 1 "-o /proc/no/such/dir: cannot create a directory there"

# a write that fails half way (ulimit -f): exit 1, nothing left as if complete
run bash -c 'ulimit -f 4; exec "$0" report "$1" -o full' "$P" "$T"
expect "a full disk" 1 "File too large"
check "a full disk leaves neither the directory nor its staging" test -z "$(ls -d full* 2>/dev/null)"

finish
