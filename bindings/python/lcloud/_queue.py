# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hinted, aligned direct I/O: Queue and Hint over lcloud_queue_* (lcloud_queue_open(3)).

O_DIRECT needs the buffer's address aligned (stx_dio_mem_align, 4 bytes on
passthrough), which a bytes object's is not. Every I/O therefore gets its own
anonymous mmap: page aligned, so it meets any alignment Linux asks of direct
I/O memory. A write copies the caller's bytes into it; a read copies what
arrived out of it. The mapping lives until the I/O is reaped.
"""

import ctypes
import errno as _errno
import itertools
import mmap
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Type, Union

from . import _ffi
from ._probe import Probe, StrPath, _cbytes

BytesLike = Union[bytes, bytearray, memoryview]

# the longest line lcloud_queue_describe_hint(3) writes is under 256 bytes
_DESCRIBE_SIZE = 512


@dataclass(frozen=True)
class Hint:
    """What an I/O is for (struct lcloud_hint; lcloud-hints(7)), by the names lcloudctl uses.

    write_class: "none", "data", "metadata", "journal" or "background";
    read_kind: "none", "sync" (a caller waits) or "readahead";
    lifetime: "none", "short", "medium", "long" or "extreme";
    atomic: untorn or refused before submission, never silently torn;
    fua: durable when the I/O completes;
    group: blocks that belong together (an inode, an object), 0 for none.
    """

    write_class: str = "none"
    read_kind: str = "none"
    lifetime: str = "none"
    atomic: bool = False
    fua: bool = False
    group: int = 0

    def __post_init__(self) -> None:
        for what, value, names in (("write class", self.write_class, _ffi.WRITE_CLASSES),
                                   ("read kind", self.read_kind, _ffi.READ_KINDS),
                                   ("lifetime", self.lifetime, _ffi.LIFETIMES)):
            if value not in names:
                raise ValueError("unknown %s %r (one of: %s)" % (what, value, ", ".join(names)))
        if not isinstance(self.group, int) or isinstance(self.group, bool) or not 0 <= self.group < 1 << 32:
            raise ValueError("group %r is not a number from 0 to 4294967295" % (self.group,))

    def _to_c(self) -> _ffi.HintStruct:
        h = _ffi.HintStruct()
        h.write_class = _ffi.WRITE_CLASSES[self.write_class]
        h.read_kind = _ffi.READ_KINDS[self.read_kind]
        h.lifetime = _ffi.LIFETIMES[self.lifetime]
        h.flags = (_ffi.IO_ATOMIC if self.atomic else 0) | (_ffi.IO_FUA if self.fua else 0)
        h.group = self.group
        return h


@dataclass(frozen=True)
class Placement:
    """Where a write with a hint lands on a queue's device, and why (lcloud_queue_get_placement(3)).

    basis: "by_use" (on a handle the device states is for the write's class), "by_number" (the device
    states no uses), "not_asked" (no class, no group), or why it was dropped: "no_handle" (no handle
    is for the class), "no_placement" (no FDP, no write streams here), "backend" (the sync backend
    sends no stream), "unmapped" (the class's handle is not reachable from this namespace), as
    lcloud_placement_basis_to_string(3) names it;
    write_stream: the io_uring write stream (kernel path), None when there is none;
    placement_id: the FDP placement identifier the device receives, None when none or not known;
    handle: the reclaim unit handle behind it, None when none or not known;
    use: what the device states that handle is for ("journal", ...), "none" when it states nothing.
    """

    basis: str
    write_stream: Optional[int]
    placement_id: Optional[int]
    handle: Optional[int]
    use: str

    @property
    def dropped(self) -> bool:
        """A class or group was asked for and lands nowhere."""
        return self.basis not in ("by_use", "by_number", "not_asked")


def _byte_count(value: int, what: str) -> int:
    """An offset or length as the uint64_t the library takes (ctypes would wrap a negative one)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 64:
        raise ValueError("%s %r is not a byte count" % (what, value))
    return value


def _hint_ref(hint: Optional[Hint]) -> Any:
    """A pointer to the C hint, or None (NULL: no hint)."""
    if hint is None:
        return None
    if not isinstance(hint, Hint):
        raise TypeError("hint must be an lcloud.Hint, not %s" % type(hint).__name__)
    return ctypes.byref(hint._to_c())


class _AlignedBuffer:
    """LENGTH bytes of page-aligned memory (an anonymous mmap) for one direct I/O."""

    def __init__(self, length: int) -> None:
        self.length = _byte_count(length, "length")
        # mmap cannot map 0 bytes; the library refuses a 0-byte I/O itself, with its own message
        self._map = mmap.mmap(-1, max(length, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self._view: Optional[ctypes.Array[ctypes.c_char]] = (ctypes.c_char * len(self._map)).from_buffer(self._map)
        self.address = ctypes.addressof(self._view)

    def fill(self, data: BytesLike) -> None:
        view = memoryview(data).cast("B")
        self._map[:len(view)] = view

    def take(self, count: int) -> bytes:
        return self._map[:max(0, min(count, self.length))]

    def close(self) -> None:
        self._view = None  # the mmap cannot close while ctypes still exports it
        self._map.close()


def _short_write_message(done: int, length: int, offset: int) -> str:
    """What lcloudctl write says of an atomic write the kernel cut short (at the file size limit)."""
    return ("only %d of %d bytes were written at offset %d: the write was not one untorn unit; check the file "
            "size limit (ulimit -f) and the free space" % (done, length, offset))


@dataclass(frozen=True)
class Completion:
    """One reaped I/O (struct lcloud_completion).

    user_data: what prep_write/prep_read was given; result: bytes transferred,
    or -errno; nvme_status: the NVMe status on the passthrough backend (0 on
    success and elsewhere); data: the bytes a read brought (None for writes
    and failed reads); length, offset, write and atomic: the I/O as it was
    prepared. ok is False for a failure and for an atomic write the kernel
    cut short, which was not one untorn unit.
    """

    user_data: Any
    result: int
    nvme_status: int
    data: Optional[bytes]
    length: int = 0
    offset: int = 0
    write: bool = False
    atomic: bool = False

    @property
    def ok(self) -> bool:
        return self.error() is None

    def error(self) -> Optional[OSError]:
        """The failure as an OSError (ENOSPC, EIO, ...), or None when the I/O succeeded."""
        if self.result >= 0:
            if self.write and self.atomic and self.result < self.length:
                return OSError(_errno.EIO, _short_write_message(self.result, self.length, self.offset))
            return None
        message = os.strerror(-self.result)
        if self.nvme_status:
            message = "the device failed the command: %s (NVMe status 0x%x)" % (
                _ffi.text(_ffi.lib().lcloud_nvme_status_to_string(self.nvme_status)), self.nvme_status)
        return OSError(-self.result, message)


class _Pending:
    __slots__ = ("user_data", "buffer", "is_read", "offset", "atomic", "submitted")

    def __init__(self, user_data: Any, buffer: _AlignedBuffer, is_read: bool, offset: int, atomic: bool) -> None:
        self.user_data = user_data
        self.buffer = buffer
        self.is_read = is_read
        self.offset = offset
        self.atomic = atomic
        self.submitted = False


class Queue:
    """A file or device opened for hinted, aligned direct I/O (lcloud_queue_open(3)).

    Queue(path, depth=1, backend="auto", write=False, force=False,
    own_file=False), or the same through Queue.open(...). PATH is a regular
    file, a block device or partition, or an NVMe generic node /dev/ngXnY.
    DEPTH is how many I/Os may be in flight (1 to 4096). BACKEND is "auto",
    "passthrough", "io_uring" or "sync". WRITE opens for writing; a block
    device is then claimed with O_EXCL and refused while mounted or in use,
    and while it carries a file system or partition table unless FORCE. A
    regular file that another program has open is refused unless OWN_FILE
    says it is this program's own (a storage engine's data file, which its
    own processes share: LCLOUD_QUEUE_OWN_FILE); without it, anyone who
    opens the file later stops the queue (check_storage()). Failures raise
    OSError with the library's own explanation as strerror.

    Use it as a context manager, or call close(). Buffers are copied into and
    out of page-aligned memory the queue owns (see the module's notes), so
    any bytes-like object can be written.
    """

    def __init__(self, path: StrPath, depth: int = 1, backend: str = "auto", *, write: bool = False,
                 force: bool = False, own_file: bool = False) -> None:
        self._q: Optional[ctypes.c_void_p] = None
        self._pending: Dict[int, _Pending] = {}
        self._tokens = itertools.count(1)
        if backend not in _ffi.BACKENDS:
            raise ValueError("unknown backend %r (one of: %s)" % (backend, ", ".join(_ffi.BACKENDS)))
        if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= 4096:
            raise ValueError("depth %r is not from 1 to 4096" % (depth,))
        self.path: str = os.fsdecode(os.fspath(path))
        self.depth: int = depth
        data = _cbytes(path, "path")
        flags = ((_ffi.QUEUE_WRITE if write else 0) | (_ffi.QUEUE_FORCE if force else 0)
                 | (_ffi.QUEUE_OWN_FILE if own_file else 0))
        lib = _ffi.lib()
        ctx = ctypes.c_void_p()
        r = lib.lcloud_ctx_new(ctypes.byref(ctx))
        if r < 0:
            raise OSError(-r, os.strerror(-r))
        try:
            q = ctypes.c_void_p()
            r = lib.lcloud_queue_open(ctx, data, depth, _ffi.BACKENDS[backend], flags, ctypes.byref(q))
            if r < 0:
                raise OSError(-r, _ffi.text(lib.lcloud_ctx_get_error(ctx)) or os.strerror(-r), self.path)
        finally:
            lib.lcloud_ctx_free(ctx)  # the queue keeps nothing of the context
        self._q = q

    @classmethod
    def open(cls, path: StrPath, depth: int = 1, backend: str = "auto", *, write: bool = False,
             force: bool = False, own_file: bool = False) -> "Queue":
        """The same as Queue(path, depth, backend, write=..., force=..., own_file=...)."""
        return cls(path, depth, backend, write=write, force=force, own_file=own_file)

    def __enter__(self) -> "Queue":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_q", None):
            self.close()

    def __repr__(self) -> str:
        if not self._q:
            return "<lcloud.Queue %r closed>" % self.path
        return "<lcloud.Queue %r via %s>" % (self.path, self.backend)

    def _handle(self) -> ctypes.c_void_p:
        if not self._q:
            raise ValueError("I/O on a closed lcloud.Queue")
        return self._q

    def close(self) -> None:
        """Waits for the I/Os in flight, then frees the queue (and releases a device's claim)."""
        if not self._q:
            return
        lib = _ffi.lib()
        in_flight = sum(1 for p in self._pending.values() if p.submitted)
        if in_flight:
            # the kernel may still be writing into their buffers
            out = (_ffi.CompletionStruct * in_flight)()
            while in_flight > 0:
                r = lib.lcloud_queue_reap(self._q, out, in_flight, in_flight)
                if r <= 0:
                    break
                in_flight -= r
        lib.lcloud_queue_free(self._q)
        self._q = None
        for p in self._pending.values():
            p.buffer.close()
        self._pending.clear()

    @property
    def closed(self) -> bool:
        return not self._q

    @property
    def backend(self) -> str:
        """The backend the queue uses: "passthrough", "io_uring" or "sync"."""
        lib = _ffi.lib()
        return str(_ffi.text(lib.lcloud_backend_to_string(lib.lcloud_queue_get_backend(self._handle()))))

    def probe(self) -> Probe:
        """What the queue found when it opened its target (lcloud_queue_get_probe(3)): its verdict
        decides which writes are atomic. A copy, as lcloud.probe() returns."""
        lib = _ffi.lib()
        return Probe._from_c(lib, lib.lcloud_queue_get_probe(self._handle()))

    @property
    def last_error(self) -> str:
        """Why the last call on this queue failed, for a person; "" when it did not."""
        return str(_ffi.text(_ffi.lib().lcloud_queue_get_error(self._handle())) or "")

    def check_storage(self) -> None:
        """Raises OSError(EBUSY) with the reason once the queue's storage gained another user and the
        queue stopped (lcloud_queue_check_storage(3)); returns None while it is the queue's own. Every
        submission asks this itself; call it while idle, so that a stopped queue lets the new user go on."""
        r = _ffi.lib().lcloud_queue_check_storage(self._handle())
        if r < 0:
            self._raise(r)

    def _raise(self, r: int, status: int = 0) -> None:
        if status:
            message = "the device failed the command: %s (NVMe status 0x%x)" % (
                _ffi.text(_ffi.lib().lcloud_nvme_status_to_string(status)), status)
        else:
            message = self.last_error or os.strerror(-r)
        e = OSError(-r, message, self.path)
        setattr(e, "nvme_status", status)
        raise e

    def write(self, data: BytesLike, offset: int, hint: Optional[Hint] = None) -> int:
        """Writes DATA at byte OFFSET and waits for it (lcloud_queue_write(3)).

        Returns the number of bytes written, which for a plain write may be
        fewer than len(DATA) (at the file size limit, on a full file system),
        as os.write's. An atomic write cut short raises OSError(EIO): it was
        not one untorn unit. Raises OSError when the write is
        refused before submission (EINVAL: misaligned, an atomic write that is
        not untorn here; EOPNOTSUPP: no atomic writes on this path; EBADF: a
        read-only queue; ENOSPC: past the end of a device) or fails; strerror
        says why. On passthrough a failed command's NVMe status is in the
        exception's nvme_status (0 otherwise).
        """
        q = self._handle()
        ref = _hint_ref(hint)
        _byte_count(offset, "offset")
        buf = _AlignedBuffer(memoryview(data).nbytes)
        try:
            buf.fill(data)
            status = ctypes.c_uint16()
            n = int(_ffi.lib().lcloud_queue_write(q, buf.address, buf.length, offset, ref, ctypes.byref(status)))
        finally:
            buf.close()
        if n < 0:
            self._raise(n, status.value)
        if hint is not None and hint.atomic and n < buf.length:
            # the kernel cuts even an RWF_ATOMIC write short at the file size limit: not one untorn unit
            e = OSError(_errno.EIO, _short_write_message(n, buf.length, offset), self.path)
            setattr(e, "nvme_status", 0)
            raise e
        return n

    def read(self, length: int, offset: int, hint: Optional[Hint] = None) -> bytes:
        """Reads LENGTH bytes at byte OFFSET and waits for them (lcloud_queue_read(3)).

        Returns the bytes read: fewer than LENGTH at the end of a file, none
        past it. Raises OSError as write() does.
        """
        q = self._handle()
        ref = _hint_ref(hint)
        _byte_count(offset, "offset")
        buf = _AlignedBuffer(length)
        try:
            status = ctypes.c_uint16()
            n = int(_ffi.lib().lcloud_queue_read(q, buf.address, buf.length, offset, ref, ctypes.byref(status)))
            if n < 0:
                self._raise(n, status.value)
            return buf.take(n)
        finally:
            buf.close()

    def _prep(self, is_read: bool, buf: _AlignedBuffer, offset: int, hint: Optional[Hint], user_data: Any) -> None:
        try:
            q = self._handle()
            ref = _hint_ref(hint)
            _byte_count(offset, "offset")
        except BaseException:
            buf.close()
            raise
        token = next(self._tokens)
        lib = _ffi.lib()
        prep = lib.lcloud_queue_prep_read if is_read else lib.lcloud_queue_prep_write
        r = prep(q, buf.address, buf.length, offset, ref, token)
        if r < 0:
            buf.close()
            self._raise(r)
        self._pending[token] = _Pending(user_data, buf, is_read, offset, hint is not None and hint.atomic)

    def prep_write(self, data: BytesLike, offset: int, hint: Optional[Hint] = None, user_data: Any = None) -> None:
        """Queues a write of DATA at OFFSET (lcloud_queue_prep_write(3)); nothing is sent before submit().

        USER_DATA (any object) comes back in the write's Completion. The same
        refusals as write() raise OSError here, with nothing queued; EAGAIN
        when DEPTH I/Os are already queued or in flight.
        """
        buf = _AlignedBuffer(memoryview(data).nbytes)
        try:
            buf.fill(data)
        except BaseException:
            buf.close()
            raise
        self._prep(False, buf, offset, hint, user_data)

    def prep_read(self, length: int, offset: int, hint: Optional[Hint] = None, user_data: Any = None) -> None:
        """Queues a read of LENGTH bytes at OFFSET (lcloud_queue_prep_read(3)); see prep_write()."""
        self._prep(True, _AlignedBuffer(length), offset, hint, user_data)

    def submit(self) -> int:
        """Submits every queued I/O; returns how many (lcloud_queue_submit(3))."""
        r = int(_ffi.lib().lcloud_queue_submit(self._handle()))
        if r < 0:
            self._raise(r)
        for p in self._pending.values():
            p.submitted = True
        return r

    def _collect(self, out: "ctypes.Array[_ffi.CompletionStruct]", count: int) -> List[Completion]:
        done: List[Completion] = []
        for c in out[:count]:
            p = self._pending.pop(int(c.user_data))
            try:
                data = p.buffer.take(c.result) if p.is_read and c.result >= 0 else None
            finally:
                p.buffer.close()
            done.append(Completion(user_data=p.user_data, result=int(c.result), nvme_status=int(c.nvme_status),
                                   data=data, length=p.buffer.length, offset=p.offset, write=not p.is_read,
                                   atomic=p.atomic))
        return done

    def reap(self, max: Optional[int] = None, min: int = 1) -> List[Completion]:
        """Reaps up to MAX completions (default: the queue's depth), waiting for at least MIN.

        Completions come in the order the I/Os finish; tell them apart by
        user_data. A failed I/O is a Completion with a negative result (or,
        for an atomic write cut short, one below its length), not an
        exception: see Completion.ok and error(). OSError is for the reaping
        itself.
        """
        count = self.depth if max is None else max
        if count < 1 or min < 0 or min > count:
            raise ValueError("reap needs 0 <= min <= max and max >= 1 (min %r, max %r)" % (min, count))
        out = (_ffi.CompletionStruct * count)()
        r = int(_ffi.lib().lcloud_queue_reap(self._handle(), out, count, min))
        if r < 0:
            self._raise(r)
        return self._collect(out, r)

    def placement(self, hint: Optional[Hint] = None) -> Placement:
        """Where a write with HINT lands on this queue's device, and why (lcloud_queue_get_placement(3)):
        the same placement describe_hint() says in words."""
        out = _ffi.PlacementStruct()
        out.size = ctypes.sizeof(out)
        r = _ffi.lib().lcloud_queue_get_placement(self._handle(), _hint_ref(hint), ctypes.byref(out))
        if r < 0:
            raise OSError(-r, os.strerror(-r), self.path)
        uses = {v: k for k, v in _ffi.WRITE_CLASSES.items()}
        basis = _ffi.lib().lcloud_placement_basis_to_string(out.basis)
        return Placement(basis=str(_ffi.text(basis)) if basis else "unknown",
                         write_stream=out.write_stream if out.write_stream >= 0 else None,
                         placement_id=out.placement_id if out.placement_id >= 0 else None,
                         handle=out.handle if out.handle >= 0 else None,
                         use=uses.get(out.use, "unknown"))

    def describe_hint(self, hint: Optional[Hint] = None, write: bool = True) -> str:
        """What HINT becomes on this queue's target for a write (or a read), and what is dropped
        (lcloud_queue_describe_hint(3)): the line lcloudctl write prints after "hints:"."""
        buf = ctypes.create_string_buffer(_DESCRIBE_SIZE)
        r = _ffi.lib().lcloud_queue_describe_hint(self._handle(), _hint_ref(hint), 1 if write else 0, buf, len(buf))
        if r < 0 and r != -_errno.E2BIG:
            raise OSError(-r, os.strerror(-r), self.path)
        return str(_ffi.text(buf.value))
