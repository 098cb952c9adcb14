"""pipeprof.diff from Python (docs/diff.md): the library's comparison as
DataFrames, on runs whose difference is known by construction.

- Two runs of tests/diff/data's simulated pipeline, the second with the
  Embedding device 102.4 us (about 10%) slower per batch: Embedding's p50 is
  significant and about +10%; a saved baseline gives the same figures.
- Two torch.profiler traces of tests/python/torch/cpu_pipeline.py, before
  and after halving GraphPrep's work (6 to 3 layers of the same matmul):
  GraphPrep's time falls significantly, by roughly half, and no other
  stage's median moves by as much. Skipped where torch cannot be installed.
"""
import os
import subprocess

import pytest

import pipeprof
from torch_site import run_traced

DATA = os.path.join(os.environ.get("PP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../..")),
                    "tests", "diff", "data")
CLI = os.environ.get("PP_CLI")
WARM = {"exclude_region": "warm up"}


@pytest.fixture(scope="module")
def sim_runs(tmp_path_factory):
    if not CLI:
        pytest.skip("PP_CLI is not set (run through ctest)")
    tmp = tmp_path_factory.mktemp("diff")
    out = {"tmp": tmp}
    # A burst of load on the machine can slow a whole run, which the
    # comparison rightly calls a change: such a pair is recorded again, up
    # to three times (as tests/diff/test_cli_diff.sh does).
    for _ in range(3):
        for name in ("base", "slow"):
            subprocess.run([CLI, "run", os.path.join(DATA, f"sim_{name}.json"), "--out",
                            str(tmp / name)], check=True, capture_output=True)
            out[name] = tmp / name / "trace.pptrace"
        d = pipeprof.diff(out["base"], out["slow"], **WARM)
        p50, prep = d.figure("stage:Embedding.p50"), d.figure("stage:Prep.p50")
        if p50["significant"] and 0.05 < p50["rel"] < 0.15 and not prep["significant"]:
            break
    return out


def test_slower_stage_as_dataframe(sim_runs):
    d = pipeprof.diff(sim_runs["base"], sim_runs["slow"], **WARM)
    f = d.figures.set_index("key")
    row = f.loc["stage:Embedding.p50"]
    assert bool(row["significant"]) and 0.05 < row["rel"] < 0.15
    assert row["ci_lo"] <= row["rel"] <= row["ci_hi"]
    assert not f.loc["stage:Prep.p50"]["significant"]
    assert {"key", "base", "new", "abs", "rel", "ci_lo", "ci_hi", "p", "significant"} <= set(d.figures.columns)
    assert d.figure("throughput")["higher_is_better"]
    assert any("Embedding" in line for line in d.findings)


def test_baseline_stands_in_for_its_trace(sim_runs):
    baseline = sim_runs["tmp"] / "base.json"
    pipeprof.save_baseline(sim_runs["base"], baseline, **WARM)
    from_trace = pipeprof.diff(sim_runs["base"], sim_runs["slow"], **WARM)
    # the baseline was saved with its window: only the trace takes one
    from_baseline = pipeprof.diff(baseline, sim_runs["slow"], new_window=WARM)
    assert list(from_trace.figures["rel"]) == list(from_baseline.figures["rel"])


def test_runs_without_common_stage_raise(sim_runs, tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"name": "o", "nodes": 64, "edges": 64, "features": 8, "batches": 3, '
                     '"warmup": 0, "stages": [{"name": "Tokenize", "device": "sim:NPU", "out_dim": 8}]}')
    subprocess.run([CLI, "run", str(other), "--out", str(tmp_path / "o")], check=True, capture_output=True)
    with pytest.raises(pipeprof.PipeprofError, match="no stage in common"):
        pipeprof.diff(sim_runs["base"], tmp_path / "o" / "trace.pptrace")


PATTERNS = {"batch_pattern": "^ProfilerStep#(?<batch>[0-9]+)$",
            "stage_pattern": "^(?<stage>Stage[0-9]_[A-Za-z]+)(/batch(?<batch>[0-9]+))?$"}


def halving_found(d):
    """GraphPrep's median fell significantly by roughly half, and no other
    stage's median moved as much."""
    prep = d.figure("stage:Stage1_GraphPrep.p50")
    others = [d.figure(f"stage:{s}.p50")["rel"] for s in ("Stage2_Embedding", "Stage3_Classifier")]
    return (prep["significant"] and -0.75 < prep["rel"] < -0.25
            and all(abs(r) < abs(prep["rel"]) for r in others))


def test_torch_traces_before_and_after_halving_a_stage(tmp_path):
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    # the pipeline computes on the machine's shared cores: a burst of load
    # can slow a whole run, so a pair that does not show the change is
    # recorded again, up to three times
    for _ in range(3):
        run_traced("cpu_pipeline.py", before, 20, 6, cwd=tmp_path)
        run_traced("cpu_pipeline.py", after, 20, 3, cwd=tmp_path)
        d = pipeprof.diff(before, after, **PATTERNS)
        if halving_found(d):
            break
    assert halving_found(d), d.figures.set_index("key")[["base", "new", "rel", "significant"]]
    assert any("Stage1_GraphPrep" in line for line in d.findings)
    # labeled differently: the base without patterns has no stages to compare
    with pytest.raises(pipeprof.PipeprofError, match="--batch-pattern"):
        pipeprof.diff(before, after)
    if CLI:
        new_only = ["--new-batch-pattern", "--new-stage-pattern"]
        p = subprocess.run([CLI, "diff", str(before), str(after),
                            new_only[0], PATTERNS["batch_pattern"], new_only[1], PATTERNS["stage_pattern"]],
                           capture_output=True, text=True)
        assert p.returncode == 2 and "before.json: the trace has no execs" in p.stderr, p.stderr
