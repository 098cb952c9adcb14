"""An unchanged multi-threaded torch program under `pipeprof record`
(tests/python/torch/three_workers.py: three stages on three worker
threads, record_function ranges, no emit_itt): record's sitecustomize
switches torch's ITT annotations on in every thread, so every stage's
ranges are captured, and the trace analyzes into the same stages, batches
and bottleneck as the program's own torch.profiler trace.

torch==2.13.0 comes from tests/python/torch_site.py (skipped with pip's
reason where it cannot be installed)."""
import json
import os
import subprocess
import sys

import pytest

from torch_site import clean_env, run_traced, torch_site

BATCHES = 8
PATTERN = ["--batch-pattern", "^(?<stage>Stage[0-9]_[A-Za-z]+)/batch(?<batch>[0-9]+)$"]
STAGES = ["Stage1_GraphPrep", "Stage2_Embedding", "Stage3_Classifier"]
PROGRAM = os.path.join(os.path.dirname(__file__), "torch", "three_workers.py")


def summary(report):
    counts = {s["name"]: s["bottleneck_count"] for s in report["stages"]}
    return ([s["name"] for s in report["stages"]],
            [(b["batch"], b["complete"]) for b in report["batches"]],
            max(counts, key=counts.get))


def test_unchanged_program_records_every_thread(tmp_path, analyze_json):
    if not os.environ.get("PP_CLI"):
        pytest.skip("PP_CLI is not set (run through ctest)")
    if os.environ.get("PP_SANITIZE") == "address":
        # record injects this build's ITT collector into torch's process,
        # and an ASan-built library needs the ASan runtime loaded first,
        # which a torch process cannot have (clean_env drops the preload)
        pytest.skip("the ASan-built ITT collector cannot load into an uninstrumented torch "
                    "process; the other suites run this test")
    site = torch_site()
    out = tmp_path / "recorded.json"
    env = clean_env(site)
    env.pop("PIPEPROF_LIBRARY", None)  # the program does not use the package
    p = subprocess.run([os.environ["PP_CLI"], "record", "-o", str(out), "--", sys.executable,
                        PROGRAM, str(BATCHES)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    events = json.loads(out.read_text())["traceEvents"]
    by_stage = {}
    for e in events:
        if e["ph"] == "X" and "/batch" in e["name"]:
            by_stage.setdefault(e["name"].split("/")[0], set()).add(e["tid"])
    # every stage's ranges, each from its own worker thread
    assert sorted(by_stage) == STAGES
    assert len({next(iter(t)) for t in by_stage.values()}) == 3
    for s in STAGES:
        n = sum(1 for e in events if e["ph"] == "X" and e["name"].startswith(s + "/batch"))
        assert n == BATCHES, s

    kineto = tmp_path / "torch_profiler.json"
    run_traced("three_workers.py", BATCHES, kineto, cwd=tmp_path)
    recorded, profiled = analyze_json(str(out), *PATTERN), analyze_json(str(kineto), *PATTERN)
    assert summary(recorded) == summary(profiled)
    assert summary(recorded) == (STAGES, [(b, True) for b in range(BATCHES)],
                                 "Stage2_Embedding")
