#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real JSON output of lcloudctl probe, list, check, advise, torture verify and write,
over the captured sysfs trees (--sysroot) and this host's files and devices,
validates against cli/lcloudctl.schema.json (the file meson installs under
share/lcloud/, as test_installed checks) with python3-jsonschema; the schema
pins one type per key; a document broken the way a careless change would
break it is refused; every JSON document carries "schema": 1."""
import copy
import json
import os

from hostlib import lcloudctl, main, mounted_fs, need_root, scratch_dir
from schemalib import DOCS, PART, SCHEMA
import schemalib

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "unit", "fixtures")
LIB = os.path.join(HERE, "..", "..", "lib")
seen = {d: 0 for d in DOCS}


def validate(kind, doc, where):
    schemalib.validate(kind, doc, where)
    seen[kind] += 1


def json_of(kind, *args, codes=(0,)):
    p = lcloudctl(*args)
    if kind == "check" and p.returncode == 2 and "is larger than" in p.stderr:
        return None  # a device smaller than the write: a usage error, no document
    assert p.returncode in codes, (args, p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    validate(kind, doc, " ".join(args))
    return doc


def fixture_roots():
    return [os.path.join(FIXTURES, d) for d in sorted(os.listdir(FIXTURES))
            if os.path.isdir(os.path.join(FIXTURES, d, "sys", "class", "block"))]


def test_schema_pins_one_type_per_key():
    """No "string or number": a type list is one type and, where the code emits it, null."""
    def walk(node, path):
        if isinstance(node, dict):
            t = node.get("type")
            if isinstance(t, list):
                assert len(t) == 2 and "null" in t, (path, t)
            if "enum" in node:
                kinds = {type(v).__name__ for v in node["enum"] if v is not None}
                assert len(kinds) == 1, (path, node["enum"])
            for k, v in node.items():
                walk(v, path + [k])
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + [i])
    walk(SCHEMA, [])


def test_every_fact_the_library_adds_is_declared():
    """A fact added to the catalogue (lib/core/facts.def) without its type in the schema fails here, even if no
    test output shows it; a family (dm_target_N) needs a pattern that takes its members."""
    import re
    node = SCHEMA["$defs"]["layer"]["properties"]["facts"]
    facts, patterns = node["properties"], node.get("patternProperties", {})
    want = {"U64": "integer", "BOOL": "boolean", "STRING": "string"}
    problems, n = [], 0
    with open(os.path.join(LIB, "core", "facts.def")) as f:
        for m in re.finditer(r'^FACT\(\w+, "([a-z0-9_A-Z]+)", (U64|BOOL|STRING),', f.read(), re.M):
            name, typ = m.group(1), want[m.group(2)]
            n += 1
            family = re.match(r"(.*_)(N|MEMBER)$", name)
            if family:
                member = family.group(1) + ("0" if family.group(2) == "N" else "sda1")
                types = [v["type"] for k, v in patterns.items() if re.search(k, member)]
                if not types:
                    problems.append("family %s has no pattern in the schema" % name)
                elif types[0] != [typ, "null"]:
                    problems.append("family %s is %s, the schema says %s" % (name, typ, types[0]))
            elif name not in facts:
                problems.append("fact %s is not in the schema" % name)
            elif facts[name]["type"] != [typ, "null"]:
                problems.append("fact %s is %s, the schema says %s" % (name, typ, facts[name]["type"]))
    assert n > 50, "the catalogue's facts were not found (%d)" % n
    assert not problems, "\n".join(problems)


def test_captured_trees():
    for root in fixture_roots():
        devices = sorted(os.listdir(os.path.join(root, "sys", "class", "block")))
        for dev in devices:
            # probe exits 0, or 8 where part of the tree is unreadable on purpose (malformed)
            json_of("probe", "--sysroot", root, "probe", "--format", "json", "/dev/" + dev, codes=(0, 1, 3, 5, 8))
            json_of("check", "--sysroot", root, "check", "--format", "json", "/dev/" + dev, "--size", "4K",
                    codes=(0, 6, 8))
            # advise needs room for a page: an unbound loop device (size 0) is a usage error there; a
            # namespace Linux left at size 0 for its interleaved metadata (nvme-crafted nvme9n1) has an answer
            with open(os.path.join(root, "sys", "class", "block", dev, "size")) as f:
                empty = f.read().strip() == "0" and not (root.endswith("nvme-crafted") and dev == "nvme9n1")
            if empty:
                p = lcloudctl("--sysroot", root, "advise", "--format", "json", "--db", "mysql", "/dev/" + dev)
                assert p.returncode == 2 and "larger than" in p.stderr, (dev, p.returncode, p.stderr)
                continue
            json_of("advise", "--sysroot", root, "advise", "--format", "json", "--db", "mysql", "/dev/" + dev,
                    codes=(0, 8))
        json_of("list", "--sysroot", root, "list", "-O", "-J", "--size", "16K", "--all", codes=(0, 1))
        json_of("list", "--sysroot", root, "list", "--tree", "--format", "json", codes=(0, 1))
        # the global -o before the command is the format too
        json_of("list", "--sysroot", root, "--format", "json", "list", "-o", "NAME,SIZE", "-b", codes=(0, 1))
        json_of("list", "--sysroot", root, "list", "-J", devices[0], "nosuchdevice", codes=(3,))


def test_live_host():
    need_root()
    with mounted_fs("xfs") as (dev, mnt):
        data = os.path.join(mnt, "data")
        with open(data, "wb") as f:
            f.truncate(1 << 20)
        doc = json_of("probe", "probe", "--format", "json", "/", mnt, data, dev, "/nonexistent", codes=(3,))
        assert [p["path"] for p in doc["probes"]] == ["/", mnt, data, dev, "/nonexistent"]
        json_of("probe", "probe", "--format", "json", "--confirm", mnt)
        json_of("list", "list", "-O", "-J", "--size", "4K", "--all")
        json_of("list", "list", "-J", "--tree", "-o", "+MODEL,TRAN,FSTYPE,MOUNTPOINT,RWF-ATOMIC")
        for path in ("/", mnt, data, dev):
            json_of("check", "check", "--format", "json", path, "--size", "16K", codes=(0, 6, 8))
        for db in ("mysql", "mariadb", "postgresql"):
            json_of("advise", "advise", "--format", "json", "--db", db, mnt, codes=(0, 8))
        record = os.path.join(mnt, "record")
        p = lcloudctl("torture", "run", data, "--pages", "8", "--page-size", "16K", "--path", "plain_direct",
                      "--writes", "32", "--record", record, "--format", "json")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["schema"] == 1
        json_of("torture_verify", "torture", "verify", data, "--record", record, "--format", "json", "--all")
        # a classed write to a file: no write streams, the class dropped and said to be
        doc = json_of("write", "-o", "json", "write", "--hint", "journal", "--offset", "0", "--length", "4096",
                      "--pattern", "1", data)
        assert doc["placement"]["basis"] == "no_placement" and "class journal dropped" in doc["hints"], doc
        json_of("write", "-o", "json", "write", "--offset", "4096", "--length", "4096", "--pattern", "1", "--backend",
                "sync", data)
        # a torn page on purpose: half of page 3 from another generation's image is no longer its own
        with open(data, "r+b") as f:
            f.seek(3 * 16384 + 8192)
            f.write(b"\0" * 8192)
        doc = json_of("torture_verify", "torture", "verify", data, "--record", record, "--format", "json",
                      codes=(9,))
        assert doc["result"] in ("torn", "damaged") and doc["page_reports"], doc


def test_every_json_document_has_its_schema():
    with scratch_dir() as d:
        fp = os.path.join(d, "fp.json")
        assert lcloudctl("probe", "--save", fp, d).returncode == 0
        p = lcloudctl("diff", "--format", "json", fp, d)
        assert p.returncode in (0, 12), p.stderr
        assert json.loads(p.stdout)["schema"] == 1
        with open(fp) as f:
            assert json.load(f)["schema"] == 1


def test_a_broken_document_is_refused():
    """The tests can fail: the changes a consumer would trip over are caught."""
    root = fixture_roots()[0]
    p = lcloudctl("--sysroot", root, "list", "-O", "-J", "--size", "16K")
    good = json.loads(p.stdout)
    dev = good["blockdevices"][0]
    for key, bad in (("size", "1 GiB"), ("wc", "write back"), ("untorn", True), ("ro", 0), ("unknown-key", 1)):
        doc = copy.deepcopy(good)
        doc["blockdevices"][0][key] = bad
        assert not PART["list"].is_valid(doc), (key, bad)
    doc = copy.deepcopy(good)
    del doc["schema"]
    assert not PART["list"].is_valid(doc)
    assert dev["name"]
    p = lcloudctl("--sysroot", root, "probe", "--format", "json", "/dev/" + dev["name"])
    good = json.loads(p.stdout)
    facts = good["probes"][0]["layers"][0]["facts"]
    number = next(k for k, v in facts.items() if isinstance(v, int) and not isinstance(v, bool))
    for mutate in (lambda d: d["probes"][0]["layers"][0]["facts"].__setitem__(number, str(facts[number])),
                   lambda d: d["probes"][0]["layers"][0]["facts"].__setitem__("a_fact_nobody_declared", 1),
                   lambda d: d["probes"][0]["verdict"]["rwf_atomic"].__setitem__("max_untorn_bytes", None),
                   lambda d: d.__setitem__("schema", 2)):
        doc = copy.deepcopy(good)
        mutate(doc)
        assert not PART["probe"].is_valid(doc)


def test_every_document_kind_was_checked():
    missing = [k for k, n in seen.items() if not n]
    assert not missing, "no real %s output was validated" % missing


if __name__ == "__main__":
    main([test_schema_pins_one_type_per_key, test_every_fact_the_library_adds_is_declared, test_captured_trees,
          test_live_host, test_every_json_document_has_its_schema, test_a_broken_document_is_refused,
          test_every_document_kind_was_checked])
