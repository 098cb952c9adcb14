"""python -m pipeprof.demo: the user's first document as a runnable script.
It runs in CI: dummy models, the three stages, the files and the report."""
import os
import subprocess
import sys

import pipeprof

# OpenVINO cannot run under AddressSanitizer (see test_openvino.py): there,
# the demo's CPU work runs on the built-in cpu backend.
ASAN = os.environ.get("PP_SANITIZE") == "address"


def demo(*args):
    p = subprocess.run([sys.executable, "-m", "pipeprof.demo", *map(str, args)],
                       capture_output=True, text=True, env=os.environ, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_demo_streams_three_stages_and_writes_the_report(tmp_path):
    backend = ["--backend", "cpu"] if ASAN else []
    code, out, err = demo("--out", tmp_path, "--batches", 10, *backend)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("demo: 10 batches streaming in ")
    for name in ("trace.json", "trace.pptrace", "summary.txt", "report.html", "stages.csv"):
        assert (tmp_path / name).stat().st_size > 0, name
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[4:7]}
    assert rows == {"GraphPrep": "host", "Embedding": "data", "Classifier": "device"}
    assert "simulated devices: NPU (simulated)" in out
    trace = pipeprof.load(tmp_path / "trace.json")
    report = trace.summary(exclude_region="warm up")
    assert report["cycles"]["batches"] == 10 and report["cycles"]["complete"] == 10
    assert {d["name"]: d["simulated"] for d in report["devices"]}["NPU"] is True


def test_demo_refuses_bad_arguments():
    code, _, err = demo("--batches", 0)
    assert code == 2 and "--batches must be at least 1" in err
