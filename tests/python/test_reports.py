"""Reports from Python: the text report, torch-style tables, the HTML page,
a report folder and Jupyter's summary, all from the C analyzer."""
import os
import time

import numpy as np
import pytest

import pipeprof
from pipeprof import workloads


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A host stage and a data-parallel stage over the CPU and a simulated
    NPU, at level 2 (op spans), written to a file too."""
    w = workloads.matmul(nodes=128, in_dim=16, out_dim=16, layers=2)

    def prep(x):
        time.sleep(0.001)
        return x
    path = tmp_path_factory.mktemp("reports") / "trace.pptrace"
    with pipeprof.Profiler(path, level=2) as prof:
        pipe = pipeprof.Pipeline([prep, pipeprof.Stage("Embedding", ["cpu", "sim:NPU"], w)])
        pipe.run([w.input(b) for b in range(5)], warmup=1)
    return pipeprof.load(path)


def test_table_is_the_text_report_of_pipeprof_analyze(trace, cli):
    code, out, err = cli("analyze", trace.source, "--exclude-region", "warm up")
    assert code == 0, err
    assert trace.table(exclude_region="warm up") == out
    assert "NPU (simulated)" in out


def test_stage_device_and_op_tables(trace):
    stages = trace.table("stages").splitlines()
    assert stages[1].split()[:2] == ["Stage", "Kind"]
    rows = {line.split()[0]: line.split() for line in stages[3:-1]}
    assert set(rows) == {"prep", "Embedding"}
    assert rows["prep"][1] == "host" and rows["Embedding"][1:3] == ["data", "parallel"]
    assert rows["prep"][2:4] == ["5", "5"]    # host work: each stage span is its exec
    devices = trace.table("devices")
    assert "NPU (simulated)" in devices and "CPU" in devices
    ops = trace.table("ops", row_limit=3).splitlines()
    assert len(ops) == 3 + 3 + 1              # rules, header, 3 rows
    assert any("(simulated)" in line for line in trace.table("ops").splitlines()[3:-1])
    with pytest.raises(ValueError, match="one of stages, devices, ops"):
        trace.table("kernels")


def test_html_and_report_folder(trace, tmp_path):
    page = trace.to_html(tmp_path / "r.html")
    text = open(page).read()
    assert text.startswith("<!DOCTYPE html>") and "Embedding" in text and "simulated" in text
    files = trace.report(tmp_path / "out")
    assert {"summary.txt", "report.json", "report.html", "stages.csv", "trace.pptrace"} <= \
        set(files)
    assert open(tmp_path / "out" / "summary.txt").read() == trace.table()
    assert len(pipeprof.load(tmp_path / "out" / "trace.pptrace").to_dataframe()) == \
        len(trace.to_dataframe())
    with pytest.raises(pipeprof.PipeprofError, match="nowhere"):
        trace.to_html(tmp_path / "nowhere" / "r.html")


def test_notebook_view_is_a_compact_summary(trace):
    view = trace._repr_html_()
    assert view.startswith("<div>") and "<table>" in view
    assert "5 batches" in view and "<td>prep</td>" in view and "<td>Embedding</td>" in view
    empty = pipeprof.Profiler().start()
    assert "no events" in empty.trace()._repr_html_()
    empty.close()
