"""The package builds as a wheel that carries libpipeprof, and that wheel
installs into a fresh venv where `import pipeprof` loads its own library."""
import importlib.util
import os
import subprocess
import sys
import zipfile

import pytest

SOURCE = os.path.join(os.environ.get("PP_SOURCE_DIR", ""), "python")

pytestmark = [
    pytest.mark.skipif(not os.path.isfile(os.path.join(SOURCE, "pyproject.toml")),
                       reason="PP_SOURCE_DIR is not set (run through ctest)"),
    pytest.mark.skipif(importlib.util.find_spec("scikit_build_core") is None,
                       reason="scikit-build-core is not installed (run scripts/setup)"),
    pytest.mark.skipif(bool(os.environ.get("PP_SANITIZE")),
                       reason="builds the plain library: run in the plain suite only"),
]


def test_wheel_carries_the_library_and_imports_in_a_fresh_venv(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PIPEPROF_LIBRARY", "PYTHONPATH", "LD_PRELOAD")}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                    "--quiet", "--disable-pip-version-check", SOURCE, "-w", str(tmp_path)],
                   check=True, env=env)
    (wheel,) = tmp_path.glob("pipeprof-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"pipeprof/libpipeprof.so", "pipeprof/__init__.py", "pipeprof/_lib.py",
            "pipeprof/profiler.py", "pipeprof/trace.py", "pipeprof/openvino.py"} <= names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--no-deps", "--quiet",
                    "--disable-pip-version-check", str(wheel)], check=True, env=env)
    out = subprocess.run([python, "-c", "import pipeprof; print(pipeprof.LIBRARY_PATH)"],
                         check=True, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.stdout.strip() == str(venv / "lib" / f"python{sys.version_info[0]}."
                                     f"{sys.version_info[1]}" / "site-packages" / "pipeprof" /
                                     "libpipeprof.so")
