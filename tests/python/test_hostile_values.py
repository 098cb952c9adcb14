"""Values a Python program can hand the Profiler that C cannot hold, and
failures that must not hide the program's own: an integer annotation
outside int64 is refused (it once wrapped silently: 2**64 + 5 became 5),
and a failing stop() at the end of a `with` block never replaces the
exception that ended the block."""
import pytest

import pipeprof
from pipeprof import PipeprofError

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def annotation_values(path):
    df = pipeprof.load(path).to_dataframe("annotations")
    return dict(zip(df["key"], df["value"]))


@pytest.mark.parametrize("value", [2**64 + 5, 2**70, INT64_MAX + 1, INT64_MIN - 1, -2**64])
def test_int_annotation_outside_int64_is_refused(tmp_path, value):
    with pipeprof.Profiler(tmp_path / "t.pptrace") as prof:
        prof.mark("m")
        with pytest.raises(OverflowError) as e:
            prof.annotate("rows", value)
    message = str(e.value)
    assert "'rows'" in message and str(value) in message
    assert "int64" in message and "str(" in message  # what fits, and what to do
    assert "rows" not in annotation_values(tmp_path / "t.pptrace")  # nothing recorded


def test_int_annotations_at_the_int64_limits_are_kept(tmp_path):
    with pipeprof.Profiler(tmp_path / "t.pptrace") as prof:
        prof.mark("m")
        prof.annotate("max", INT64_MAX)
        prof.annotate("min", INT64_MIN)
        prof.annotate("big_as_text", str(2**64 + 5))
    values = annotation_values(tmp_path / "t.pptrace")
    assert int(values["max"]) == INT64_MAX
    assert int(values["min"]) == INT64_MIN
    assert values["big_as_text"] == str(2**64 + 5)


def test_failing_stop_does_not_replace_the_users_exception(tmp_path):
    # the output's folder does not exist, so stop() fails to write it
    path = tmp_path / "missing" / "t.pptrace"
    with pytest.raises(KeyError) as e:
        with pipeprof.Profiler(path):
            raise KeyError("the program's own error")
    assert e.value.args == ("the program's own error",)
    # the failure of stop is not lost: it is attached as a note
    notes = getattr(e.value, "__notes__", [])
    assert any("Profiler.stop" in n or str(path) in n for n in notes), notes


def test_failing_stop_raises_when_the_block_succeeded(tmp_path):
    path = tmp_path / "missing" / "t.pptrace"
    with pytest.raises(PipeprofError):
        with pipeprof.Profiler(path):
            pass
