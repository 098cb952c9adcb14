"""The package's ctypes mirrors of C structs are checked against the
library's own sizes when it loads (pp_struct_size), so a field added in a
header and not in the mirror is an ImportError that names the struct,
never calls that read or write past the caller's memory."""
import ctypes

import pytest

from pipeprof import _lib


def test_every_mirror_has_the_librarys_size():
    for name, mirror in _lib.MIRRORS.items():
        assert _lib.pp_struct_size(name.encode()) == ctypes.sizeof(mirror), name


def test_the_library_does_not_know_a_made_up_struct():
    assert _lib.pp_struct_size(b"pp_no_such_struct") == 0


def test_a_mirror_missing_a_field_is_refused():
    class ShortOptions(ctypes.Structure):  # pp_analyze_options without its last field
        _fields_ = _lib.AnalyzeOptions._fields_[:-1]
    with pytest.raises(ImportError) as e:
        _lib.check_mirrors({"pp_analyze_options": ShortOptions,
                            "pp_session_config": _lib.SessionConfig})
    message = str(e.value)
    assert "pp_analyze_options" in message and "pp_session_config" not in message
    assert f"{ctypes.sizeof(_lib.AnalyzeOptions)} in the library" in message
