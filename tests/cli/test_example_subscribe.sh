#!/usr/bin/env bash
# examples/subscribe_pipe, the C example of a live subscription, runs and
# receives every exec of the demo pipeline: 4 measured + 2 warm-up batches,
# 5 execs each (GraphPrep 1, Embedding 2, Classifier 2), so 30, none lost.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1
run "$PP_BINARY_DIR/examples/subscribe_pipe" 4
expect "subscribe_pipe receives every exec" 0 "30 execs and" "lost 0, dropped by the session 0" \
    "MatMul" "Transfer"
run "$PP_BINARY_DIR/examples/subscribe_pipe" 0
expect "a bad batch count is refused" 2 "BATCHES must be >= 1"
finish
