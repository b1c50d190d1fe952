# SPDX-License-Identifier: LGPL-2.1-or-later
"""ctypes declarations for liblcloud's C ABI (include/lcloud/lcloud.h).

The library is loaded on first use, from (in this order):
  1. the path in the environment variable LCLOUD_LIBRARY,
  2. the library installed with this package (lcloud/_install.py, written by
     `meson install`; absent in the source tree),
  3. whatever ctypes.util.find_library('lcloud') finds,
  4. 'liblcloud.so.0' through the dynamic loader's search path.

Every function used is declared with argtypes and restype: the opaque objects
are c_void_p (never dereferenced here), enums are c_int, uint32_t flags and
uint64_t values have their exact widths.
"""

import ctypes
import ctypes.util
import importlib
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

# enum lcloud_probe_flags
PROBE_NOFOLLOW = 1 << 0
PROBE_NO_SIGNATURES = 1 << 1
PROBE_CONFIRM_ATOMIC = 1 << 3

# enum lcloud_answer
ANSWERS = {0: "no", 1: "untorn", 2: "unknown"}

# enum lcloud_layer_kind
LAYER_KINDS = {
    "filesystem": 1,
    "partition": 2,
    "dm": 3,
    "md": 4,
    "loop": 5,
    "disk": 6,
}

# enum lcloud_fact_type
FACT_U64 = 1
FACT_BOOL = 2
FACT_STRING = 3

# enum lcloud_fact_unit -> name used by the binding (None: a count, flag or text)
FACT_UNITS = {0: None, 1: "bytes", 2: "kib", 3: "sectors"}

# enum lcloud_fact_state -> the strings lcloudctl's JSON uses
FACT_PRESENT = 0
FACT_STATES = {0: "present", 1: "not-provided", 2: "needs-root", 3: "unreadable"}

# int (*lcloud_blockdev_cb)(const char *name, void *userdata)
BLOCKDEV_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)

_vp = ctypes.c_void_p
_cp = ctypes.c_char_p
_int = ctypes.c_int
_uint = ctypes.c_uint
_u32 = ctypes.c_uint32
_u64 = ctypes.c_uint64

# name: (restype, argtypes)
_PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "lcloud_version": (_cp, []),
    "lcloud_ctx_new": (_int, [ctypes.POINTER(_vp)]),
    "lcloud_ctx_free": (None, [_vp]),
    "lcloud_ctx_set_sysroot": (_int, [_vp, _cp]),
    "lcloud_ctx_get_sysroot": (_cp, [_vp]),
    "lcloud_probe_path": (_int, [_vp, _cp, _u32, ctypes.POINTER(_vp)]),
    "lcloud_probe_fd": (_int, [_vp, _int, _u32, ctypes.POINTER(_vp)]),
    "lcloud_probe_blockdev": (_int, [_vp, _cp, _u32, ctypes.POINTER(_vp)]),
    "lcloud_probe_free": (None, [_vp]),
    "lcloud_probe_get_path": (_cp, [_vp]),
    "lcloud_probe_get_resolved_path": (_cp, [_vp]),
    "lcloud_probe_get_target_type": (_int, [_vp]),
    "lcloud_target_type_to_string": (_cp, [_int]),
    "lcloud_probe_get_layer_count": (_uint, [_vp]),
    "lcloud_probe_get_layer": (_vp, [_vp, _uint]),
    "lcloud_probe_get_note_count": (_uint, [_vp]),
    "lcloud_probe_get_note": (_vp, [_vp, _uint]),
    "lcloud_probe_get_u64": (_int, [_vp, _int, _cp, ctypes.POINTER(_u64)]),
    "lcloud_layer_get_kind": (_int, [_vp]),
    "lcloud_layer_kind_to_string": (_cp, [_int]),
    "lcloud_layer_get_name": (_cp, [_vp]),
    "lcloud_layer_get_parent": (_int, [_vp]),
    "lcloud_layer_get_fact_count": (_uint, [_vp]),
    "lcloud_layer_get_fact": (_vp, [_vp, _uint]),
    "lcloud_fact_get_name": (_cp, [_vp]),
    "lcloud_fact_get_type": (_int, [_vp]),
    "lcloud_fact_get_unit": (_int, [_vp]),
    "lcloud_fact_get_state": (_int, [_vp]),
    "lcloud_fact_get_u64": (_u64, [_vp]),
    "lcloud_fact_get_string": (_cp, [_vp]),
    "lcloud_fact_get_source": (_cp, [_vp]),
    "lcloud_fact_get_reason": (_cp, [_vp]),
    "lcloud_note_get_severity": (_int, [_vp]),
    "lcloud_note_severity_to_string": (_cp, [_int]),
    "lcloud_note_get_code": (_cp, [_vp]),
    "lcloud_note_get_layer": (_int, [_vp]),
    "lcloud_note_get_message": (_cp, [_vp]),
    "lcloud_blockdev_foreach": (_int, [_vp, BLOCKDEV_CB, _vp]),
    "lcloud_io_path_to_string": (_cp, [_int]),
    "lcloud_probe_get_verdict": (_vp, [_vp, _int]),
    "lcloud_verdict_get_max_untorn_bytes": (_u64, [_vp]),
    "lcloud_verdict_get_min_untorn_bytes": (_u64, [_vp]),
    "lcloud_verdict_get_alignment": (_u64, [_vp]),
    "lcloud_verdict_get_boundary": (_u64, [_vp]),
    "lcloud_verdict_get_boundary_offset": (_u64, [_vp]),
    "lcloud_verdict_get_reason_count": (_uint, [_vp]),
    "lcloud_verdict_get_reason": (_cp, [_vp, _uint]),
    "lcloud_verdict_get_reason_evidence": (_cp, [_vp, _uint]),
    "lcloud_plan_page_writes": (_int, [_int, _u64, _vp]),
    "lcloud_verdict_get_unknown_reason": (_cp, [_vp]),
    "lcloud_verdict_get_hardware_max_bytes": (_u64, [_vp]),
    "lcloud_verdict_get_merge_gap": (_int, [_vp, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64)]),
    "lcloud_probe_check": (_int, [_vp, _int, _u64, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_size_t]),
    "lcloud_io_path_from_string": (_int, [_cp, ctypes.POINTER(ctypes.c_int)]),
    "lcloud_ctx_get_error": (_cp, [_vp]),
    "lcloud_queue_open": (_int, [_vp, _cp, _u32, _int, _u32, ctypes.POINTER(_vp)]),
    "lcloud_queue_free": (None, [_vp]),
    "lcloud_queue_get_backend": (_int, [_vp]),
    "lcloud_backend_to_string": (_cp, [_int]),
    "lcloud_queue_get_error": (_cp, [_vp]),
    "lcloud_queue_get_probe": (_vp, [_vp]),
    "lcloud_queue_check_storage": (_int, [_vp]),
    "lcloud_queue_prep_write": (_int, [_vp, _vp, _u64, _u64, _vp, _u64]),
    "lcloud_queue_prep_read": (_int, [_vp, _vp, _u64, _u64, _vp, _u64]),
    "lcloud_queue_submit": (_int, [_vp]),
    "lcloud_queue_reap": (_int, [_vp, _vp, _u32, _u32]),
    "lcloud_queue_write": (ctypes.c_int64, [_vp, _vp, _u64, _u64, _vp, ctypes.POINTER(ctypes.c_uint16)]),
    "lcloud_queue_read": (ctypes.c_int64, [_vp, _vp, _u64, _u64, _vp, ctypes.POINTER(ctypes.c_uint16)]),
    "lcloud_queue_describe_hint": (_int, [_vp, _vp, _int, _cp, ctypes.c_size_t]),
    "lcloud_nvme_status_to_string": (_cp, [ctypes.c_uint16]),
    "lcloud_queue_get_placement": (_int, [_vp, _vp, _vp]),
    "lcloud_placement_basis_to_string": (_cp, [_int]),
}

# enum lcloud_backend
BACKENDS = {"auto": 0, "passthrough": 1, "io_uring": 2, "sync": 3}

# enum lcloud_queue_flags
QUEUE_WRITE = 1 << 0
QUEUE_FORCE = 1 << 1
QUEUE_OWN_FILE = 1 << 2

# enum lcloud_write_class, lcloud_read_kind, lcloud_lifetime: names as lcloudctl's options spell them
WRITE_CLASSES = {"none": 0, "data": 1, "metadata": 2, "journal": 3, "background": 4}
READ_KINDS = {"none": 0, "sync": 1, "readahead": 2}
LIFETIMES = {"none": 0, "short": 1, "medium": 2, "long": 3, "extreme": 4}

# enum lcloud_io_flags
IO_ATOMIC = 1 << 0
IO_FUA = 1 << 1

# enum lcloud_placement_basis (LCLOUD_0.5), as lcloud_placement_basis_to_string(3) names them
PLACEMENT_BASES = {0: "not_asked", 1: "by_use", 2: "by_number", 3: "no_handle", 4: "no_placement", 5: "backend",
                   6: "unmapped"}


class HintStruct(ctypes.Structure):
    """struct lcloud_hint"""
    _fields_ = [
        ("write_class", ctypes.c_uint8),
        ("read_kind", ctypes.c_uint8),
        ("lifetime", ctypes.c_uint8),
        ("reserved", ctypes.c_uint8),
        ("flags", ctypes.c_uint32),
        ("group", ctypes.c_uint32),
        ("reserved2", ctypes.c_uint32),
    ]


class PlacementStruct(ctypes.Structure):
    """struct lcloud_placement"""
    _fields_ = [
        ("size", ctypes.c_uint32),
        ("basis", ctypes.c_uint32),
        ("write_stream", ctypes.c_int32),
        ("placement_id", ctypes.c_int32),
        ("handle", ctypes.c_int32),
        ("use", ctypes.c_uint32),
    ]


class CompletionStruct(ctypes.Structure):
    """struct lcloud_completion"""
    _fields_ = [
        ("user_data", ctypes.c_uint64),
        ("result", ctypes.c_int32),
        ("nvme_status", ctypes.c_uint16),
        ("reserved", ctypes.c_uint16),
    ]

# enum lcloud_io_path values of the four paths, in lcloudctl's JSON order
IO_PATHS = {1: "rwf_atomic", 2: "passthrough", 3: "plain_direct", 4: "buffered"}


class PagePlan(ctypes.Structure):
    """struct lcloud_page_plan"""
    _fields_ = [
        ("size", ctypes.c_uint32),
        ("path", ctypes.c_uint32),
        ("open_flags", ctypes.c_uint32),
        ("rwf_flags", ctypes.c_uint32),
        ("alignment", ctypes.c_uint64),
        ("max_untorn_bytes", ctypes.c_uint64),
        ("reason", ctypes.c_char * 512),
    ]

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None


def _installed_library() -> Optional[str]:
    """The path `meson install` wrote beside the package, if it is there."""
    try:
        module = importlib.import_module("._install", __package__)
    except ImportError:
        return None
    path = getattr(module, "LIBRARY", None)
    return path if isinstance(path, str) and os.path.exists(path) else None


def library_name() -> str:
    """The name or path the library is (or would be) loaded from."""
    env = os.environ.get("LCLOUD_LIBRARY")
    if env:
        return env
    return _installed_library() or ctypes.util.find_library("lcloud") or "liblcloud.so.0"


def lib() -> Any:
    """The loaded library with every prototype declared (loaded once).

    Typed Any: its functions are looked up by name at run time.
    """
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            name = library_name()
            try:
                handle = ctypes.CDLL(name)
            except OSError as e:
                raise OSError(
                    "cannot load liblcloud from %r (%s); set LCLOUD_LIBRARY to the "
                    "path of liblcloud.so.0" % (name, e)) from e
            for fname, (restype, argtypes) in _PROTOTYPES.items():
                func = getattr(handle, fname)
                func.restype = restype
                func.argtypes = argtypes
            _lib = handle
    return _lib


def text(value: Optional[bytes]) -> Any:
    """A C string (bytes from ctypes, or None) as a Python str (or None).

    Typed Any, as the library's results are: the callers know which C strings
    may be NULL.

    File names and kernel strings are bytes to the kernel; decode them the way
    os.fsdecode does so that no byte is lost (surrogateescape).
    """
    if value is None:
        return None
    return os.fsdecode(value)
