#!/usr/bin/env bash
# A full disk, as `ulimit -f` makes one, for every writer: the write fails
# with a message naming the file and "File too large", the command exits 1
# (a failure of the machine), and neither the output nor a FILE.tmp.PID is
# left. Before, SIGXFSZ killed the process mid-write with no message and a
# .tmp behind.
source "$(dirname "$0")/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1
cp "$PP_SOURCE_DIR/tests/analyze/data/pipeline_small.json" small.json
"$P" convert small.json small.pptrace 2>/dev/null
# A trace of 200 KB or so: above every limit below, whatever the format.
"$P" demo --out big >/dev/null 2>&1

# limited BLOCKS CMD...: runs CMD with files limited to BLOCKS KiB.
limited() {
    local blocks=$1
    shift
    run bash -c 'ulimit -f "$0"; exec "$@"' "$blocks" "$@"
}

# nothing_left WHAT FILE: neither FILE nor a FILE.tmp.* exists.
nothing_left() {
    local left
    left=$(ls -d "$2" "$2".tmp.* 2>/dev/null)
    check "$1 leaves nothing behind${left:+ (left: $left)}" test -z "$left"
}

for ext in json pptrace pftrace; do
    limited 4 "$P" convert big/trace.pptrace "out.$ext"
    expect "convert to .$ext past ulimit -f" 1 "pipeprof: out.$ext: write failed: File too large"
    nothing_left "convert to .$ext" "out.$ext"
done
limited 4 "$P" export big/trace.pptrace --to html -o out.html
expect "export --to html past ulimit -f" 1 "out.html: write failed: File too large"
nothing_left "export --to html" out.html
mkdir csv
limited 0 "$P" analyze small.pptrace --csv csv
expect "analyze --csv past ulimit -f" 1 "write failed: File too large"
check "analyze --csv leaves no .tmp" test -z "$(ls csv | grep '\.tmp\.')"
limited 4 "$P" demo --out demo
expect "demo past ulimit -f" 1 "write failed: File too large"
check "demo leaves no .tmp" test -z "$(ls demo 2>/dev/null | grep '\.tmp\.')"

# the exit-time write of a recorded program, in every format (its .pptrace
# is about 2 KiB)
for ext in json pptrace pftrace; do
    limited 1 "$P" record -o "rec.$ext" -- "$PP_BINARY_DIR/examples/record_basic"
    expect "record -o rec.$ext past ulimit -f" 1 "rec.$ext: write failed: File too large" \
        "could not write its trace to rec.$ext (the error is above)"
    # the program does use libpipeprof: asking whether it does misleads
    check "record -o rec.$ext past ulimit -f asks nothing after the real error" \
        test "${out/does it use libpipeprof/}" = "$out"
    nothing_left "record -o rec.$ext" "rec.$ext"
done
# a program the library never came up in is still asked about
run "$P" record -o none.json -- true
expect "record of a program without libpipeprof" 1 "wrote no trace to none.json: does it use libpipeprof, NVTX or ITT?"

# the sweep's raw.jsonl append and its tables
cat >sweep.json <<'EOF'
{"name": "b", "features": 8, "warmup": 0, "iterations": 1,
 "sizes": [{"nodes": 16, "edges": 32}], "devices": ["sim:NPU"],
 "stages": [{"name": "mm", "model": "matmul", "out_dim": 4}]}
EOF
limited 0 "$P" sweep sweep.json --out sw
expect "sweep past ulimit -f" 1 "File too large"
check "sweep leaves no .tmp" test -z "$(ls sw 2>/dev/null | grep '\.tmp\.')"
finish
