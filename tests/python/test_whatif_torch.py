"""pipeprof.whatif on a real torch.profiler trace (tests/python/torch/
cpu_pipeline.py, labeled by name patterns as test_torch_trace.py labels it):
no span carries its stage and batch in its own fields, so the model places
each stage instance by its first and last event (the report's stage times'
start_ns / end_ns) and says so in a note; hand-offs, servers and the queue
depth come from those instances. Its replay error is printed and must be
within 5% (the bound the constructed pattern-labeled trace of
tests/whatif/test_whatif.c meets too; here GraphPrep and Classifier share
the main thread and Embedding is data parallel over two workers, which the
instances' hand-offs carry), with the one scenario predicted. torch==2.13.0 comes from torch_site.py; where
it cannot be installed, the test is skipped."""
import pytest

import pipeprof
from torch_site import run_traced

PATTERNS = {"batch_pattern": "^ProfilerStep#(?<batch>[0-9]+)$",
            "stage_pattern": "^(?<stage>Stage[0-9]_[A-Za-z]+)(/batch(?<batch>[0-9]+))?$"}


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("torch") / "cpu_pipeline.json"
    run_traced("cpu_pipeline.py", out, 8, cwd=out.parent)
    return out


REPLAY_BOUND = 0.05


def test_pattern_labeled_trace_replays(trace):
    r = pipeprof.whatif(trace, speedup=["Stage2_Embedding=2"], **PATTERNS)
    print(f"replay error on the torch.profiler trace: throughput "
          f"{100 * r.replay['error']:+.2f}%, cycle {100 * r.replay['cycle_error']:+.2f}%"
          + (f" (refused: {r.replay['reason']})" if r.replay["refused"] else ""))
    print(f"bound: {100 * REPLAY_BOUND:.0f}%")
    assert r.raw["model"]["timed"] is True
    assert any("labeled by patterns" in n and "first and last event" in n for n in r.notes)
    assert list(r.model["stage"]) == ["Stage1_GraphPrep", "Stage2_Embedding", "Stage3_Classifier"]
    assert not r.replay["refused"], r.replay["reason"]
    assert abs(r.replay["error"]) <= REPLAY_BOUND
    assert len(r.scenarios) == 1
