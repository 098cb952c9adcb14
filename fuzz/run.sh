#!/usr/bin/env bash
# fuzz/run.sh NAME HARNESS CLI — runs one libFuzzer harness for
# $FUZZ_SECONDS (default 5) and prints one line of figures:
#
#   fuzz NAME: N executions in S s, coverage C edges (F features), corpus K inputs, 0 crashes
#
# Inputs: the seeds (files of tests/ and examples/ that fit the harness,
# gathered into $FUZZ_WORK/NAME/seeds), the regression inputs of
# tests/fuzz/NAME (every crash ever found, run first), and the corpus the
# earlier runs grew ($FUZZ_WORK/NAME/corpus, kept). A crash, leak, timeout
# or out-of-memory fails the run, names the input libFuzzer saved, and says
# where it belongs. CTest runs this as the test fuzz_NAME (fuzz/CMakeLists.txt).
set -uo pipefail
name=$1 harness=$2 cli=$3
: "${PP_SOURCE_DIR:?}" "${FUZZ_WORK:?}"
seconds=${FUZZ_SECONDS:-5}
src=$PP_SOURCE_DIR
work=$FUZZ_WORK/$name
regress=$src/tests/fuzz/$name
mkdir -p "$work/corpus" "$work/artifacts" "$regress"

# ---- seeds, gathered once -----------------------------------------------------
seeds=$work/seeds
traces=("$src"/tests/*/data/*.json)
# A sweep of fuzz/sweep_raw_config.json gives the raw records, the lookup
# table and the .pptrace seeds; simulated devices, a second or so.
sweep_seeds() {
    local out=$FUZZ_WORK/seed-sweep
    [[ -f $out/lookup_table.json ]] ||
        "$cli" sweep "$src/fuzz/sweep_raw_config.json" --out "$out" >/dev/null 2>&1
    echo "$out"
}
if [[ ! -d $seeds ]]; then
    mkdir -p "$seeds.new"
    case $name in
    chrome_json | chrome_gz | report)
        cp "${traces[@]}" "$seeds.new/"
        [[ $name == chrome_gz ]] && for t in "${traces[@]}"; do
            gzip -c "$t" >"$seeds.new/$(basename "$t").gz"
        done
        ;;
    pptrace)
        for t in "${traces[@]}"; do
            "$cli" convert "$t" "$seeds.new/$(basename "$t" .json).pptrace" >/dev/null 2>&1
        done
        cp "$src"/tests/io/data/*.pptrace "$seeds.new/" # older versions, still read
        ;;
    pipeline) cp "$src"/examples/*pipeline*.json "$seeds.new/" ;;
    sweep_config) cp "$src/examples/sweep.json" "$src/fuzz/sweep_raw_config.json" "$seeds.new/" ;;
    lookup) cp "$(sweep_seeds)/lookup_table.json" "$seeds.new/" ;;
    sweep_raw) cp "$(sweep_seeds)/raw.jsonl" "$seeds.new/" ;;
    cli)
        # first byte: the command (fuzz_cli.c's table: 0 analyze, 1 convert,
        # 2 export, 3 plan, 4 sweep), then NUL-separated arguments
        printf '\x00t.json\x00--json\x00--from\x001000\x00--to\x002000' >"$seeds.new/analyze"
        printf '\x01k.json\x00x.pptrace' >"$seeds.new/convert"
        printf '\x02t.json\x00--to\x00html\x00-o\x00r.html\x00--region\x00warm up' >"$seeds.new/export"
        printf '\x03lookup_table.json\x00p.json\x00--top\x003' >"$seeds.new/plan"
        printf '\x04sweep.json\x00--out\x00sw\x00--limit\x001' >"$seeds.new/sweep"
        printf '\x04merge\x00a\x00b\x00--out\x00c' >"$seeds.new/merge"
        ;;
    subrec) # a span record and a STATUS record, laid out as docs/recording.md says
        python3 - "$seeds.new/span_status.subrec" <<'PYEOF'
import struct, sys
rec = struct.Struct("<IBBBBqqqQQQiI64s32s32s32s32s")
span = rec.pack(256, 1, 5, 1, 1, 1000, 3000, 7, 1500, 200, 0, 1, 0, b"matmul_1", b"MatMul",
                b"NPU", b"Embedding", b"req 0")
status = rec.pack(256, 2, 0, 0, 1, 4000, 4000, -1, 3, 2, 1, -1, 0, b"", b"", b"", b"", b"")
open(sys.argv[1], "wb").write(span + status)
PYEOF
        ;;
    *) echo "fuzz/run.sh: no seeds for harness \"$name\"" >&2; exit 1 ;;
    esac
    mv "$seeds.new" "$seeds"
fi

# ---- the run ---------------------------------------------------------------------
case $name in
pptrace) dict=$src/fuzz/dict/pptrace.dict ;;
cli) dict=$src/fuzz/dict/cli.dict ;;
report) # JSON and trace keys, and what the analyzer looks for
    dict=$work/report.dict
    cat "$src/fuzz/dict/json.dict" "$src/fuzz/dict/report.dict" >"$dict"
    ;;
*) dict=$src/fuzz/dict/json.dict ;;
esac
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
      -error_exitcode=1 -timeout_exitcode=1 -dict="$dict"
      -artifact_prefix="$work/artifacts/")
[[ $name == cli ]] && args+=(-close_fd_mask=3)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
log=$work/last.log
start=$SECONDS
"$harness" "${args[@]}" "$work/corpus" "$seeds" "$regress" </dev/null >"$log" 2>&1 &
pid=$!
wait "$pid"
rc=$?
rm -rf /dev/shm/pp-fuzz-*-"$pid" /dev/shm/pp-fuzz-"$pid".* # the harness's scratch files
elapsed=$((SECONDS - start))

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | sed 's/cov: //')
ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -n 1 | sed 's/ft: //')
corpus=$(find "$work/corpus" -type f | wc -l)
if ((rc == 0)); then
    echo "fuzz $name: ${execs:-0} executions in $elapsed s, coverage ${cov:-0} edges (${ft:-0} features), corpus $corpus inputs, 0 crashes"
    exit 0
fi
tail -n 60 "$log"
found=$(ls -t "$work/artifacts" 2>/dev/null | head -n 1)
echo "fuzz $name: FAILED after ${execs:-?} executions (exit $rc; the whole log: $log)"
if [[ -n $found ]]; then
    echo "fuzz $name: the input is $work/artifacts/$found; once fixed, keep it as a regression" \
         "input: cp $work/artifacts/$found $regress/"
fi
exit 1
