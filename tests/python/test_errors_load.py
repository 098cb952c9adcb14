"""Reading traces: every failure is a PipeprofError with the C reader's
message (file, position, problem)."""
import pytest

import pipeprof
from pipeprof import PipeprofError


def test_missing_file(tmp_path):
    path = tmp_path / "absent.pptrace"
    with pytest.raises(PipeprofError) as e:
        pipeprof.load(path)
    assert str(path) in str(e.value)


def test_unreadable_json_names_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"traceEvents": [\n{"ph": "X", "ts": 1,, "dur": 2}]}')
    with pytest.raises(PipeprofError) as e:
        pipeprof.load(path)
    assert e.value.code == -6
    assert str(e.value).startswith(f"{path}:2:")


def test_truncated_pptrace_loads_the_rest_with_a_warning(tmp_path):
    path = tmp_path / "t.pptrace"
    with pipeprof.Profiler(path) as prof:
        for _ in range(100):
            with prof.span("s"):
                pass
    data = path.read_bytes()
    cut = tmp_path / "cut.pptrace"
    cut.write_bytes(data[:len(data) - 7])
    with pytest.warns(UserWarning, match="analyzing the rest"):
        trace = pipeprof.load(cut)
    assert trace.meta()["truncated_bytes"] > 0


def test_analysis_errors_carry_the_c_message(tmp_path):
    path = tmp_path / "noexec.pptrace"
    with pipeprof.Profiler(path) as prof:
        with prof.record("warm up"):
            with prof.span("host only"):
                pass
    trace = pipeprof.load(path)
    with pytest.raises(PipeprofError) as e:
        trace.summary()
    assert "exec" in str(e.value)
    with pytest.raises(ValueError, match="unknown table 'nope'"):
        trace.to_dataframe("nope")
