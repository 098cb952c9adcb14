#!/usr/bin/env bash
# pipeprof top: its plain-text view of a real program linked with
# libpipeprof (examples/record_basic: 20 batches of a "Prepare" host stage
# and a "Compute" exec on the CPU, so 40 spans and 20 complete cycles), the
# exit status and trace it passes on, every input error, and the live view
# in a real terminal (tmux: the demo pipeline drawn in place, then its
# final view).
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
P=$PP_CLI
BASIC=$PP_BINARY_DIR/examples/record_basic
cd "$tmp" || exit 1

run "$P" top --help
expect "top --help shows usage and examples" 0 "usage: pipeprof top" "examples:" "--demo"

# ---- bad input ----------------------------------------------------------------
run "$P" top
expect "no command is bad input" 2 "top: give a command to watch (pipeprof top -- CMD [ARGS...]) or --demo"
run "$P" top --window 0 -- "$BASIC"
expect "a zero window is refused" 2 'top: --window "0": expected a whole number from 1 to 3600'
run "$P" top --interval fast --demo
expect "a non-numeric interval is refused" 2 'top: --interval "fast": expected a whole number'
run "$P" top --level 3 --demo
expect "a level past 2 is refused" 2 'top: --level "3"'
run "$P" top --colour -- "$BASIC"
expect "an unknown option is refused" 2 "top: unknown option"
run "$P" top --demo -o x.pptrace
expect "--output with --demo is refused" 2 "top: --output is for a watched command"
run "$P" top -- ./no-such-program
expect "a missing command is reported" 2 'top: cannot run "./no-such-program": command not found'

# ---- plain text: stdout is not a terminal ----------------------------------------
run "$P" top --interval 50 -- "$BASIC"
expect "the final view of record_basic" 0 "pipeprof top: $BASIC, finished after" \
    "40 spans received; loss: 0 lost by this view (it lagged), 0 dropped by the program's session" \
    "complete batches" "BUSIEST OPS"
final=$(awk '/finished after/ { f = 1 } f' <<<"$out")
check "the final view has one CPU row with 20 execs" \
    grep -qE '^CPU +[0-9.]+% +[0-9.]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +20$' <<<"$final"
check "both stages ran 20 batches" \
    bash -c 'grep -qE "^Prepare +20 " <<<"$1" && grep -qE "^Compute +20 " <<<"$1"' _ "$final"
check "20 complete cycles, the last one batch 19" grep -q "cycle (longest hold): batch 19 took .* over 20 complete batches" <<<"$final"
check "no terminal escapes in plain text" bash -c '! grep -q $'"'"'\033'"'"' <<<"$1"' _ "$out"

run "$P" top -o trace.pptrace -- "$BASIC"
expect "-o also writes the trace" 0 "finished after"
run "$P" analyze trace.pptrace
expect "the trace top wrote analyzes" 0 "Compute"

run "$P" top -- sh -c 'exit 3'
expect "CMD's exit status is top's, and a program without libpipeprof is named" 3 "no spans arrived"

# ---- a real terminal ------------------------------------------------------------
if ! command -v tmux >/dev/null; then
    skip_part "tmux is not installed (scripts/setup installs it): the terminal view was not checked"
else
    sock=$tmp/tmux.sock
    tmux -S "$sock" new-session -d -x 120 -y 45 \
        "$P top --demo --batches 2000 --interval 200 --window 3600; echo TOP-EXIT=\$?; sleep 120"
    # -J: a line the 120 columns wrapped is read back whole
    pane() { tmux -S "$sock" capture-pane -p -J -t 0; }
    rows=("DEVICES" "CPU " "NPU (simulated)" "GPU (simulated)" "STAGES" "GraphPrep" "Embedding"
          "Classifier" "BUSIEST OPS" "MatMul")
    # The view fills in as its data arrives (ops come after the first
    # cycles): wait for a screen with every row, for up to a minute, and
    # check the last screen seen, which names what never came.
    live="" screen=""
    for _ in $(seq 600); do
        screen=$(pane)
        if [[ $screen == *"running for"* && $screen == *"cycle (longest hold): batch"* ]]; then
            live=$screen
            all=1
            for row in "${rows[@]}"; do
                [[ $screen == *"$row"* ]] || all=0
            done
            ((all)) && break
        fi
        sleep 0.1
    done
    check "the live view appears in the terminal" test -n "$live"
    for row in "${rows[@]}"; do
        check "the live view has the row \"$row\"" grep -qF "$row" <<<"$live"
    done
    check "the view is redrawn in place (one title on the screen)" \
        test "$(grep -c '^pipeprof top:' <<<"$live")" = 1
    done_screen=""
    for _ in $(seq 1200); do
        screen=$(pane)
        if [[ $screen == *"TOP-EXIT="* ]]; then
            done_screen=$screen
            break
        fi
        sleep 0.1
    done
    check "top ends with status 0 after the demo" grep -q "TOP-EXIT=0" <<<"$done_screen"
    check "the final view stays on the screen" grep -q "finished after" <<<"$done_screen"
    # exact when the view kept up; on a loaded machine it may lag, and then
    # it must say how many spans it lost, and count no more batches than ran
    # (the spans it lost need not complete a batch: it may still count all)
    complete=$(grep -o "over [0-9]* complete batches" <<<"$done_screen" | tail -1 | tr -dc 0-9)
    if grep -q "loss: 0 lost by this view" <<<"$done_screen"; then
        check "a window longer than the run holds its 2000 measured and 2 warm-up batches" \
            test "$complete" = 2002
    else
        lost=$(grep -o "loss: [0-9]* lost by this view" <<<"$done_screen" | tail -1 | tr -dc 0-9)
        check "a view that lagged says how many spans it lost ($lost) and counts at most 2002 batches ($complete)" \
            test "${lost:-0}" -gt 0 -a -n "$complete" -a "${complete:-9999}" -le 2002
    fi
    tmux -S "$sock" kill-server 2>/dev/null
fi

finish
