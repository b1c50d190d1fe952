# SPDX-License-Identifier: LGPL-2.1-or-later
"""Probing: probe(), probe_fd(), probe_blockdev(), blockdevs(), check() and
plan_page_writes(), over lcloud_probe_*, lcloud_probe_check and
lcloud_plan_page_writes (the package's docstring says how it works)."""

import ctypes
import errno as _errno
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from . import _ffi

StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
FactValue = Union[int, bool, str, None]


def version() -> str:
    """The version of the loaded liblcloud, e.g. "0.1.0"."""
    return str(_ffi.text(_ffi.lib().lcloud_version()))


def _error(err: int, what: Optional[Union[str, bytes, int]] = None) -> OSError:
    """OSError for a -errno result; the subclass (FileNotFoundError...) follows errno."""
    code = -err
    if what is None:
        return OSError(code, os.strerror(code))
    return OSError(code, os.strerror(code), what)


def _cbytes(value: StrPath, what: str) -> bytes:
    """A str/bytes/PathLike as the C string the library gets; NULs would truncate it."""
    data = os.fsencode(os.fspath(value))
    if b"\0" in data:
        raise ValueError("embedded null byte in %s" % what)
    return data


class _Context:
    """A short-lived lcloud_ctx, freed on exit."""

    def __init__(self, sysroot: Optional[StrPath] = None) -> None:
        self._sysroot = sysroot
        self.ptr = ctypes.c_void_p()

    def __enter__(self) -> ctypes.c_void_p:
        lib = _ffi.lib()
        r = lib.lcloud_ctx_new(ctypes.byref(self.ptr))
        if r < 0:
            raise _error(r)
        if self._sysroot is not None:
            try:
                r = lib.lcloud_ctx_set_sysroot(self.ptr, _cbytes(self._sysroot, "sysroot"))
                if r < 0:
                    raise _error(r, os.fspath(self._sysroot))
            except BaseException:
                self.__exit__(None, None, None)
                raise
        return self.ptr

    def __exit__(self, *exc: object) -> None:
        if self.ptr:
            _ffi.lib().lcloud_ctx_free(self.ptr)
            self.ptr = ctypes.c_void_p()


@dataclass(frozen=True)
class Note:
    """Something the probe found worth saying: a misalignment, a skipped part..."""

    severity: str  # "info", "warning", "needs-root", "error"
    code: str  # short stable identifier, e.g. "partition-misaligned"
    layer: Optional[int]  # index into Probe.layers, None for the probe as a whole
    message: str  # for a person

    def to_dict(self) -> Dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "layer": self.layer,
            "message": self.message,
        }


@dataclass(frozen=True)
class Layer:
    """One layer of the stack: the file system, a partition, dm/md/loop, a disk.

    facts maps each fact's name to its value (int, bool or str), or to None when
    the fact has no value; unavailable then says why ({"state", "reason"}).
    sources says where each fact came from ("statx", "sysfs:queue/...").
    units gives each fact's unit: "bytes", "kib", "sectors" or None.
    """

    kind: str  # "filesystem", "partition", "dm", "md", "loop", "disk"
    name: str  # fs type for a file system, kernel name ("nvme0n1p2") otherwise
    parent: Optional[int]  # index of the layer this one sits under; None for the top
    facts: Dict[str, FactValue] = field(default_factory=dict)
    sources: Dict[str, Optional[str]] = field(default_factory=dict)
    unavailable: Dict[str, Dict[str, Optional[str]]] = field(default_factory=dict)
    units: Dict[str, Optional[str]] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """The layer as lcloudctl probe --format json prints it."""
        return {
            "layer": self.kind,
            "name": self.name,
            "parent": self.parent,
            "facts": dict(self.facts),
            "sources": dict(self.sources),
            "unavailable": {k: dict(v) for k, v in self.unavailable.items()},
        }


def _kind_value(kind: Union[str, int]) -> int:
    if isinstance(kind, int) and not isinstance(kind, bool):
        return kind
    if isinstance(kind, str) and kind in _ffi.LAYER_KINDS:
        return _ffi.LAYER_KINDS[kind]
    raise ValueError("unknown layer kind %r (one of: %s)" % (kind, ", ".join(_ffi.LAYER_KINDS)))


class Probe:
    """Everything liblcloud found for one path or device, copied out of the C probe.

    Attributes: path (as given), resolved_path (canonical, or None for a device
    probed by name or under a sysroot), target ("regular", "directory", "disk",
    "partition", "nvme-generic"), layers (top first), notes.
    """

    __slots__ = ("path", "resolved_path", "target", "layers", "notes", "verdict", "_u64")

    def __init__(self, path: str, resolved_path: Optional[str], target: str, layers: List[Layer],
                 notes: List[Note], u64: Dict[Any, Any], verdict: Optional[Dict[str, Dict[str, Any]]] = None) -> None:
        self.path: str = path
        self.resolved_path: Optional[str] = resolved_path
        self.target: str = target
        self.layers: List[Layer] = layers
        self.notes: List[Note] = notes
        # path name -> {"max_untorn_bytes", "min_untorn_bytes", "alignment", "aligned_to_size",
        #               "above_max" ("no" or "unknown"), "unknown_reason", "boundary_bytes",
        #               "boundary_offset_bytes", "merge_gap_above_bytes", "merge_gap_below_bytes"
        #               (sizes between them are not untorn: merges), "reasons": [{"reason", "evidence"}]}
        self.verdict: Dict[str, Dict[str, Any]] = verdict or {}
        # (kind enum, fact name) -> (rc, value) from lcloud_probe_get_u64
        self._u64 = u64

    @classmethod
    def _from_c(cls, lib: Any, p: ctypes.c_void_p) -> "Probe":
        """Copy every string and number out of the C probe P (which stays owned by the caller)."""
        text = _ffi.text
        layers: List[Layer] = []
        first_of_kind: Dict[int, Any] = {}
        for i in range(lib.lcloud_probe_get_layer_count(p)):
            l = lib.lcloud_probe_get_layer(p, i)
            kind = lib.lcloud_layer_get_kind(l)
            parent = lib.lcloud_layer_get_parent(l)
            facts: Dict[str, FactValue] = {}
            sources: Dict[str, Optional[str]] = {}
            unavailable: Dict[str, Dict[str, Optional[str]]] = {}
            units: Dict[str, Optional[str]] = {}
            for j in range(lib.lcloud_layer_get_fact_count(l)):
                f = lib.lcloud_layer_get_fact(l, j)
                name = text(lib.lcloud_fact_get_name(f))
                state = lib.lcloud_fact_get_state(f)
                ftype = lib.lcloud_fact_get_type(f)
                value: FactValue
                if state != _ffi.FACT_PRESENT:
                    value = None
                elif ftype == _ffi.FACT_BOOL:
                    value = lib.lcloud_fact_get_u64(f) != 0
                elif ftype == _ffi.FACT_STRING:
                    value = text(lib.lcloud_fact_get_string(f))
                else:
                    value = int(lib.lcloud_fact_get_u64(f))
                facts[name] = value
                sources[name] = text(lib.lcloud_fact_get_source(f))
                units[name] = _ffi.FACT_UNITS.get(lib.lcloud_fact_get_unit(f))
                if state != _ffi.FACT_PRESENT:
                    unavailable[name] = {
                        "state": _ffi.FACT_STATES.get(state, "unreadable"),
                        "reason": text(lib.lcloud_fact_get_reason(f)),
                    }
            first_of_kind.setdefault(kind, facts.keys())
            layers.append(Layer(
                kind=text(lib.lcloud_layer_kind_to_string(kind)),
                name=text(lib.lcloud_layer_get_name(l)),
                parent=parent if parent >= 0 else None,
                facts=facts, sources=sources, unavailable=unavailable, units=units))

        notes: List[Note] = []
        for i in range(lib.lcloud_probe_get_note_count(p)):
            n = lib.lcloud_probe_get_note(p, i)
            layer = lib.lcloud_note_get_layer(n)
            notes.append(Note(
                severity=text(lib.lcloud_note_severity_to_string(lib.lcloud_note_get_severity(n))),
                code=text(lib.lcloud_note_get_code(n)),
                layer=layer if layer >= 0 else None,
                message=text(lib.lcloud_note_get_message(n))))

        # lcloud_probe_get_u64 reads only the first layer of a kind, so asking it
        # for every fact of those layers now covers every answer other than
        # -ENOENT; get() then needs no C probe.
        u64: Dict[Any, Any] = {}
        number = ctypes.c_uint64()
        for kind, names in first_of_kind.items():
            for name in names:
                number.value = 0
                r = lib.lcloud_probe_get_u64(p, kind, _cbytes(name, "fact name"), ctypes.byref(number))
                u64[(kind, name)] = (r, int(number.value) if r >= 0 else None)

        verdict: Dict[str, Dict[str, Any]] = {}
        gap_above, gap_below = ctypes.c_uint64(), ctypes.c_uint64()
        for value_, name in _ffi.IO_PATHS.items():
            v = lib.lcloud_probe_get_verdict(p, value_)
            gap_above.value = gap_below.value = 0
            lib.lcloud_verdict_get_merge_gap(v, ctypes.byref(gap_above), ctypes.byref(gap_below))
            align = int(lib.lcloud_verdict_get_alignment(v))
            unknown = text(lib.lcloud_verdict_get_unknown_reason(v))
            verdict[name] = {
                "max_untorn_bytes": int(lib.lcloud_verdict_get_max_untorn_bytes(v)),
                "min_untorn_bytes": int(lib.lcloud_verdict_get_min_untorn_bytes(v)),
                "alignment": align,
                "aligned_to_size": align == 0,
                "above_max": "unknown" if unknown else "no",
                "unknown_reason": unknown or "",
                "hardware_max_bytes": int(lib.lcloud_verdict_get_hardware_max_bytes(v)),
                "boundary_bytes": int(lib.lcloud_verdict_get_boundary(v)),
                "boundary_offset_bytes": int(lib.lcloud_verdict_get_boundary_offset(v)),
                "merge_gap_above_bytes": int(gap_above.value),
                "merge_gap_below_bytes": int(gap_below.value),
                "reasons": [{"reason": text(lib.lcloud_verdict_get_reason(v, i)),
                             "evidence": text(lib.lcloud_verdict_get_reason_evidence(v, i))}
                            for i in range(lib.lcloud_verdict_get_reason_count(v))],
            }

        return cls(
            verdict=verdict,
            path=text(lib.lcloud_probe_get_path(p)),
            resolved_path=text(lib.lcloud_probe_get_resolved_path(p)),
            target=text(lib.lcloud_target_type_to_string(lib.lcloud_probe_get_target_type(p))),
            layers=layers,
            notes=notes,
            u64=u64)

    def layer(self, kind: str) -> Optional[Layer]:
        """The first layer of KIND ("filesystem", "disk", ...), or None."""
        for l in self.layers:
            if l.kind == kind:
                return l
        return None

    def get(self, kind: Union[str, int], name: str) -> Optional[int]:
        """The numeric fact NAME of the first layer of KIND (lcloud_probe_get_u64).

        Returns the value (bool facts as 0 or 1), or None when there is no such
        layer or fact (-ENOENT) or this kernel/device does not provide it
        (-ENODATA). Raises PermissionError when reading it needs privileges
        (-EACCES), OSError(EIO) when it could not be read, OSError(EINVAL) when
        the fact is not a number, ValueError for an unknown KIND.
        """
        k = _kind_value(kind)
        r, value = self._u64.get((k, name), (-_errno.ENOENT, None))
        if r >= 0:
            return int(value)
        if r in (-_errno.ENOENT, -_errno.ENODATA):
            return None
        reason = None
        l = self.layer(kind) if isinstance(kind, str) else None
        if l is not None and name in l.unavailable:
            reason = l.unavailable[name].get("reason")
        msg = "%s: %s fact %r" % (os.strerror(-r), kind, name)
        if r == -_errno.EINVAL:
            msg = "%s: %s fact %r is not a number" % (os.strerror(-r), kind, name)
        if reason:
            msg += " (%s)" % reason
        raise OSError(-r, msg, self.path)

    def to_dict(self) -> Dict[str, Any]:
        """The probe as one element of lcloudctl probe --format json's "probes"."""
        return {
            "path": self.path,
            "resolved_path": self.resolved_path,
            "target": self.target,
            "layers": [l.to_dict() for l in self.layers],
            "notes": [n.to_dict() for n in self.notes],
            "verdict": {k: dict(v) for k, v in self.verdict.items()},
        }

    def __repr__(self) -> str:
        return "<lcloud.Probe %r target=%s layers=%s>" % (
            self.path, self.target, [(l.kind, l.name) for l in self.layers])


def _run_probe(func: Callable[..., int], ctx: ctypes.c_void_p, arg: Union[bytes, int], flags: int,
               what: Union[str, bytes, int]) -> Probe:
    lib = _ffi.lib()
    p = ctypes.c_void_p()
    r = func(ctx, arg, flags, ctypes.byref(p))
    if r < 0:
        raise _error(r, what)
    try:
        return Probe._from_c(lib, p)
    finally:
        lib.lcloud_probe_free(p)


def _flags(follow: bool = True, signatures: bool = True, confirm: bool = False) -> int:
    flags = 0
    if not follow:
        flags |= _ffi.PROBE_NOFOLLOW
    if not signatures:
        flags |= _ffi.PROBE_NO_SIGNATURES
    if confirm:
        flags |= _ffi.PROBE_CONFIRM_ATOMIC
    return flags


def probe(path: StrPath, *, follow: bool = True, signatures: bool = True, confirm: bool = False,
          sysroot: Optional[StrPath] = None) -> Probe:
    """Probe PATH: a file, a directory, a block device, /dev/ngXnY or a symlink to one.

    follow=False refuses a final symlink (OSError ELOOP); signatures=False skips
    reading on-disk signatures (libblkid); confirm=True confirms statx's atomic
    write limits of a file or directory with live RWF_ATOMIC writes to a
    temporary file beside it. Under SYSROOT only /dev/NAME works.
    """
    data = _cbytes(path, "path")
    with _Context(sysroot) as ctx:
        return _run_probe(_ffi.lib().lcloud_probe_path, ctx, data,
                          _flags(follow, signatures, confirm), os.fspath(path))


class Check:
    """lcloud_probe_check(3): the answer for one write size.

    answer is "untorn", "no" or "unknown" (the evidence could not be read:
    treat it as not untorn, and act on why); untorn is True only for "untorn".
    """

    __slots__ = ("answer", "io_path", "why")

    def __init__(self, answer: str, io_path: Optional[str], why: str) -> None:
        self.answer: str = answer
        self.io_path: Optional[str] = io_path
        self.why: str = why

    @property
    def untorn(self) -> bool:
        return self.answer == "untorn"

    def __repr__(self) -> str:
        return "<lcloud.Check %s on %s>" % (self.answer, self.io_path)


def check(path: StrPath, size: int, io_path: str = "best", *, confirm: bool = True,
          sysroot: Optional[StrPath] = None) -> Check:
    """Is an aligned SIZE-byte write to PATH untorn on power loss, on IO_PATH?

    As 'lcloudctl check': on a file or directory, confirm=True (the default)
    confirms the kernel's RWF_ATOMIC limits with live writes to a temporary
    file in the same directory. Raises OSError for a bad path, ValueError for
    a bad size or path name.
    """
    lib = _ffi.lib()
    which = ctypes.c_int()
    if lib.lcloud_io_path_from_string(_cbytes(io_path, "I/O path"), ctypes.byref(which)) < 0:
        raise ValueError("unknown I/O path %r (rwf_atomic, passthrough, plain_direct, buffered, best)" % io_path)
    if size <= 0 or size & (size - 1):
        raise ValueError("size %r is not a power of two" % size)
    data = _cbytes(path, "path")
    with _Context(sysroot) as ctx:
        p = ctypes.c_void_p()
        r = lib.lcloud_probe_path(ctx, data, _flags(True, False, confirm), ctypes.byref(p))
        if r < 0:
            raise _error(r, os.fspath(path))
        try:
            decided = ctypes.c_int()
            why = ctypes.create_string_buffer(1024)
            r = lib.lcloud_probe_check(p, which.value, size, ctypes.byref(decided), why, len(why))
        finally:
            lib.lcloud_probe_free(p)
    if r < 0:
        raise _error(r, os.fspath(path))
    return Check(_ffi.ANSWERS[r], _ffi.IO_PATHS.get(decided.value), _ffi.text(why.value))


def probe_fd(fd: int, *, signatures: bool = True) -> Probe:
    """Probe an open file descriptor (O_PATH is enough); the live system only."""
    fd = int(fd)
    with _Context() as ctx:
        return _run_probe(_ffi.lib().lcloud_probe_fd, ctx, fd, _flags(True, signatures), fd)


def probe_blockdev(name: StrPath, sysroot: Optional[StrPath] = None, *, signatures: bool = True) -> Probe:
    """Probe a block device by its kernel name ("sda1", "dm-0"); works under a sysroot."""
    data = _cbytes(name, "device name")
    with _Context(sysroot) as ctx:
        return _run_probe(_ffi.lib().lcloud_probe_blockdev, ctx, data,
                          _flags(True, signatures), os.fspath(name))


def blockdevs(sysroot: Optional[StrPath] = None) -> List[str]:
    """Kernel names of every block device (disks, then their partitions)."""
    names: List[str] = []
    failure: List[BaseException] = []

    def collect(name: bytes, userdata: Optional[int]) -> int:
        try:
            names.append(_ffi.text(name))
            return 0
        except BaseException as e:  # never let an exception unwind through C
            failure.append(e)
            return 1

    callback = _ffi.BLOCKDEV_CB(collect)  # referenced until foreach returns
    with _Context(sysroot) as ctx:
        r = _ffi.lib().lcloud_blockdev_foreach(ctx, callback, None)
    if failure:
        raise failure[0]
    if r < 0:
        raise _error(r, os.fspath(sysroot) if sysroot is not None else "/sys/class/block")
    return names


def plan_page_writes(fd: int, page_size: int) -> Dict[str, Any]:
    """lcloud_plan_page_writes(3): how to write PAGE_SIZE-byte pages to open file FD untorn.

    Returns {"untorn", "path", "open_flags", "rwf_flags", "alignment",
    "max_untorn_bytes", "reason"}; raises OSError on failure.
    """
    lib = _ffi.lib()
    plan = _ffi.PagePlan()
    plan.size = ctypes.sizeof(plan)
    r = lib.lcloud_plan_page_writes(fd, page_size, ctypes.byref(plan))
    if r < 0:
        raise _error(r, "fd %d" % fd)
    return {
        "untorn": r == 1,
        "path": _ffi.IO_PATHS.get(plan.path),
        "open_flags": plan.open_flags,
        "rwf_flags": plan.rwf_flags,
        "alignment": plan.alignment,
        "max_untorn_bytes": plan.max_untorn_bytes,
        "reason": _ffi.text(plan.reason),  # ctypes gives a char array as bytes
    }
