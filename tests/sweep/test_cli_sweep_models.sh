#!/usr/bin/env bash
# A sweep of the user's own model files, as docs/sweep.md walks it: an ONNX
# model with two inputs (features and an edge list) and an IR model that
# cannot take an odd node count, swept over three sizes on openvino:CPU and
# on static-shape devices. Per size, a static-shape device gets an exported
# IR file of exactly that size's shapes (read back with OpenVINO); the odd
# size fails with OpenVINO's reason and the stage's fallback is measured and
# labeled; --compat gnx writes the user's table layout, checked key by key
# against the versioned tables; a killed sweep resumes with model files.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

if [[ $("$P" --version) != *openvino* ]]; then
    skip_part "built without OpenVINO: model files cannot be swept"
    finish
fi
if [[ -n ${PP_SANITIZE:-} ]]; then
    skip_part "OpenVINO's TBB dlopens with RTLD_DEEPBIND, which the sanitizers cannot run"
    finish
fi
"$PY" "$PP_SOURCE_DIR/tests/sweep/make_models.py" "$tmp" 16 8 >make.log 2>&1
case $? in
0) ;;
77) skip_part "$(cat make.log)"; finish ;;
*) cat make.log; exit 1 ;;
esac

# openvino:CPU dynamic, and openvino:CPU again under another spec (AUTO
# picks the CPU here) with static shapes; sim:NPU is static by default and
# runs no model file, so its stage falls back.
cat >sweep.json <<'EOF'
{"name": "own", "features": 16, "warmup": 1, "iterations": 3,
 "sizes": [{"nodes": 64, "edges": 256}, {"nodes": 128, "edges": 512}, {"nodes": 255, "edges": 1024}],
 "devices": ["openvino:CPU", {"spec": "openvino:AUTO", "static_shapes": true}, "sim:NPU"],
 "stages": [{"name": "gnn", "model_path": "gnn.onnx", "out_dim": 8,
             "inputs": {"x": ["nodes", "features"], "edge_index": [2, "edges"]}},
            {"name": "pairs", "model_path": "pairs.xml", "out_dim": 8, "fallback": "openvino:CPU",
             "inputs": {"x": ["nodes", "features"]}}]}
EOF

run "$P" sweep sweep.json --out s --compat gnx --pu openvino:AUTO=AUTO
expect "a sweep of model files completes and writes the gnx tables" 0 \
    "18 of 18 combinations recorded" "wrote s/gnx/lookup_table.json and s/gnx/bandwidth_table.json"

"$PY" - s <<'EOF' >check.log 2>&1
import json, os, sys
import openvino as ov
d = sys.argv[1]
lk = json.load(open(d + "/lookup_table.json"))["entries"]
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
sizes = [(64, 256), (128, 512), (255, 1024)]
core = ov.Core()
# the static device: one exported model per size, of exactly that size's shapes
for n, e in sizes:
    path = f"{d}/exported_models/gnn/{n}_{e}.xml"
    want(os.path.exists(path), f"{path} exists")
    m = core.read_model(path)
    shapes = {p.get_any_name(): list(p.get_shape()) for p in m.inputs}
    want(shapes == {"x": [n, 16], "edge_index": [2, e]}, f"{path} inputs {shapes}")
    rec = lk[f"{n},{e},openvino:AUTO,gnn"]
    want(rec["status"] == "ok" and rec["exported"] == f"exported_models/gnn/{n}_{e}.xml",
         f"{n},{e},openvino:AUTO,gnn measured its exported model: {rec}")
    # the dynamic device measures the model file itself, reshaped
    rec = lk[f"{n},{e},openvino:CPU,gnn"]
    want(rec["status"] == "ok" and "exported" not in rec and rec["model"] == "file",
         f"{n},{e},openvino:CPU,gnn measured the file: {rec}")
    # bytes: every input value as 4 bytes, plus the nodes x out_dim output
    want(rec["bytes"] == 4 * (n * 16 + 2 * e) + 4 * n * 8, f"bytes of {n},{e}: {rec['bytes']}")
# 255 nodes cannot be taken two by two: failed with OpenVINO's reason, on
# the dynamic device, on the static one (at export) and on the fallback
rec = lk["255,1024,openvino:CPU,pairs"]
want(rec["status"] == "failed" and "cannot take the size 255 nodes" in rec["reason"]
     and "divide" in rec["reason"], f"odd size fails with the reason: {rec}")
rec = lk["255,1024,openvino:AUTO,pairs"]
want(rec["status"] == "failed" and rec["reason"].startswith("export: ")
     and "; fallback openvino:CPU: " in rec["reason"], f"export fails, then the fallback: {rec}")
want(not os.path.exists(f"{d}/exported_models/pairs/255_1024.xml"), "no file for the failed export")
# sim:NPU runs no model file: each size falls back to openvino:CPU, labeled
for n, e in sizes[:2]:
    rec = lk[f"{n},{e},sim:NPU,pairs"]
    want(rec["status"] == "ok" and rec["measured_on"] == "openvino:CPU"
         and rec["label"] == "openvino:CPU (fallback for sim:NPU)"
         and "runs the dummy models only" in rec["fallback_reason"],
         f"sim:NPU falls back: {rec}")
rec = lk["64,256,sim:NPU,gnn"]
want(rec["status"] == "failed" and rec["simulated"] and "runs the dummy models only" in rec["reason"],
     f"no fallback: failed, labeled simulated: {rec}")
# OpenVINO's CPU plugin reports running means: totals come from the wall
rec = lk["64,256,openvino:CPU,gnn"]
want(rec["hw_running_mean"] is True and rec["total_from"] == "wall"
     and rec["total_ns"] == rec["wall_ns"]["mean"], f"calibrated on wall: {rec}")
print("\n".join(bad) if bad else "all good")
sys.exit(1 if bad else 0)
EOF
run cat check.log
expect "exported models, failures, fallbacks and wall calibration are as built" 0 "all good"

# --compat gnx against the versioned tables, key by key: every ok entry
# and no other, ms = ns / 1e6, std of the total's source; PU names from the
# spec (sim:NPU -> NPU) or --pu; stage N the config's N-th
"$PY" - s <<'EOF' >compat.log 2>&1
import json, sys
d = sys.argv[1]
lk = json.load(open(d + "/lookup_table.json"))["entries"]
bw = json.load(open(d + "/bandwidth_table.json"))["entries"]
glk = json.load(open(d + "/gnx/lookup_table.json"))
gbw = json.load(open(d + "/gnx/bandwidth_table.json"))
pu = {"openvino:CPU": "CPU", "openvino:AUTO": "AUTO", "sim:NPU": "NPU"}
sid = {"gnn": 1, "pairs": 2}
bad = []
want = {}
for e in lk.values():
    if e["status"] != "ok":
        continue
    src = e["hw_ns"] if e["total_from"] == "hw" else e["wall_ns"]
    ms = lambda v: None if v is None else v / 1e6
    want[f"{e['nodes']},{e['edges']},{pu[e['device']]},{sid[e['stage']]}"] = {
        "compute_time": ms(e["compute_ns"]), "transfer_time": ms(e["transfer_ns"]),
        "total_time": ms(e["total_ns"]), "std": src["std"] / 1e6}
if sorted(glk) != sorted(want):
    bad.append(f"lookup keys {sorted(glk)} != {sorted(want)}")
for k, v in want.items():
    for f, x in v.items():
        y = glk.get(k, {}).get(f)
        if (x is None) != (y is None) or (x is not None and abs(x - y) > 1e-12 * max(1, abs(x))):
            bad.append(f"{k}.{f}: {y} != {x}")
wbw = {}
for e in bw.values():
    bps = (e["latency"] or {}).get("bandwidth_bytes_per_s")
    wbw[f"{pu[e['device']]}_stage{sid[e['stage']]}"] = None if bps is None else bps / 1048576
if sorted(gbw) != sorted(wbw):
    bad.append(f"bandwidth keys {sorted(gbw)} != {sorted(wbw)}")
for k, x in wbw.items():
    y = gbw.get(k)
    if (x is None) != (y is None) or (x is not None and abs(x - y) > 1e-9 * abs(x)):
        bad.append(f"{k}: {y} != {x}")
print("\n".join(bad) if bad else "all good")
sys.exit(1 if bad else 0)
EOF
run cat compat.log
expect "the gnx tables match the versioned ones key by key" 0 "all good"

# a plan over the model file: the pipeline's stage runs the same file; 96
# nodes lie between the measured 64 and 128, and sim:NPU's entries, measured
# on its fallback, are no candidate; every plan is listed, since which one is
# best depends on the times measured (the data-parallel parts extrapolate)
cat >pipe.json <<'EOF'
{"name": "own", "nodes": 96, "edges": 384, "features": 16, "batches": 3,
 "stages": [{"name": "pairs", "device": "openvino:CPU", "model_path": "pairs.xml", "out_dim": 8}]}
EOF
run "$P" plan s/lookup_table.json pipe.json --top 11
expect "a model-file stage is planned from its sweep, interpolated by nodes" 0 "#1  cycle" "[interpolated]"
check "no plan runs the model on sim:NPU, which only its fallback measured" \
    test -z "$(grep "sim:NPU" <<<"$out")"
sed 's/"model_path": "pairs.xml", //' pipe.json >pipe_dummy.json
run "$P" plan s/lookup_table.json pipe_dummy.json
expect "a pipeline running a built-in model where the table measured a file is refused" 2 \
    "stage \"pairs\": the table measured file 16->8 x1, the pipeline runs matmul 16->8 x1"

run "$P" sweep merge s --out m --compat gnx --pu openvino:AUTO=CPU
expect "two devices with one PU name are refused" 2 \
    "devices openvino:CPU and openvino:AUTO both have the PU name \"CPU\"; name one with --pu openvino:AUTO=NAME"
run "$P" sweep sweep.json --out s2 --compat gnz
expect "an unknown --compat layout is refused before measuring" 2 \
    "--compat gnz: unknown table layout (have: gnx)"
check "and nothing was measured" test ! -e s2
run "$P" sweep sweep.json --out s2 --pu cpu=HOST
expect "--pu without --compat is refused" 2 "--pu names the PUs of the --compat tables"

# config mistakes name the stage and the key
bad_stage() {
    printf '{"features": 16, "sizes": [{"nodes": 8, "edges": 8}], "devices": ["openvino:CPU"], "stages": [%s]}' "$1" >bad.json
    run "$P" sweep bad.json --out b
}
bad_stage '{"name": "g", "model_path": "missing.onnx", "out_dim": 8, "inputs": {"x": ["nodes", 16]}}'
expect "a missing model file is named" 2 "bad.json: stages[0].model_path: cannot open missing.onnx"
bad_stage '{"name": "g", "model_path": "gnn.onnx", "out_dim": 8}'
expect "a model file needs its inputs" 2 "bad.json: stages[0].inputs: missing"
bad_stage '{"name": "g", "model_path": "gnn.onnx", "out_dim": 8, "inputs": {"x": ["nodes", "feats"]}}'
expect "an unknown dimension name is refused" 2 "bad.json: stages[0].inputs.x[1]: expected a number >= 1 or \"nodes\""
bad_stage '{"name": "g", "model_path": "gnn.onnx", "model": "sage", "out_dim": 8, "inputs": {"x": [1]}}'
expect "model and model_path together are refused" 2 "stages[0].model: a stage runs either a built-in model or model_path"
bad_stage '{"name": "../g", "model_path": "gnn.onnx", "out_dim": 8, "inputs": {"x": [1]}}'
expect "a stage name that would leave exported_models/ is refused" 2 "stages[0].name: names a folder of exported_models/"
bad_stage '{"name": "g", "model": "sage", "out_dim": 8, "fallback": "sim:TPU"}'
expect "an unknown fallback device is refused" 2 "bad.json: fallback \"sim:TPU\": "
bad_stage '{"name": "g", "model_path": "gnn.onnx", "out_dim": 8, "inputs": {"x": ["nodes", "features"]}}'
expect "an input list that is not the model's fails the combination with the reason" 0 "1 failed"
check "the reason names the model's inputs" grep -q "has 2 inputs; the stage describes 1" b/raw.jsonl

# killed mid-way and resumed: the finished combinations are kept, the rest
# measured, and the exported files are there for every size
sed 's/"iterations": 3/"iterations": 400/' sweep.json >slow.json
kill_mid_way k/raw.jsonl 4 18 "$P" sweep slow.json --out k
lines=$killed_lines
check "SIGKILL stopped the model sweep mid-way ($lines of 18 lines)" test "$lines" -ge 1 -a "$lines" -lt 18
run "$P" sweep slow.json --out k --resume
expect "the killed model sweep resumes to the end" 0 "18 of 18 combinations recorded in k ($lines resumed"
check "every size's static model is there after the resume" \
    test -f k/exported_models/gnn/64_256.xml -a -f k/exported_models/gnn/128_512.xml -a -f k/exported_models/gnn/255_1024.xml
cp gnn.onnx gnn.orig && printf 'x' >>gnn.onnx
run "$P" sweep slow.json --out k --resume
expect "a changed model file is another config: the resume is refused" 2 "holds a sweep of another config"
finish
