#!/usr/bin/env bash
# A .pftrace or Chrome JSON output past what Perfetto opens is written whole
# and warned about (docs/format-perfetto.md, "Size limits"): past the UI
# limit (PIPEPROF_VIEWER_LIMIT_BYTES, 2 GiB by default) the warning says to
# use trace_processor --httpd; at twice the limit (Perfetto's trace
# processor's 4 GiB cap by default), that it does not open at all. The
# command still succeeds, and the file is the same as without a warning.
source "$(dirname "$0")/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1
cp "$PP_SOURCE_DIR/tests/analyze/data/pipeline_small.json" small.json
"$P" convert small.json small.pptrace 2>/dev/null

for ext in json pftrace; do
    run "$P" convert small.pptrace "plain.$ext"
    expect "convert to .$ext under the default limit: no warning" 0 "-> plain.$ext"
    check "convert to .$ext under the default limit: no warning (none printed)" \
        test "${out/warning/}" = "$out"
    size=$(stat -c %s "plain.$ext")

    PIPEPROF_VIEWER_LIMIT_BYTES=$size run "$P" convert small.pptrace "at.$ext"
    check ".$ext of exactly the limit: no warning" test "${out/warning/}" = "$out"

    PIPEPROF_VIEWER_LIMIT_BYTES=$((size - 1)) run "$P" convert small.pptrace "ui.$ext"
    expect ".$ext past the UI limit: warned, with trace_processor --httpd" 0 \
        "pipeprof: warning: ui.$ext is $size bytes, more than the about $((size - 1)) that ui.perfetto.dev opens" \
        "trace_processor --httpd ui.$ext"
    check ".$ext past the UI limit is written whole" cmp -s "plain.$ext" "ui.$ext"

    PIPEPROF_VIEWER_LIMIT_BYTES=$((size / 2)) run "$P" export small.pptrace --to "$ext" -o "tp.$ext"
    expect ".$ext at twice the limit: Perfetto's trace processor does not load it" 0 \
        "pipeprof: warning: tp.$ext is $size bytes: Perfetto's trace processor loads at most $((size / 2 * 2 - 1))" \
        "pipeprof analyze reads it"
    check ".$ext past the trace processor's cap is written whole" cmp -s "plain.$ext" "tp.$ext"
done

PIPEPROF_VIEWER_LIMIT_BYTES=1 run "$P" convert small.json native.pptrace
check "a .pptrace is never warned about (Perfetto does not read it)" \
    test "${out/warning/}" = "$out"
PIPEPROF_VIEWER_LIMIT_BYTES=1 run "$P" record -o rec.pftrace -- "$PP_BINARY_DIR/examples/record_basic"
expect "record -o .pftrace warns too" 0 "pipeprof: warning: rec.pftrace is"
finish
