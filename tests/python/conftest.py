"""Shared fixtures: the CLI of this build (to compare with the C analyzer's
own output) and small OpenVINO models built with its Python opset."""
import json
import os
import subprocess

import pytest


@pytest.fixture
def cli():
    """Runs `pipeprof ARGS...` of this build; returns (exit code, stdout, stderr)."""
    path = os.environ.get("PP_CLI")
    if not path:
        pytest.skip("PP_CLI is not set (run through ctest)")

    def run(*args):
        p = subprocess.run([path, *map(str, args)], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr
    return run


@pytest.fixture
def analyze_json(cli):
    """The report of `pipeprof analyze TRACE --json [OPTIONS]`, parsed."""
    def run(trace, *options):
        code, out, err = cli("analyze", trace, "--json", *options)
        assert code == 0, err
        return json.loads(out)
    return run
