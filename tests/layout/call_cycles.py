#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Call circles between source files: file A calls a function defined in
file B and B (directly or through others) calls back into A. Data should
flow one way (probe -> report <- verdict -> queue -> printer), and a circle
is where it does not. Reads the symbol tables of the object files meson
built (nm: defined T/D/B/R symbols and undefined U ones), joins them into a
file graph per program (the library, lcloudctl) and prints every strongly
connected group of more than one file. Exit 1 when there is one.
Usage: call_cycles.py BUILD_DIR"""
import collections
import os
import subprocess
import sys


def objects(build, target_dir):
    for root, _, files in os.walk(os.path.join(build, target_dir)):
        for f in files:
            if f.endswith(".o"):
                yield os.path.join(root, f)


def symbols_of(objs):
    """{object: (defined, used)} from one nm run over all of them (one run per object is slow on a busy machine)."""
    table = {o: (set(), set()) for o in objs}
    if not objs:
        return table
    out = subprocess.run(["nm", "-A"] + list(objs), capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        obj, _, rest = line.partition(":")
        if obj not in table:
            continue
        defined, used = table[obj]
        parts = rest.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return table


def source_name(obj):
    # meson: lib/liblcloud-internal.a.p/verdict_api.c.o, lib/liblcloud-internal.a.p/verdict_..._x.c.o
    name = os.path.basename(obj)[:-2]
    return name.split("_", 1)[1] if name.startswith("..") else name


def circles(objs):
    defs, uses = {}, {}
    owner = {}
    table = symbols_of(list(objs))
    for o, (d, u) in table.items():
        n = source_name(o)
        defs[n], uses[n] = d, u
        for s in d:
            owner.setdefault(s, n)
    graph = collections.defaultdict(set)
    for n, u in uses.items():
        for s in u:
            if s in owner and owner[s] != n:
                graph[n].add(owner[s])
    # Tarjan's strongly connected components
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(defs):
        if v not in index:
            visit(v)
    return out, graph


def main():
    build = sys.argv[1]
    bad = 0
    for label, d in (("lib", os.path.join("lib", "liblcloud-internal.a.p")),
                     ("lab", os.path.join("lib", "liblcloud-lab.a.p")), ("cli", os.path.join("cli", "lcloudctl.p"))):
        objs = list(objects(build, d))
        if not objs:
            print("%s: no objects under %s" % (label, d))
            bad += 1
            continue
        found, graph = circles(objs)
        for comp in found:
            bad += 1
            edges = ["%s -> %s" % (a, b) for a in comp for b in sorted(graph[a]) if b in comp]
            print("%s: call circle between %s: %s" % (label, ", ".join(comp), "; ".join(edges)))
        print("%s: %d files, %d circles" % (label, len(objs), len(found)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
