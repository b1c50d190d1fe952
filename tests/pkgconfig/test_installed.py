#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Install liblcloud into a scratch prefix with `meson install`, build
atomic_limits.c outside the tree with only `pkg-config --cflags --libs lcloud`,
and check what it prints against the tests' own statx of a file on XFS; then,
from a folder outside the build tree and with a clean environment, run what a
prefix install offers as the README says: lcloudctl, a C program built with
pkg-config and the documented rpath flag, the Python binding with the
documented PYTHONPATH, and bash completion."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from hostlib import main, mounted_fs, own_statx, run, scratch_dir  # noqa: E402

SOURCE_ROOT = os.environ["SOURCE_ROOT"]
HERE = os.path.dirname(os.path.abspath(__file__))


def test_outside_program_prints_atomic_limits():
    with scratch_dir() as d:
        prefix = os.path.join(d, "prefix")
        build = os.path.join(d, "build")
        run(["meson", "setup", "--prefix", prefix, "-Dtests=false", build, SOURCE_ROOT], check=True)
        run(["meson", "install", "-C", build, "--quiet"], check=True)
        pcdirs = [os.path.join(root) for root, _, files in os.walk(prefix) if "lcloud.pc" in files]
        assert len(pcdirs) == 1, pcdirs
        env = dict(os.environ, PKG_CONFIG_PATH=pcdirs[0])
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "lcloud"], env=env, check=True,
                               capture_output=True, text=True).stdout.split()
        assert any(f.startswith("-I" + prefix) for f in flags), flags
        exe = os.path.join(d, "atomic_limits")
        subprocess.run(["cc", "-Wall", "-Werror", "-o", exe, os.path.join(HERE, "atomic_limits.c")] + flags,
                       check=True)
        libdir = [f[2:] for f in flags if f.startswith("-L")][0]
        # installed pieces the issue names: library with SONAME link, header, tool, man pages
        assert os.path.exists(os.path.join(libdir, "liblcloud.so.0"))
        assert os.path.exists(os.path.join(prefix, "include", "lcloud", "lcloud.h"))
        assert os.path.exists(os.path.join(prefix, "bin", "lcloudctl"))
        assert os.path.exists(os.path.join(prefix, "share", "man", "man1", "lcloudctl.1"))
        assert os.path.exists(os.path.join(prefix, "share", "man", "man3", "lcloud_probe_path.3"))
        # the JSON contract, the same file the tests validate real output against
        with open(os.path.join(prefix, "share", "lcloud", "lcloudctl.schema.json")) as f:
            with open(os.path.join(SOURCE_ROOT, "cli", "lcloudctl.schema.json")) as g:
                assert f.read() == g.read()
        # the udev rule stays inside a scratch prefix, naming the installed lcloudctl
        with open(os.path.join(prefix, "lib", "udev", "rules.d", "60-lcloud.rules")) as f:
            assert os.path.join(prefix, "bin", "lcloudctl") + " udev %k" in f.read()
        # the Python binding where the system's python3 looks for a prefix like this one
        sitedirs = subprocess.run(["/usr/bin/python3", "-c", "import site, sys; print('\\n'.join("
                                   "site.getsitepackages([sys.argv[1]])))", prefix], capture_output=True,
                                  text=True, check=True).stdout.split()
        found = [d for d in sitedirs if os.path.exists(os.path.join(d, "lcloud", "__init__.py"))]
        assert found, (sitedirs, [r for r, _, f in os.walk(prefix) if "__init__.py" in f])
        # every module of the package, and the marker that says it is typed
        assert sorted(os.listdir(os.path.join(found[0], "lcloud"))) == [
            "__init__.py", "_ffi.py", "_install.py", "_probe.py", "_queue.py", "py.typed"], os.listdir(os.path.join(found[0], "lcloud"))
        p = subprocess.run(["/usr/bin/python3", "-c", "import site, sys; site.addsitedir(sys.argv[1]); import lcloud; "
                            "print(lcloud.version(), lcloud.check(sys.argv[2], 4096).answer, lcloud.Hint(write_class='data').write_class)", found[0], prefix],
                           env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib", "x86_64-linux-gnu") + ":" +
                                    os.path.join(prefix, "lib")), capture_output=True, text=True)
        assert p.returncode == 0 and p.stdout.split()[0] == "0.5.0" and p.stdout.split()[-1] == "data", (p.stdout, p.stderr)
        # a default install (/usr/local) goes where Debian's python3 searches
        local = os.path.join(d, "build-local")
        run(["meson", "setup", "--prefix", "/usr/local", "-Dtests=false", local, SOURCE_ROOT], check=True)
        installed = subprocess.run(["meson", "introspect", "--installed", local], capture_output=True, text=True,
                                   check=True).stdout
        syspath = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('\\n'.join(sys.path))"],
                                 capture_output=True, text=True, check=True).stdout.split()
        target = [p for p in __import__("json").loads(installed).values() if p.endswith("lcloud/__init__.py")]
        assert target and os.path.dirname(os.path.dirname(target[0])) in syspath, (target, syspath)
        # shell completion: bash's under the prefix, zsh's pointing at it
        bash_completion = os.path.join(prefix, "share", "bash-completion", "completions", "lcloudctl")
        assert os.path.exists(bash_completion)
        with open(os.path.join(prefix, "share", "zsh", "site-functions", "_lcloudctl")) as f:
            assert bash_completion in f.read()

        with mounted_fs("xfs") as (dev, mnt):
            path = os.path.join(mnt, "page-file")
            open(path, "w").close()
            out = subprocess.run([exe, path], env=dict(os.environ, LD_LIBRARY_PATH=libdir), check=True,
                                 capture_output=True, text=True).stdout
            got = dict(line.split() for line in out.splitlines())
            mine = own_statx(path)
            for name in ("stx_atomic_write_unit_min", "stx_atomic_write_unit_max", "stx_atomic_write_segments_max"):
                assert got[name] == (str(mine[name]) if name in mine else "-"), (name, got, mine)


def test_prefix_install_runs_as_is():
    """No LD_LIBRARY_PATH, no LCLOUD_LIBRARY, the prefix's bin not on PATH: only the
    README's PYTHONPATH and rpath flag."""
    with scratch_dir() as d:
        prefix = os.path.join(d, "prefix")
        build = os.path.join(d, "build")
        run(["meson", "setup", "--prefix", prefix, "-Dtests=false", build, SOURCE_ROOT], check=True)
        run(["meson", "install", "-C", build, "--quiet"], check=True)
        elsewhere = os.path.join(d, "elsewhere")
        os.mkdir(elsewhere)
        env = {"PATH": "/usr/bin:/bin", "HOME": elsewhere, "LC_ALL": "C.UTF-8"}
        assert subprocess.run(["sh", "-c", "command -v lcloudctl"], env=env).returncode != 0, \
            "an lcloudctl on /usr/bin:/bin would hide what this test looks for"

        def sh(args, extra_env=None):
            return subprocess.run(args, cwd=elsewhere, env=dict(env, **(extra_env or {})),
                                  capture_output=True, text=True)

        tool = os.path.join(prefix, "bin", "lcloudctl")
        p = sh([tool, "--version"])
        assert p.returncode == 0 and "0.5.0" in p.stdout, (p.returncode, p.stdout, p.stderr)
        target = os.path.join(elsewhere, "page-file")
        with open(target, "wb") as f:
            f.write(bytes(65536))
        p = sh([tool, "probe", "--format", "json", target])
        assert p.returncode == 0 and '"schema"' in p.stdout, (p.returncode, p.stdout, p.stderr)

        # C: pkg-config's flags, plus the rpath flag the README gives for a prefix install
        pc_env = {"PKG_CONFIG_PATH": os.pathsep.join(r for r, _, f in os.walk(prefix) if "lcloud.pc" in f)}
        p = sh(["sh", "-c", 'cc -o prog "$1" $(pkg-config --cflags --libs lcloud) '
                '-Wl,-rpath,$(pkg-config --variable=libdir lcloud)', "sh",
                os.path.join(HERE, "atomic_limits.c")], pc_env)
        assert p.returncode == 0, p.stderr
        p = sh([os.path.join(elsewhere, "prog"), target])
        assert p.returncode == 0 and "stx_atomic_write_unit_max" in p.stdout, (p.returncode, p.stdout, p.stderr)

        # Python: the README's PYTHONPATH for a prefix, and no LCLOUD_LIBRARY
        pythonpath = os.path.join(prefix, "lib", "python3", "dist-packages")
        p = sh(["/usr/bin/python3", "-c", "import sys, lcloud; c = lcloud.check(sys.argv[1], 4096); "
                "print(lcloud.version(), c.answer, lcloud.library_name())", target], {"PYTHONPATH": pythonpath})
        assert p.returncode == 0, (p.stdout, p.stderr)
        version, answer, library = p.stdout.split()
        assert version == "0.5.0" and answer in ("untorn", "no", "unknown"), p.stdout
        assert library.startswith(prefix + "/"), library  # the installed library, not another one

        # bash completion: sourced in a real bash, lcloudctl typed by name (not on PATH) and by path
        completion = os.path.join(prefix, "share", "bash-completion", "completions", "lcloudctl")
        for word0 in ("lcloudctl", tool):
            script = ('source "$1"; COMP_WORDS=("$2" ch); COMP_CWORD=1; _lcloudctl; '
                      'printf "%s\\n" "${COMPREPLY[@]}"')
            p = sh(["bash", "--norc", "--noprofile", "-c", script, "bash", completion, word0])
            assert p.returncode == 0 and p.stdout.split() == ["check"], (word0, p.stdout, p.stderr)


if __name__ == "__main__":
    main([test_outside_program_prints_atomic_limits, test_prefix_install_runs_as_is])
