"""Put first on PYTHONPATH by `pipeprof record` (docs/recording.md,
"Unchanged multi-threaded torch programs"), with its ITT collector attached.

torch's ITT annotations of record_function ranges are switched on per
thread: torch.autograd.profiler.emit_itt() (and _enable_profiler with
ProfilerState.ITT) pushes thread-local RecordFunction callbacks, and torch
2.13's profile_all_threads applies to Kineto only, so a streaming
pipeline's worker threads record nothing. This module, when the program
imports torch, switches ITT on for the importing thread and for each thread
that starts later (on its first Python call: a threading.setprofile hook
that removes itself from that thread). When the program starts a profiler
of its own on a thread (torch.profiler.profile, emit_itt), the one here
steps aside on that thread first, so the program's runs as it would alone.

Then it runs the sitecustomize it shadows, if the path has one."""
import importlib.util
import os
import sys
import threading

_local = threading.local()


def _itt_config():
    from torch.autograd import ProfilerConfig, ProfilerState
    from torch._C._profiler import _ExperimentalConfig
    return ProfilerConfig(ProfilerState.ITT, False, False, False, False, False,
                          _ExperimentalConfig())


def _enable():
    if getattr(_local, "on", False):
        return
    try:
        from torch.autograd import _enable_profiler
        _enable_profiler(_itt_config(), set())
        _local.on = True
    except Exception:  # a profiler of the program's is on this thread: it wins
        pass


def _step_aside():
    if getattr(_local, "on", False):
        _local.on = False
        try:
            from torch.autograd import _disable_profiler
            _disable_profiler()
        except Exception:
            pass


def _first_call(frame, event, arg):
    sys.setprofile(None)
    _enable()


def _wrap(fn):
    def before_the_programs_profiler(*args, **kwargs):
        _step_aside()
        return fn(*args, **kwargs)
    return before_the_programs_profiler


def _torch_loaded():
    prof = sys.modules.get("torch.autograd.profiler")
    for name in ("_enable_profiler", "_prepare_profiler", "_enable_profiler_legacy"):
        fn = getattr(prof, name, None)
        if fn is not None:
            setattr(prof, name, _wrap(fn))
    _enable()
    get = getattr(threading, "getprofile", None)
    if get is None or get() is None:
        threading.setprofile(_first_call)


class _TorchFinder:
    """Finds torch with the other finders, and runs _torch_loaded once its
    module has executed."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                continue
            loader_exec = spec.loader.exec_module

            def exec_module(module, _exec=loader_exec):
                _exec(module)
                try:
                    _torch_loaded()
                except Exception:
                    pass
            spec.loader.exec_module = exec_module
            sys.meta_path[:] = [f for f in sys.meta_path if f is not self]
            return spec
        return None


def _chain():
    """Runs the sitecustomize this one shadows (the next one on the path)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for d in sys.path:
        if os.path.abspath(d or ".") == here:
            continue
        path = os.path.join(d or ".", "sitecustomize.py")
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_pipeprof_shadowed_sitecustomize", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


if os.environ.get("PIPEPROF_OUTPUT") and os.environ.get("INTEL_LIBITTNOTIFY64") \
        and "torch" not in sys.modules:
    sys.meta_path.insert(0, _TorchFinder())
_chain()
