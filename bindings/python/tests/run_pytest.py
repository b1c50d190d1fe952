# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs pytest on the files given, under this interpreter, or says what to install.

meson test runs it with the interpreter the package installs for (Debian's
/usr/bin/python3), whose python3-pytest is in /usr/lib/python3/dist-packages.
tests/meson.build checks for pytest when configuring; this says it again
should it be removed from an existing build.
"""
import sys

try:
    import pytest
except ImportError:
    sys.exit("pytest missing for %s: install Debian package python3-pytest (scripts/install-deps does)"
             % sys.executable)

sys.exit(pytest.main(["-p", "no:cacheprovider", "-q", "-rs"] + sys.argv[1:]))
