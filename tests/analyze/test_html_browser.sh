#!/usr/bin/env bash
# The HTML report as a user sees it: `pipeprof demo` writes report.html, and
# headless Chromium opens it offline without a console error, with findings,
# timeline, utilization, bubbles, latency, stage, cycle and data-parallel
# sections rendered, hover and zoom working; a trace that lost records shows
# the data-loss banner; a trace larger than the page's span cap opens
# summarized. Screenshots go to the build tree
# (tests/artifacts/). Skipped (77) when chromium is not installed.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $CHROMIUM ]]; then
    echo "SKIP: chromium is not installed (Debian package chromium; scripts/setup installs it)"
    exit 77
fi
artifacts=$PP_BINARY_DIR/tests/artifacts
mkdir -p "$artifacts"
cd "$tmp" || exit 1

run "$P" demo --out d --batches 30
expect "demo writes report.html" 0 "d/report.html"
check "report.html is not empty" test -s d/report.html
run "$PY" "$PP_SOURCE_DIR/tests/analyze/html_browser.py" "$CHROMIUM" "$tmp/profile" \
    d/report.html "$artifacts/report_demo.png"
expect "the demo's report renders in Chromium" 0 "no console errors" "screenshot:"
echo "$out"

# A trace that lost records while recording: the banner says so.
run "$P" export "$PP_SOURCE_DIR/tests/analyze/data/pipeline_small.json" --to html -o small.html
expect "export writes a report of a trace with data loss" 0 "small.html"
run "$PY" "$PP_SOURCE_DIR/tests/analyze/html_browser.py" "$CHROMIUM" "$tmp/profile1" \
    small.html "$artifacts/report_data_loss.png"
expect "the report of a trace with data loss renders" 0 "no console errors" \
    "ok   the banner states data loss exactly when there is some"
echo "$out"

# Two traces merged: the banner states how their clocks were aligned (the
# same trace twice shares its clock: same clock, error bound 0 ns).
cp d/trace.pptrace d/again.pptrace
run "$P" export d/trace.pptrace d/again.pptrace --to html -o merged.html
expect "export merges two traces into one report" 0 "merged.html"
run "$PY" "$PP_SOURCE_DIR/tests/analyze/html_browser.py" "$CHROMIUM" "$tmp/profile3" \
    merged.html "$artifacts/report_merged.png"
expect "the report of a merged trace renders" 0 "no console errors" \
    "ok   the banner states a merged trace's clock alignment exactly when it is one"
check "the banner gives the error bound" grep -q '"error_ns": 0' merged.html
echo "$out"

# Level 2 adds a span per op: 1500 batches hold more spans than the cap.
run "$P" demo --out big --batches 1500 --level 2
expect "a large demo runs" 0 "big/report.html"
run "$PY" "$PP_SOURCE_DIR/tests/analyze/html_browser.py" "$CHROMIUM" "$tmp/profile2" \
    big/report.html "$artifacts/report_large.png" summarized
expect "a large trace's report renders summarized" 0 "no console errors" \
    "a large trace is summarized beyond the cap"
echo "$out"

finish
