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


def test_two_copies_write_two_files_that_record_merges(library, tmp_path):
    copy = tmp_path / "copy" / "libpipeprof.so"
    copy.parent.mkdir()
    shutil.copy(os.path.realpath(library), copy)  # another file: a second copy in the process
    for name in ("t.json", "t.pptrace"):
        code, made, err = record(tmp_path / name, str(copy))
        assert code == 0, err
        assert "merged the traces of 2 copies of libpipeprof in one process" in err
        out = tmp_path / name
        if name.endswith(".pptrace"):  # read back through the CLI's JSON export
            code2 = subprocess.run([os.environ["PP_CLI"], "convert", str(out),
                                    str(tmp_path / "back.json")], capture_output=True).returncode
            assert code2 == 0
            out = tmp_path / "back.json"
        assert counts(out) == made
        assert not list(tmp_path.glob("t.copy*"))  # the part is merged and gone


def test_two_processes_replacing_one_file_fail_loudly(library, tmp_path):
    """Two processes with one output name and no %p: the second's file
    replaces the first's; record says so and exits 1."""
    out = tmp_path / "t.json"
    env = dict(os.environ, PIPEPROF_LIBRARY=library)
    run = f"{sys.executable} {PROGRAM} {BATCHES}"
    p = subprocess.run([os.environ["PP_CLI"], "record", "-o", str(out), "--", "sh", "-c",
                        f"{run} && {run}"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "2 sessions of sh wrote" in p.stderr
    assert "records of the others are lost" in p.stderr
    assert "need %p" in p.stderr
