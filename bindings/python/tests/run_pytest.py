# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs pytest on the files given, under this interpreter, or says what to install.

meson test runs it with the interpreter the package installs for (Debian's
/usr/bin/python3), whose python3-pytest is in /usr/lib/python3/dist-packages.
Checked at test time, not configure time, so that installing pytest into an
existing build needs no reconfiguring.
"""
import sys

try:
    import pytest
except ImportError:
    sys.exit("pytest missing for %s: install Debian package python3-pytest (scripts/install-deps --tests does)"
             % sys.executable)

sys.exit(pytest.main(["-p", "no:cacheprovider", "-q", "-rs"] + sys.argv[1:]))
