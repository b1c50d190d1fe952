#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloudctl list in lsblk's idiom: the columns against lsblk's own and
sysfs, -o/+COL/-O/-n/-r/-P/-J parsed back, device filters, the tree against
sysfs holders and slaves, the verdict columns against probe and check, a
default listing that sends no device command, colour only where asked."""
import json
import os
import re
import shlex
import shutil
import subprocess

from hostlib import LCLOUDCTL, lcloudctl, loop_device, main, mounted_fs, need_root, read_sysfs, run, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "unit", "fixtures")
DEFAULT = ["NAME", "SIZE", "TYPE", "MIN-IO", "OPT-IO", "PHY-SEC", "LOG-SEC", "AWU-MIN", "AWU-MAX", "AW-MAX",
           "AW-BOUND", "STREAMS", "STREAM-GRAN", "WC", "ALIGN"]
ESC = "\x1b["


def fixture_roots():
    return [os.path.join(FIXTURES, d) for d in sorted(os.listdir(FIXTURES))
            if os.path.isdir(os.path.join(FIXTURES, d, "sys", "class", "block"))]


def listing(*args, root=None, codes=(0,)):
    pre = ["--sysroot", root] if root else []
    p = lcloudctl(*pre, "list", *args)
    assert p.returncode in codes, (args, p.returncode, p.stderr)
    return p


def all_columns():
    text = lcloudctl("list", "--help").stdout
    block = text.split("Columns:")[1].split("The verdict columns")[0]
    return re.findall(r"(?:^  |\s{2,})([A-Z][A-Z-]+)(?=\s)", block, re.M)


def test_columns_match_lsblk():
    """The columns lsblk has too hold lsblk's values, in its JSON types."""
    need_root()
    if not shutil.which("lsblk"):
        raise AssertionError("lsblk missing: util-linux is in scripts/install-deps")
    cols = "NAME,SIZE,RO,ROTA,LOG-SEC,PHY-SEC,MIN-IO,OPT-IO,MODEL,TRAN"
    with mounted_fs("xfs") as (dev, mnt):
        ours = {d["name"]: d for d in json.loads(listing("-J", "-o", cols + ",MOUNTPOINT,MOUNTPOINTS").stdout)
                ["blockdevices"]}
        theirs = json.loads(run(["lsblk", "-J", "-b", "-l", "-o", cols + ",MOUNTPOINTS"], check=True).stdout)
        theirs = {d["name"]: d for d in theirs["blockdevices"]}
        # lsblk hides unbound loop devices and so do we
        assert set(ours) == set(theirs), (sorted(ours), sorted(theirs))
        for name, t in theirs.items():
            o = ours[name]
            for key in ("size", "ro", "rota", "log-sec", "phy-sec", "min-io", "opt-io"):
                assert o[key] == t[key], (name, key, o[key], t[key])
            if t["model"] is not None:
                assert o["model"] == t["model"].strip(), (name, o["model"], t["model"])
            if t["tran"] is not None:
                assert o["tran"] == t["tran"], (name, o["tran"], t["tran"])
            mounts = [m for m in t["mountpoints"] if m]
            assert (o["mountpoint"] in mounts) if mounts else o["mountpoint"] is None, (name, o, mounts)
            # every mount point, in lsblk's order, [null] for none
            assert o["mountpoints"] == t["mountpoints"], (name, o["mountpoints"], t["mountpoints"])
        name = os.path.basename(dev)
        assert ours[name]["mountpoint"] == mnt and ours[name]["tran"] is None
        fs = json.loads(listing("-J", "-o", "NAME,FSTYPE", name).stdout)["blockdevices"]
        assert fs == [{"name": name, "fstype": "xfs"}], fs


def test_column_sets():
    root = fixture_roots()[0]
    head = listing(root=root).stdout.splitlines()[0].split()
    assert head == DEFAULT, head
    head = listing("-o", "+MODEL,tran", root=root).stdout.splitlines()[0].split()
    assert head == DEFAULT + ["MODEL", "TRAN"], head
    head = listing("-o", "SIZE,NAME", root=root).stdout.splitlines()[0].split()
    assert head == ["SIZE", "NAME"]
    assert listing("-O", "-t", root=root).stdout.splitlines()[0].split() == DEFAULT
    assert listing("-T", "-o", "NAME", root=root).stdout == listing("--tree", "-o", "NAME", root=root).stdout
    head = listing("-O", root=root).stdout.splitlines()[0].split()
    assert head == [c for c in all_columns() if c != "UNTORN"], head
    head = listing("-O", "--size", "8K", root=root).stdout.splitlines()[0].split()
    assert head == all_columns(), head
    # --size alone adds UNTORN; UNTORN alone is a usage error
    assert listing("--size", "8K", root=root).stdout.splitlines()[0].split() == DEFAULT + ["UNTORN"]
    p = lcloudctl("--sysroot", root, "list", "-o", "NAME,UNTORN")
    assert p.returncode == 2 and "--size" in p.stderr
    for bad in (["-o", "NAME,NOPE"], ["-o", "json"], ["--size", "3K"], ["-r", "-P"], ["-J", "-r"]):
        p = lcloudctl("--sysroot", root, "list", *bad)
        assert p.returncode == 2 and p.stderr and not p.stdout, (bad, p.stderr)
    assert "-J" in lcloudctl("list", "-o", "json").stderr


def test_formats_parse_back():
    """-n, -r, -P and -J hold the same values, each parsed as its format says."""
    for root in fixture_roots():
        cols = ["NAME", "TYPE", "SIZE", "WC", "ALIGN", "MODEL", "TRAN", "AWU-MAX"]
        table = listing("-b", "-o", ",".join(cols), root=root).stdout.splitlines()
        assert table[0].split() == cols
        noheadings = listing("-b", "-n", "-o", ",".join(cols), root=root).stdout.splitlines()
        assert noheadings == table[1:]
        raw = [l.split(" ") for l in listing("-b", "-r", "-n", "-o", ",".join(cols), root=root).stdout.splitlines()]
        pairs = []
        for line in listing("-b", "-P", "-o", ",".join(cols), root=root).stdout.splitlines():
            words = shlex.split(line)
            pairs.append(dict(w.split("=", 1) for w in words))
            assert [w.split("=", 1)[0] for w in words] == cols, line
        doc = json.loads(listing("-J", "-o", ",".join(cols), root=root).stdout)
        assert doc["schema"] == 1 and doc["errors"] == []
        assert len(doc["blockdevices"]) == len(table) - 1
        # -r and -P follow the tree's order as lsblk's do: each device, then what is built on it
        tree = json.loads(listing("-J", "-T", "-o", ",".join(cols), root=root).stdout)["blockdevices"]
        devices = [{k: v for k, v in d.items() if k != "children"} for d in walk(tree)]
        assert len(raw) == len(pairs) == len(devices) >= len(table) - 1
        for r, p, d in zip(raw, pairs, devices):
            assert len(r) == len(cols), r  # one word a value: awk counts the fields
            for i, c in enumerate(cols):
                key = c.lower()
                want = d[key]
                text = "" if want is None else str(want)
                assert p[c] == text, (root, c, p[c], want)
                model = None if want is None else re.sub(r"[^\x21-\x7e]", lambda m: "\\x%02x" % ord(m.group()), text)
                assert r[i] == ("-" if want is None else model), (root, c, r[i], want)
            assert d["wc"] in ("write-back", "write-through", None)
        # sizes are numbers in JSON whatever -b says; the table shows units without -b
        j2 = json.loads(listing("-J", "-o", "NAME,SIZE", root=root).stdout)["blockdevices"]
        assert [d["size"] for d in j2] == [d["size"] for d in doc["blockdevices"]]
        assert all(isinstance(d["size"], int) for d in j2)


def sysfs_parents(root, name):
    d = os.path.join(root, "sys", "class", "block", name)
    if os.path.exists(os.path.join(d, "partition")):
        return [os.path.basename(os.path.dirname(os.path.realpath(d)))]
    slaves = os.path.join(d, "slaves")
    return sorted(os.listdir(slaves)) if os.path.isdir(slaves) else []


def expected_tree(root, names):
    parents = {n: [p for p in sysfs_parents(root, n) if p in names] for n in names}

    def node(n):
        kids = sorted(node(c) for c in names if n in parents[c])
        return (n, tuple(kids))
    return sorted(node(n) for n in names if not parents[n])


def as_tree(devices):
    return sorted((d["name"], tuple(as_tree(d.get("children", [])))) for d in devices)


def test_tree_against_sysfs():
    """--tree: partitions under their disk, dm and md under every slave, as sysfs says."""
    shaped = 0
    for root in fixture_roots():
        flat = [d["name"] for d in json.loads(listing("-J", "-o", "NAME", "--all", root=root).stdout)["blockdevices"]]
        tree = json.loads(listing("-J", "--tree", "--all", "-o", "NAME,TYPE", root=root).stdout)["blockdevices"]
        want = expected_tree(root, flat)
        assert as_tree(tree) == want, (root, as_tree(tree), want)
        shaped += sum(1 for n in flat if len(sysfs_parents(root, n)) > 1)
        # the table draws the same tree: a child's line is indented under its parent
        text = listing("--tree", "-o", "NAME", "--all", root=root).stdout.splitlines()[1:]
        assert len(text) == sum(1 for _ in walk(tree))
        # a filter is the root of its own subtree
        top = [t for t in tree if t.get("children")]
        if top:
            sub = json.loads(listing("-J", "--tree", "-o", "NAME", top[0]["name"], root=root).stdout)["blockdevices"]
            assert as_tree(sub) == as_tree([top[0]]), sub
    assert shaped, "no captured tree has a device on two slaves: the tree test would not see duplicates"


def walk(devices):
    for d in devices:
        yield d
        yield from walk(d.get("children", []))


def test_tree_live_partitions():
    need_root()
    with scratch_dir() as d:
        with loop_device(os.path.join(d, "img"), 64 << 20, partitions="label: gpt\n,20M\n,20M\n") as dev:
            name = os.path.basename(dev)
            tree = json.loads(listing("-J", "--tree", "-o", "NAME,TYPE", dev).stdout)["blockdevices"]
            kids = sorted(n for n in os.listdir("/sys/class/block/" + name) if n.startswith(name + "p"))
            assert [t["name"] for t in tree] == [name]
            assert [c["name"] for c in tree[0]["children"]] == kids and len(kids) == 2
            assert {c["type"] for c in tree[0]["children"]} == {"part"}


def test_filters():
    root = os.path.join(FIXTURES, "dm-stack")
    # as lsblk: each named device with what is built on it, once each, by device number (8:17, 252:0)
    p = listing("-o", "NAME", "-n", "dm-0", "/dev/sdb1", root=root)
    assert p.stdout.split() == ["sdb1", "dm-0"]
    p = listing("-o", "NAME", "-n", "sdb", root=root)
    assert p.stdout.split() == ["sdb", "sdb1", "dm-0"]
    p = lcloudctl("--sysroot", root, "list", "-o", "NAME", "-n", "sdc", "nosuch")
    assert p.returncode == 3 and p.stdout.split() == ["sdc", "sdc1", "dm-0"] and "nosuch" in p.stderr
    need_root()
    with scratch_dir() as d:
        with loop_device(os.path.join(d, "img"), 16 << 20) as dev:
            link = os.path.join(d, "link")
            os.symlink(dev, link)
            p = listing("-o", "NAME", "-n", link)
            assert p.stdout.split() == [os.path.basename(dev)]
    # an unbound loop device is hidden, but listed when named
    unbound = [n for n in os.listdir("/sys/class/block") if re.fullmatch(r"loop[0-9]+", n)
               and not os.path.exists("/sys/class/block/%s/loop" % n) and read_sysfs("/sys/class/block/%s/size" % n) == "0"]
    names = listing("-o", "NAME", "-n").stdout.split()
    assert not set(unbound) & set(names)
    if unbound:
        assert listing("-o", "NAME", "-n", unbound[0]).stdout.split() == [unbound[0]]


def test_verdict_columns_agree_with_probe_and_check():
    compared = 0
    for root in fixture_roots():
        doc = json.loads(listing("-J", "-b", "-o", "NAME,RWF-ATOMIC,PASSTHROUGH,PLAIN-DIRECT,UNTORN", "--size", "16K",
                                 root=root, codes=(0, 1)).stdout)
        for d in doc["blockdevices"]:
            p = lcloudctl("--sysroot", root, "probe", "--format", "json", "--no-signatures", "/dev/" + d["name"])
            if p.returncode not in (0, 8):
                continue
            verdict = json.loads(p.stdout)["probes"][0]["verdict"]
            for col, path in (("rwf-atomic", "rwf_atomic"), ("passthrough", "passthrough"),
                              ("plain-direct", "plain_direct")):
                v = verdict[path]
                want = v["max_untorn_bytes"] if v["max_untorn_bytes"] or not v["unknown_reason"] else None
                assert d[col] == want, (root, d["name"], col, d[col], v)
            c = lcloudctl("--sysroot", root, "check", "--format", "json", "/dev/" + d["name"], "--size", "16K")
            if c.returncode == 2:
                assert d["untorn"] == "no"  # the device is smaller than the write
                continue
            answer = json.loads(c.stdout)["answer"]
            assert d["untorn"] == {"untorn": "yes", "no": "no", "unknown": "unknown"}[answer], (root, d, answer)
            compared += 1
    assert compared > 20, compared
    text = listing("-o", "NAME,RWF-ATOMIC", root=os.path.join(FIXTURES, "stacks")).stdout
    assert "16K" in text.split()  # as lsblk writes a size


def test_default_list_sends_no_device_command():
    """The default columns cost what lsblk -t costs: sysfs only, no /dev node opened, no NVMe
    Identify read; a verdict column asks the device, as probe does."""
    need_root()
    if not shutil.which("strace"):
        raise AssertionError("strace missing: scripts/install-deps installs it for this test")

    def opened(*args, root=None):
        pre = ["--sysroot", root] if root else []
        # LeakSanitizer cannot run under ptrace: the sanitizer lane's leak check is off for this one
        p = run(["strace", "-f", "-qq", "-e", "trace=openat", "env", "ASAN_OPTIONS=detect_leaks=0", LCLOUDCTL] +
                pre + ["list"] + list(args))
        assert p.returncode == 0, p.stderr
        return [l for l in p.stderr.splitlines() if ("/dev/" in l or "nvme-data" in l) and "ENOENT" not in l]
    with scratch_dir() as d:
        with loop_device(os.path.join(d, "img"), 16 << 20):
            assert opened() == []
            assert opened("-o", "+MODEL,TRAN,FSTYPE,MOUNTPOINT") == []
    # a captured NVMe tree: its Identify data stands for the device's answers
    root = os.path.join(FIXTURES, "nvme-qemu")
    assert opened(root=root) == [] and opened("-O", root=root) != []
    assert any("id-ns" in l for l in opened("-o", "NAME,PASSTHROUGH", root=root))


def on_tty(args, env_extra=None):
    """ARGS run with standard output on a pseudo-terminal (script(1)); returns what it printed."""
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.update(env_extra or {})
    cmd = " ".join(shlex.quote(a) for a in [LCLOUDCTL] + args)
    p = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True, env=env)
    return p.stdout


def test_colour_only_where_asked():
    root = os.path.join(FIXTURES, "dm-stack")
    base = ["--sysroot", root]
    lst = base + ["list", "-o", "NAME,ALIGN"]
    # a pipe: none, unless --color=always
    assert ESC not in lcloudctl(*lst).stdout
    assert ESC + "31m" in lcloudctl("--color=always", *lst[0:2], *lst[2:]).stdout  # MISALIGNED in red
    # never in JSON, -r or -P, even when asked
    for fmt in (["-J"], ["-r"], ["-P"]):
        assert ESC not in lcloudctl("--color=always", *lst, *fmt).stdout, fmt
    assert ESC not in lcloudctl("--color=always", *base, "probe", "--format", "json", "/dev/sdb1").stdout
    assert ESC not in lcloudctl("--color=always", *base, "check", "--format", "json", "/dev/sdb", "--size",
                                "4K").stdout
    # a terminal: colour by default, none with NO_COLOR or --color=never, --color=always beats NO_COLOR
    assert ESC in on_tty(lst)
    assert ESC not in on_tty(lst, {"NO_COLOR": "1"})
    assert ESC in on_tty(lst, {"NO_COLOR": ""})  # empty: not set, as no-color.org says
    assert ESC not in on_tty(["--color=never"] + lst)
    assert ESC in on_tty(["--color=always"] + lst, {"NO_COLOR": "1"})
    # check: green when untorn, red when not; probe: the verdict and its warnings
    good = lcloudctl("--color=always", *base, "check", "/dev/sdb", "--size", "4K")
    assert good.returncode == 0 and good.stdout.startswith("/dev/sdb: " + ESC + "32m"), good.stdout
    bad = lcloudctl("--color=always", *base, "check", "/dev/sdc", "--size", "16K")
    assert bad.returncode == 6 and ESC + "31m" in bad.stdout, bad.stdout
    probe = lcloudctl("--color=always", *base, "probe", "/dev/sdb1").stdout
    assert re.search(r"\x1b\[33mwarning\x1b\[0m: ", probe), probe
    assert ESC not in lcloudctl(*base, "probe", "/dev/sdb1").stdout
    # torture verify's result: green when clean
    with scratch_dir() as d:
        data, record = os.path.join(d, "data"), os.path.join(d, "record")
        p = lcloudctl("torture", "run", data, "--pages", "4", "--path", "plain_direct", "--writes", "8", "--record",
                      record)
        assert p.returncode == 0, p.stderr
        assert ESC not in lcloudctl("torture", "verify", data, "--record", record).stdout
        out = lcloudctl("--color=always", "torture", "verify", data, "--record", record).stdout
        assert "result: " + ESC + "32mclean" in out, out
    p = lcloudctl("--color=sometimes", "list")
    assert p.returncode == 2 and "auto, always or never" in p.stderr


def test_format_option_and_its_aliases():
    """--format and -J everywhere; the old -o FORMAT and --output FORMAT still work, with a note on stderr
    that they go (-o names columns, as list's and lsblk's)."""
    root = os.path.join(FIXTURES, "nvme-qemu")
    base = ["--sysroot", root]
    p = lcloudctl(*base, "probe", "--format", "json", "/dev/nvme0n1")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    doc = json.loads(p.stdout)
    for where in ("before", "after"):
        for form in (["-J"], ["--json"], ["--format", "json"], ["--format=json"], ["-o", "json"], ["--output", "json"],
                     ["-ojson"], ["--output=json"]):
            args = base + (form + ["probe"] if where == "before" else ["probe"] + form) + ["/dev/nvme0n1"]
            p = lcloudctl(*args)
            assert p.returncode == 0 and json.loads(p.stdout) == doc, (args, p.stderr)
            old = form[0].startswith(("-o", "--output"))
            assert ("deprecated" in p.stderr and "--format json" in p.stderr) == old, (args, p.stderr)
            assert old or p.stderr == "", (args, p.stderr)
    assert json.loads(lcloudctl(*base, "-J", "list").stdout)["schema"] == 1
    assert json.loads(lcloudctl(*base, "--format", "json", "list").stdout)["schema"] == 1
    for cmd in (["probe", "/dev/nvme0n1"], ["check", "/dev/nvme0n1", "--size", "4K"]):
        p = lcloudctl(*base, cmd[0], "--format", "yaml", *cmd[1:])
        assert p.returncode == 2 and "yaml" in p.stderr
    with scratch_dir() as d:
        # read's -o is its old --out FILE; 'json' there is refused, never a file named json
        p = lcloudctl("read", "/dev/null", "--offset", "0", "--length", "4K", "-o", "json")
        assert p.returncode == 2 and not os.path.exists("json") and not os.path.exists(os.path.join(d, "json"))


if __name__ == "__main__":
    main([test_columns_match_lsblk, test_column_sets, test_formats_parse_back, test_tree_against_sysfs,
          test_tree_live_partitions, test_filters, test_verdict_columns_agree_with_probe_and_check,
          test_default_list_sends_no_device_command, test_colour_only_where_asked,
          test_format_option_and_its_aliases])
