# SPDX-License-Identifier: LGPL-2.1-or-later
"""liblcloud for Python: what Linux, the device stack and the file system say
about untorn (atomic) writes and I/O hints for a path, and a queue that sends
hinted, aligned direct I/O and refuses what would not be untorn.

A pure-Python binding over the C ABI of liblcloud.so.0 (ctypes, nothing to
compile). Every probe is copied into plain Python objects at once and the C
probe is freed before the call returns, so the objects here own all their data
and need no closing; a Queue holds a descriptor and is closed (or used as a
context manager).

    >>> import lcloud
    >>> p = lcloud.probe("/var/lib/mysql")
    >>> p.get("filesystem", "stx_atomic_write_unit_max")
    16384
    >>> [(l.kind, l.name) for l in p.layers]
    [('filesystem', 'xfs'), ('partition', 'nvme0n1p1'), ('disk', 'nvme0n1')]
    >>> lcloud.check("/var/lib/mysql", 16384).answer
    'untorn'
    >>> # only in the storage engine that owns the file: another program must not write it
    >>> with lcloud.Queue("/var/lib/mysql/ibdata1", write=True, own_file=True) as q:
    ...     q.write(page, 0, lcloud.Hint(write_class="data", atomic=True))
    16384

Errors from the library (-errno) are raised as OSError(errno, strerror, path),
so FileNotFoundError, PermissionError, ... can be caught directly; a queue's
refusals carry the library's explanation as strerror.
"""

from ._ffi import library_name
from ._probe import (Check, FactValue, Layer, Note, Probe, blockdevs, check, plan_page_writes, probe,
                     probe_blockdev, probe_fd, version)
from ._queue import Completion, Hint, Placement, Queue

__all__ = [
    "Check",
    "Completion",
    "FactValue",
    "Hint",
    "Layer",
    "Note",
    "Placement",
    "Probe",
    "Queue",
    "blockdevs",
    "check",
    "library_name",
    "plan_page_writes",
    "probe",
    "probe_blockdev",
    "probe_fd",
    "version",
]

__version__ = "0.5.0"
