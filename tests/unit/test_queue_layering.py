#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The queue family calls one way: queue.c chooses a backend and calls it,
the backends, the target opener and the write guard never call back into
queue.c or into each other in a circle (queue_backend.h), and the guard
(lib/guard/) decides without calling the queue at all: its decision flows
to the queue, never back. Read from the internal archive with nm: which
object defines a symbol and which uses it; any cycle between the family's
objects, or any use of a queue symbol by a guard object, fails, naming the
symbols. A second check makes sure a cycle is found when there is one."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from hostlib import main  # noqa: E402

ARCHIVE = os.environ["LIBLCLOUD_INTERNAL"]
# object names as meson gives them, with or without a folder prefix
QUEUE = re.compile(r"(^|_)(queue|queue_[a-z]+|hint_map)\.c\.o$")
GUARD = re.compile(r"(^|_)guard_[a-z_]+\.c\.o$")


class _Family:
    """The queue's objects and the guard's."""

    @staticmethod
    def search(member):
        return QUEUE.search(member) or GUARD.search(member)


FAMILY = _Family()


def symbols(archive):
    """{member: defined symbols}, {member: undefined symbols} of ARCHIVE."""
    defined, used = {}, {}
    for flag, table in (("--defined-only", defined), ("--undefined-only", used)):
        out = subprocess.run(["nm", "-A", flag, archive], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            # archive:member:[address] type name (a thin archive names the member by its path)
            m = re.match(r"^[^:]*:([^:]*):\s*(?:[0-9a-f]+\s+)?(\S)\s+(\S+)$", line)
            if not m or (flag == "--defined-only" and m.group(2) not in "TDBR"):
                continue
            table.setdefault(os.path.basename(m.group(1)), set()).add(m.group(3))
    return defined, used


def calls(defined, used):
    """Edges member -> member with the symbols that make them, within the family."""
    owner = {s: m for m, syms in defined.items() if FAMILY.search(m) for s in syms}
    edges = {}
    for m, syms in used.items():
        if not FAMILY.search(m):
            continue
        for s in syms:
            o = owner.get(s)
            if o and o != m:
                edges.setdefault(m, {}).setdefault(o, set()).add(s)
    return edges


def cycles(edges):
    """Every pair or longer circle, as a list of members, found by depth-first search."""
    found, seen = [], set()

    def walk(m, path):
        for o in sorted(edges.get(m, {})):
            if o in path:
                c = path[path.index(o):]
                key = frozenset(c)
                if key not in seen:
                    seen.add(key)
                    found.append(c + [o])
            else:
                walk(o, path + [o])

    for m in sorted(edges):
        walk(m, [m])
    return found


def describe(edges, cycle):
    return " -> ".join("%s (%s)" % (a, ", ".join(sorted(edges[a][b]))) for a, b in zip(cycle, cycle[1:]))


def test_no_call_circles_in_the_queue_family():
    defined, used = symbols(ARCHIVE)
    assert any(FAMILY.search(m) and m.endswith("queue.c.o") for m in defined), sorted(defined)
    edges = calls(defined, used)
    found = cycles(edges)
    assert not found, "\n".join(describe(edges, c) for c in found)


def test_the_guard_never_calls_the_queue():
    defined, used = symbols(ARCHIVE)
    guard = [m for m in defined if GUARD.search(m)]
    assert guard, sorted(defined)
    edges = calls(defined, used)
    back = ["%s -> %s (%s)" % (g, o, ", ".join(sorted(s))) for g in guard for o, s in edges.get(g, {}).items()
            if QUEUE.search(o) and not GUARD.search(o)]
    assert not back, "the guard calls the queue: " + "; ".join(back)
    # and the queue does call the guard (the check above looks at real edges)
    assert any(GUARD.search(o) for m in edges if QUEUE.search(m) for o in edges[m]), edges


def test_a_circle_is_found():
    edges = {"queue.c.o": {"queue_sync.c.o": {"queue_backend_sync"}},
             "queue_sync.c.o": {"queue.c.o": {"queue_fail"}}}
    assert cycles(edges) == [["queue.c.o", "queue_sync.c.o", "queue.c.o"]], cycles(edges)


if __name__ == "__main__":
    main([test_no_call_circles_in_the_queue_family, test_the_guard_never_calls_the_queue, test_a_circle_is_found])
