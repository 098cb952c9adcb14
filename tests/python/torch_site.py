"""PyTorch for the tests that record real torch.profiler traces.

torch is not a package of the project venv (the product never imports it):
the tests install torch==2.13.0 (the CPU build; on these machines pip takes
it from a file on disk) into a folder of their own, .cache/torch-2.13.0 at
the repository root, once, and run the traced programs with that folder on
PYTHONPATH. Where it cannot be installed, the tests are skipped with pip's
reason, never counted as passed."""
import fcntl
import os
import subprocess
import sys

import pytest

VERSION = "2.13.0"


def torch_site():
    """The folder holding torch, installed on first use; skips the test
    with the reason when pip cannot install it."""
    root = os.environ.get("PP_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "../..")
    site = os.path.join(root, ".cache", "torch-" + VERSION)
    os.makedirs(os.path.dirname(site), exist_ok=True)
    # two builds' suites may run at once: one installs, the other waits
    with open(site + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(site, ".complete")):
            p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                                "--disable-pip-version-check", "--no-warn-script-location",
                                "--target", site, "torch==" + VERSION],
                               capture_output=True, text=True, env=clean_env(), timeout=900)
            if p.returncode != 0:
                pytest.skip("torch==%s cannot be installed here: %s"
                            % (VERSION, (p.stderr or p.stdout).strip().splitlines()[-1:]))
            open(os.path.join(site, ".complete"), "w").close()
    return site


def clean_env(site=None):
    """The environment for a torch program: without the sanitizer runtimes
    the ASan suite preloads into pytest, with `site` on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    if site:
        env["PYTHONPATH"] = site
    return env


def run_traced(script, *args, cwd):
    """Runs tests/python/torch/SCRIPT with torch; returns its stdout."""
    site = torch_site()
    path = os.path.join(os.path.dirname(__file__), "torch", script)
    p = subprocess.run([sys.executable, path, *map(str, args)], capture_output=True, text=True,
                       env=clean_env(site), cwd=cwd, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout
