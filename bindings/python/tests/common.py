# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the binding's pytest tests share: lcloudctl, and where the fixture trees are."""
import json
import os
import shutil
import subprocess
from typing import Any, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
FIXTURES = os.path.join(SOURCE_ROOT, "tests", "unit", "fixtures")
LCLOUDCTL = os.environ.get("LCLOUDCTL") or shutil.which("lcloudctl") or "lcloudctl"


def lcloudctl(*args: str) -> "subprocess.CompletedProcess[str]":
    """Run lcloudctl; returns the finished process (text)."""
    return subprocess.run([LCLOUDCTL, *args], capture_output=True, text=True, check=False)


def lcloudctl_json(*args: str) -> Tuple[int, Any]:
    p = lcloudctl(*args)
    return p.returncode, json.loads(p.stdout)


def error_line(stderr: str) -> str:
    """The one line lcloudctl printed for a refusal (the last non-empty one)."""
    lines: List[str] = [l for l in stderr.splitlines() if l.strip()]
    assert lines, "lcloudctl printed no error"
    return lines[-1]
