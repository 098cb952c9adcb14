"""pipeprof.whatif: the C library's pipeline model, replay and predictions
(docs/whatif.md) as DataFrames. A pipeline of simulated devices is run by
this build's `pipeprof run`; the Python result must be the CLI's
`whatif --json` for the same trace, changes and seeds (one implementation),
and its tables must have the pipeline file's structure."""
import json

import pytest

import pipeprof

PIPELINE = {
    "name": "whatif", "nodes": 1024, "edges": 8192, "features": 64,
    "batches": 60, "warmup": 2, "queue_depth": 2, "seed": 1, "sim_bus_gbps": 1000,
    "sim_devices": [{"name": "A", "launch_ns": 100000, "gflops": 4, "units": 1},
                    {"name": "B", "launch_ns": 100000, "gflops": 6, "units": 1},
                    {"name": "C", "launch_ns": 100000, "gflops": 6, "units": 1}],
    "stages": [{"name": "Prep", "device": "sim:A", "out_dim": 64},
               {"name": "Embed", "devices": ["sim:B", "sim:C"], "split": [1, 1], "out_dim": 64}],
}


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    import os
    import subprocess
    cli = os.environ.get("PP_CLI")
    if not cli:
        pytest.skip("PP_CLI is not set (run through ctest)")
    d = tmp_path_factory.mktemp("whatif")
    (d / "p.json").write_text(json.dumps(PIPELINE))
    p = subprocess.run([cli, "run", d / "p.json", "--out", d / "run"], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    return d / "run" / "trace.pptrace"


def test_whatif_is_the_cli_json(trace, cli):
    r = pipeprof.whatif(trace, exclude_region="warm up", speedup={"Prep": 2},
                        split={"Embed": {"B": 2, "C": 1}}, queue_depth=1, seed=5)
    code, out, err = cli("whatif", trace, "--exclude-region", "warm up", "--json",
                         "--speedup", "Prep=2", "--split", "Embed=B:2,C:1", "--queue-depth", "1",
                         "--seed", "5")
    assert code == 0, err
    assert r.raw == json.loads(out)


def test_whatif_tables(trace):
    r = pipeprof.whatif(str(trace), exclude_region="warm up", speedup=["Prep=2"],
                        requests={"A": 2})
    print(f"replay error: {100 * r.replay['error']:+.2f}%")
    assert set(r.replay) >= {"throughput_per_s", "error", "refused", "reason"}
    assert not r.replay["refused"]
    assert list(r.model["stage"]) == ["Prep", "Embed", "Embed"]
    assert list(r.model["device"]) == ["A (simulated)", "B (simulated)", "C (simulated)"]
    assert list(r.model["share"]) == pytest.approx([1, 0.5, 0.5])
    assert list(r.scenarios["changes"]) == ["Prep 2x faster", "2 requests on A"]
    s = r.scenarios.iloc[0]
    assert s.throughput_lo <= s.throughput_per_s <= s.throughput_hi
    assert list(r.causal["name"])[:2] == ["Prep", "Embed"]
    assert list(r.causal.columns) == ["kind", "name", "1.1x", "1.25x", "1.5x", "2x"]
    assert "replay error" in repr(r)


def test_whatif_bad_change_names_the_stages(trace):
    with pytest.raises(pipeprof.PipeprofError, match=r'stage "Nope" is not in the model '
                                                     r'\(have: Prep, Embed\)'):
        pipeprof.whatif(trace, exclude_region="warm up", speedup={"Nope": 2})
    with pytest.raises(pipeprof.PipeprofError, match="--speedup"):
        pipeprof.whatif(trace, speedup=["Prep=0"])
