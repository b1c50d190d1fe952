# SPDX-License-Identifier: LGPL-2.1-or-later
"""The binding's surface: __all__ is exactly the public names, every public
function and method is annotated, Hint maps onto struct lcloud_hint field by
field (offsets as lcloud.h lays them out), and mypy --strict accepts the
package where Debian's mypy is installed."""
import ctypes
import inspect
import os
import shutil
import subprocess
import sys
from typing import Any, get_type_hints

import pytest

import lcloud
from lcloud import _ffi

PACKAGE = os.path.dirname(os.path.abspath(lcloud.__file__))


def test_all_is_exactly_the_public_names() -> None:
    public = {n for n in dir(lcloud) if not n.startswith("_")}
    assert public == set(lcloud.__all__)
    assert len(lcloud.__all__) == len(set(lcloud.__all__))
    for name in ("os", "ctypes", "typing", "Dict", "List", "Optional", "Union", "dataclass", "field"):
        assert name not in public
    for name in lcloud.__all__:
        assert getattr(lcloud, name) is not None


def _annotated(func: Any, what: str) -> None:
    sig = inspect.signature(func)
    hints = get_type_hints(func)
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        assert p.name in hints, "%s: parameter %s has no type" % (what, p.name)
    assert "return" in hints, "%s has no return type" % what


def test_every_public_callable_is_annotated() -> None:
    for name in lcloud.__all__:
        obj = getattr(lcloud, name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in ("__init__", "__enter__", "__exit__"):
                    continue
                if isinstance(member, (classmethod, staticmethod)):
                    member = member.__func__
                if isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member):
                    _annotated(member, "%s.%s" % (name, attr))
        elif inspect.isfunction(obj):
            _annotated(obj, name)
    assert os.path.exists(os.path.join(PACKAGE, "py.typed"))


def test_hint_struct_layout() -> None:
    """struct lcloud_hint: three uint8_t and a reserved one, then flags, group, reserved2 (16 bytes)."""
    s = _ffi.HintStruct
    assert ctypes.sizeof(s) == 16
    assert [(n, getattr(s, n).offset) for n, _ in s._fields_] == [
        ("write_class", 0), ("read_kind", 1), ("lifetime", 2), ("reserved", 3), ("flags", 4), ("group", 8),
        ("reserved2", 12)]
    c = _ffi.CompletionStruct
    assert ctypes.sizeof(c) == 16
    assert (c.user_data.offset, c.result.offset, c.nvme_status.offset) == (0, 8, 12)


def test_placement_struct_layout() -> None:
    """struct lcloud_placement: size, basis, write_stream, placement_id, handle, use (24 bytes), as lcloud.h has
    them; the bases as enum lcloud_placement_basis numbers them."""
    s = _ffi.PlacementStruct
    assert ctypes.sizeof(s) == 24
    assert [(n, getattr(s, n).offset) for n, _ in s._fields_] == [
        ("size", 0), ("basis", 4), ("write_stream", 8), ("placement_id", 12), ("handle", 16), ("use", 20)]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "include", "lcloud",
                           "lcloud.h")) as f:
        header = f.read()
    for value, name in _ffi.PLACEMENT_BASES.items():
        assert "LCLOUD_PLACEMENT_%s = %d," % (name.upper(), value) in header, name
        assert _ffi.text(_ffi.lib().lcloud_placement_basis_to_string(value)) == name


def test_hint_to_struct() -> None:
    h = lcloud.Hint(write_class="journal", lifetime="long", atomic=True, fua=True, group=7)._to_c()
    assert (h.write_class, h.read_kind, h.lifetime, h.flags, h.group) == (3, 0, 3, 3, 7)
    h = lcloud.Hint(read_kind="readahead")._to_c()
    assert (h.write_class, h.read_kind, h.lifetime, h.flags, h.group) == (0, 2, 0, 0, 0)
    assert bytes(lcloud.Hint()._to_c()) == bytes(16)


@pytest.mark.parametrize("kwargs", [{"write_class": "log"}, {"read_kind": "async"}, {"lifetime": "forever"},
                                    {"group": -1}, {"group": 1 << 32}, {"group": True}])
def test_hint_rejects_unknown_values(kwargs: Any) -> None:
    with pytest.raises(ValueError):
        lcloud.Hint(**kwargs)


def test_queue_arguments_checked_before_opening(tmp_path: Any) -> None:
    path = str(tmp_path / "f")
    open(path, "w").close()
    with pytest.raises(ValueError):
        lcloud.Queue(path, backend="aio")
    for depth in (0, 4097):
        with pytest.raises(ValueError):
            lcloud.Queue(path, depth)
    with pytest.raises(FileNotFoundError):
        lcloud.Queue(str(tmp_path / "missing"))


def test_offsets_and_lengths_are_byte_counts(tmp_path: Any) -> None:
    """ctypes would turn -4096 into 2**64 - 4096: refused here, before the library sees it."""
    path = str(tmp_path / "f")
    open(path, "w").close()
    try:
        q = lcloud.Queue(path, write=True)
    except OSError as e:  # tmpfs and the like have no O_DIRECT
        pytest.skip("no direct I/O on the file system of %s: %s" % (tmp_path, e))
    with q:
        for call in (lambda: q.write(bytes(4096), -4096), lambda: q.read(4096, -1), lambda: q.read(-4096, 0),
                     lambda: q.prep_write(bytes(4096), 1 << 64), lambda: q.prep_read(4096, True)):
            with pytest.raises(ValueError):
                call()
        assert q.submit() == 0


def test_mypy_strict() -> None:
    mypy = shutil.which("mypy")
    assert mypy, "mypy missing: install Debian package mypy (scripts/install-deps does)"
    p = subprocess.run([mypy, "--strict", "--no-incremental", "--cache-dir", os.devnull, PACKAGE],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
