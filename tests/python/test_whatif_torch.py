"""pipeprof.whatif on a real torch.profiler trace (tests/python/torch/
cpu_pipeline.py, labeled by name patterns as test_torch_trace.py labels it):
no span carries its stage and batch in its own fields, so the model is
untimed (stage times alone) and says so; its replay error is printed, and a
replay beyond the 10% bound refuses with that reason. torch==2.13.0 comes
from torch_site.py; where it cannot be installed, the test is skipped."""
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


def test_pattern_labeled_trace_is_modeled_untimed(trace):
    r = pipeprof.whatif(trace, speedup=["Stage2_Embedding=2"], **PATTERNS)
    print(f"replay error on the torch.profiler trace: throughput "
          f"{100 * r.replay['error']:+.2f}%, cycle {100 * r.replay['cycle_error']:+.2f}%"
          + (f" (refused: {r.replay['reason']})" if r.replay["refused"] else ""))
    assert r.raw["model"]["timed"] is False
    assert any("labeled by patterns" in n for n in r.notes)
    assert list(r.model["stage"]) == ["Stage1_GraphPrep", "Stage2_Embedding", "Stage3_Classifier"]
    if r.replay["refused"]:
        assert "labeled by patterns" in r.replay["reason"]
        assert r.scenarios.empty
    else:
        assert abs(r.replay["error"]) <= 0.10
        assert len(r.scenarios) == 1
