"""Many traces on Dask (docs/fleet.md): a local cluster of 2 worker
processes analyzes 50 traces, each report equal to `pipeprof analyze
--json` of the same file, a trace that cannot be read is reported by name
without failing the others, and the fleet-wide figures are those of all the
traces' rows together."""
import math
import os
import subprocess

import pytest

pytest.importorskip("pyarrow", reason="pyarrow is not installed (pipeprof[fleet])")
pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed "
                                               "(pipeprof[fleet])")

import pipeprof  # noqa: E402

TRACES = 50


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """50 different traces: windows of the demo pipeline's trace, each over
    60% of it, their starts spread over the rest (pipeprof convert --from
    --to keeps the events that overlap the window)."""
    cli = os.environ.get("PP_CLI")
    if not cli:
        pytest.skip("PP_CLI is not set (run through ctest)")
    out = tmp_path_factory.mktemp("fleet")
    subprocess.run([cli, "demo", "--out", str(out), "--batches", "40"], check=True,
                   capture_output=True)
    ts = pipeprof.load(str(out / "trace.pptrace")).to_arrow("events", columns=["ts_ns"])
    ts = ts.column("ts_ns").to_pylist()
    start, span = min(ts), max(ts) - min(ts)
    paths = []
    for i in range(TRACES):
        lo = start + span * 4 * i // (10 * TRACES)
        path = str(out / f"part{i:02d}.pptrace")
        subprocess.run([cli, "convert", str(out / "trace.pptrace"), path, "--from", str(lo),
                        "--to", str(lo + span * 6 // 10)], check=True, capture_output=True)
        paths.append(path)
    return paths


def nearest_rank(values, q):
    values = sorted(values)
    return values[max(1, math.ceil(q * len(values))) - 1]


def test_fifty_traces_on_two_workers_equal_serial_analysis(traces, analyze_json, tmp_path):
    broken = tmp_path / "broken.pptrace"
    broken.write_bytes(b"not a trace at all\n" * 10)
    paths = traces[:25] + [str(broken)] + traces[25:]
    result = pipeprof.fleet.analyze(paths)

    assert list(result.errors) == [str(broken)] and "broken.pptrace" in result.errors[str(broken)]
    serial = {p: analyze_json(p) for p in traces}
    assert result.reports == serial  # every trace, the same report as the CLI's

    # fleet-wide: over every batch of every trace, exact
    times = {}
    for report in serial.values():
        for row in report["stage_times"]:
            times.setdefault(row["stage"], []).append(row["time_ns"])
    stages = result.stages.set_index("stage")
    for stage, values in times.items():
        assert stages.loc[stage, "n"] == len(values)
        assert stages.loc[stage, "p95"] == nearest_rank(values, 0.95)
        assert stages.loc[stage, "max"] == max(values)
        assert stages.loc[stage, "mean"] == sum(values) // len(values)
    counts = {}
    for report in serial.values():
        for s in report["stages"]:
            counts[s["name"]] = counts.get(s["name"], 0) + s["bottleneck_count"]
    assert result.bottleneck == max(counts, key=counts.get)
    assert sorted(result.throughput["trace"]) == sorted(traces)
    assert set(result.tables["stage_times"]["trace"]) == set(traces)


SWEEP = {"name": "tiny", "features": 16,
         "sizes": [{"nodes": 64, "edges": 256}, {"nodes": 128, "edges": 512}],
         "devices": ["cpu", "sim:NPU"],
         "stages": [{"name": "Embedding", "model": "matmul", "out_dim": 8},
                    {"name": "Classifier", "model": "matmul", "out_dim": 4}],
         "warmup": 1, "iterations": 2, "min_time_ms": 0}


def test_fleet_sweep_on_two_workers_has_the_serial_sweeps_keys(tmp_path, cli):
    import json
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(SWEEP))
    code, _, err = cli("sweep", config, "--out", tmp_path / "serial")
    assert code == 0, err
    out = pipeprof.fleet.sweep(str(config), out=str(tmp_path / "fleet"))
    serial = json.loads((tmp_path / "serial" / "lookup_table.json").read_text())
    fleet = json.loads((tmp_path / out / "lookup_table.json").read_text())
    # 2 sizes x 2 devices x 2 stages, every one measured once, by one shard or the other
    assert len(serial["entries"]) == 8
    assert sorted(fleet["entries"]) == sorted(serial["entries"])
    assert fleet["fingerprint"] == serial["fingerprint"]


def test_fleet_sweep_names_a_device_no_worker_has(tmp_path):
    # a simulated device that does not exist: a worker cannot open it (an
    # absent real device, openvino:NPU, would load OpenVINO, which the ASan
    # suite cannot run: docs/python.md, "Tests")
    import json
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(dict(SWEEP, devices=["cpu", "sim:TPU"])))
    with pytest.raises(pipeprof.PipeprofError, match='device .sim:TPU. is not here'):
        pipeprof.fleet.sweep(str(config), out=str(tmp_path / "fleet"), shards=1)
