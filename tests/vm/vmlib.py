# SPDX-License-Identifier: LGPL-2.1-or-later
"""Running a guest script under lcvm from a Python test, with the project's
lcloudctl copied in. Results come back as files; comparisons happen here on
the host, against readings the guest took with nvme-cli and sg3_utils."""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LCVM = os.path.join(HERE, "lcvm")
LCLOUDCTL = os.environ.get("LCLOUDCTL")
sys.path.insert(0, os.path.join(HERE, "..", "host"))


class GuestRun:
    def __init__(self, outdir):
        self.outdir = outdir
        self.files = os.path.join(outdir, "files")

    def text(self, name):
        with open(os.path.join(self.files, name)) as f:
            return f.read()

    def json(self, name):
        return json.loads(self.text(name))

    def exists(self, name):
        return os.path.exists(os.path.join(self.files, name))


_made = []  # every guest's folder: its script, console, files and write logs


def _remove_guest_folders():
    if os.environ.get("LCVM_KEEP"):
        for d in _made:
            print("vmlib: LCVM_KEEP is set: the guest's results are kept in %s" % d, file=sys.stderr)
        return
    for d in _made:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_remove_guest_folders)


def keep(run):
    """Leave RUN's folder in place when the test ends (its caller keeps it on purpose)."""
    d = os.path.dirname(run.outdir)
    if d in _made:
        _made.remove(d)


def run_guest(script, devices, timeout=240, lane="debian12"):
    """Boot a guest of LANE (debian12: QEMU 7.2 + Linux 6.1; current: QEMU 11 +
    Linux 7) with DEVICES (lcvm options), run SCRIPT (sh) with $LCLOUDCTL set."""
    if not LCLOUDCTL:
        raise AssertionError("LCLOUDCTL is not set (meson sets it)")
    tmp = tempfile.mkdtemp(prefix="lcloud-vm-")
    _made.append(tmp)  # removed when the test ends, LCVM_KEEP=1 keeps it
    guest = os.path.join(tmp, "guest.sh")
    with open(guest, "w") as f:
        f.write(script)
    out = os.path.join(tmp, "res")
    ctl = os.path.realpath(LCLOUDCTL)
    args = [LCVM, "run", "--lane", lane, "--quiet", "--timeout", str(timeout), "--copy", ctl,
            "--env", "LCLOUDCTL=" + ctl]
    args += list(devices) + ["--script", guest, "--out", out]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        tail = ""
        for name in ("stdout", "stderr"):
            path = os.path.join(out, name)
            if os.path.exists(path):
                with open(path) as f:
                    tail += "--- guest %s\n%s" % (name, f.read()[-4000:])
        raise AssertionError("lcvm exited %d\n%s\n%s" % (p.returncode, p.stderr[-3000:], tail))
    return GuestRun(out)


_runs = {}


def run_guest_once(script, devices, lane="debian12"):
    """run_guest, booted once per script and devices: one boot serves every test of a file."""
    key = (script, tuple(devices), lane)
    if key not in _runs:
        _runs[key] = run_guest(script, devices, lane=lane)
    return _runs[key]


def layer(probe, kind, name=None):
    for l in probe["layers"]:
        if l["layer"] == kind and (name is None or l["name"] == name):
            return l
    raise AssertionError("no %s layer %s in %s" % (kind, name or "", [(l["layer"], l["name"]) for l in probe["layers"]]))
