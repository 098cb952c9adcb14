"""Threads named as the user named them, and their real ids kept: a Python
program recorded through ITT (tests/python/threadnames/itt_named.py) names
one thread by threading, renames one after it started and names one with
ITT's __itt_thread_set_name; the trace's rows carry those names and the
threads' OS ids, in the JSON export and in a conversion of it."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("ittapi", reason="ittapi is not installed (run scripts/setup)")

PROGRAM = os.path.join(os.path.dirname(__file__), "threadnames", "itt_named.py")


def record(cli, tmp_path, mode):
    out = tmp_path / ("%s.json" % mode)
    p = subprocess.run([os.environ["PP_CLI"], "record", "-o", str(out), "--", sys.executable,
                        PROGRAM, mode], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    expected = json.loads(p.stdout.strip().splitlines()[-1])
    return out, {int(tid): name for tid, name in expected.items()}


def rows(path):
    """{tid: thread_name} of the export, and the tids its events use."""
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    used = {e["tid"] for e in events if e["ph"] == "X"}
    return names, used


def test_python_and_itt_names_and_real_tids(cli, tmp_path):
    if not os.environ.get("PP_CLI"):
        pytest.skip("PP_CLI is not set (run through ctest)")
    trace, expected = record(cli, tmp_path, "hook")
    names, used = rows(trace)
    assert used == set(expected)  # each thread's spans on its own OS id
    for tid, name in expected.items():
        assert names[tid] == name
    # kept through a conversion and back
    back = tmp_path / "back.json"
    code, _, err = cli("convert", trace, tmp_path / "t.pptrace")
    assert code == 0, err
    code, _, err = cli("convert", tmp_path / "t.pptrace", back)
    assert code == 0, err
    assert rows(back) == (names, used)


def test_itt_name_without_the_package(cli, tmp_path):
    """Without pipeprof imported, ITT's own name still names its thread; the
    others keep their OS name (Python 3.11 leaves it "python")."""
    if not os.environ.get("PP_CLI"):
        pytest.skip("PP_CLI is not set (run through ctest)")
    trace, expected = record(cli, tmp_path, "nohook")
    names, used = rows(trace)
    assert used == set(expected)
    (itt_tid,) = [t for t, n in expected.items() if n == "itt-named"]
    assert names[itt_tid] == "itt-named"
