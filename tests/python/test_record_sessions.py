"""One process, two recorders: ITT tasks (through the ITT collector and its
libpipeprof) and the pipeprof package's spans (through the libpipeprof
PIPEPROF_LIBRARY names), under `pipeprof record`
(tests/python/sessions/itt_and_package.py). With one libpipeprof they share
one session; with two copies, record must not report success over a trace
one session replaced (docs/recording.md "One session per process")."""
import json
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("ittapi", reason="ittapi is not installed (run scripts/setup)")

PROGRAM = os.path.join(os.path.dirname(__file__), "sessions", "itt_and_package.py")
BATCHES = 6


def record(out, library):
    env = dict(os.environ, PIPEPROF_LIBRARY=library)
    p = subprocess.run([os.environ["PP_CLI"], "record", "-o", str(out), "--", sys.executable,
                        PROGRAM, str(BATCHES)], capture_output=True, text=True, env=env,
                       timeout=120)
    return p.returncode, json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def counts(path):
    events = json.loads(path.read_text())["traceEvents"]
    itt = sum(1 for e in events if e["ph"] == "X" and e["name"] in ("start", "infer"))
    pkg = sum(1 for e in events if e["ph"] == "X" and e["name"] == "Stage1")
    return {"itt": itt, "package": pkg}


@pytest.fixture
def library():
    lib = os.environ.get("PIPEPROF_LIBRARY")
    if not lib or not os.environ.get("PP_CLI"):
        pytest.skip("PIPEPROF_LIBRARY / PP_CLI are not set (run through ctest)")
    return lib


def test_one_library_one_session_keeps_every_span(library, tmp_path):
    code, made, err = record(tmp_path / "t.json", library)
    assert code == 0, err
    assert counts(tmp_path / "t.json") == made


def test_two_copies_never_pass_for_success(library, tmp_path):
    copy = tmp_path / "copy" / "libpipeprof.so"
    copy.parent.mkdir()
    shutil.copy(os.path.realpath(library), copy)  # another file: a second copy in the process
    code, made, err = record(tmp_path / "t.json", str(copy))
    got = counts(tmp_path / "t.json")
    if got == made:  # every span kept
        assert code == 0, err
    else:  # one session's file replaced the other's: a loud failure naming the loss
        assert code == 1, err
        assert "2 sessions of" in err and "records of the others are lost" in err
