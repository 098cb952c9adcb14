"""A .pftrace written from Python (the Profiler's output names the format)
decodes with the protobuf package (tests/io/perfetto_check.py) and holds
what was recorded, simulated device labeled; pipeprof.load refuses it with
a message, since pipeprof writes Perfetto traces but does not read them."""
import os
import subprocess
import sys

import pytest

import pipeprof
from pipeprof import PipeprofError, Role

CHECK = os.path.join(os.path.dirname(__file__), "..", "io", "perfetto_check.py")


def test_profiler_writes_a_pftrace(tmp_path):
    path = tmp_path / "trace.pftrace"
    with pipeprof.Profiler(path) as prof:
        track = prof.device_track("NPU", 0, "req 0", simulated=True)
        prof.add_span("embed", 1000, 500, track=track, stage="Embedding", role=Role.EXEC,
                      batch=4, hw_ns=400, xfer_ns=30)
    p = subprocess.run([sys.executable, CHECK, str(path), "--dump"], capture_output=True,
                       text=True)
    if p.returncode == 77:
        pytest.skip(p.stdout.strip())
    assert p.returncode == 0, p.stdout + p.stderr
    assert 'parent="NPU (simulated)"' in p.stdout
    assert ('slice track="req 0 (simulated)" ts=1000 dur=500 name="embed" batch=4 hw_ns=400 '
            'role="exec" stage="Embedding" transfer_ns=30\n') in p.stdout
    with pytest.raises(PipeprofError, match="does not read them"):
        pipeprof.load(path)
