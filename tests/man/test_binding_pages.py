#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The database bindings' pages say everything the bindings define, so that
neither can change without the other: lcloud-postgresql(7) has every SQL
function the extension's script creates, under its own heading, with every
column it returns, and every lcloud.* setting the C code defines, under
SETTINGS; lcloud-mariadb(7) has every status and system variable the plugin
declares, under STATUS VARIABLES and SYSTEM VARIABLES. Both pages render
without a warning, and say first how the Debian package installs them."""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from hostlib import main  # noqa: E402

SRC = os.environ["SOURCE_ROOT"]
MAN = os.path.join(SRC, "man")


def roff_sections(page):
    """{section title: its roff source}, for .SH and .SS alike (an .SS also belongs to its .SH)."""
    with open(os.path.join(MAN, page)) as f:
        text = f.read()
    out, sh, ss = {}, None, None
    for line in text.splitlines():
        m = re.match(r"\.(SH|SS) (.*)$", line)
        if m:
            title = m.group(2).strip().strip('"')
            if m.group(1) == "SH":
                sh, ss = title, None
            else:
                ss = title
            out.setdefault(title, "")
            continue
        for key in (sh, ss):
            if key:
                out[key] = out.get(key, "") + line + "\n"
    return out


def words(roff):
    """The words of roff source, font escapes and hyphen escapes undone."""
    plain = re.sub(r"\\f[BIRP]", "", roff).replace("\\-", "-").replace("\\e", "\\")
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_.\-]*", plain))


def sql_functions():
    """{function: [its OUT and INOUT columns]} from the extension's SQL script."""
    with open(os.path.join(SRC, "bindings", "postgresql", "lcloud--1.0.sql")) as f:
        sql = f.read()
    funcs = {}
    for m in re.finditer(r"CREATE FUNCTION (\w+)\((.*?)\)\s*RETURNS", sql, re.S):
        cols = re.findall(r"\b(?:OUT|INOUT)\s+(\w+)", m.group(2))
        funcs[m.group(1)] = cols
    assert len(funcs) >= 2, funcs
    return funcs


def pg_settings():
    names = set()
    for path in glob.glob(os.path.join(SRC, "bindings", "postgresql", "*.c")):
        with open(path) as f:
            names |= set(re.findall(r'DefineCustom\w+Variable\(\s*"(lcloud\.\w+)"', f.read()))
    assert names, "no lcloud.* setting found in bindings/postgresql"
    return names


def pg_page_problems(sections, funcs, settings):
    """What FUNCS ({name: columns}) and SETTINGS have that the page's SECTIONS do not say."""
    problems = []
    for func, cols in funcs.items():
        heads = [t for t in sections if re.match(re.escape(func) + r"\(", t)]
        if len(heads) != 1:
            problems.append("%s: needs one .SS heading of its own" % func)
            continue
        said = words(sections[heads[0]])
        problems += ["%s: column %s not described" % (func, c) for c in cols if c not in said]
    said = words(sections.get("SETTINGS", ""))
    problems += ["setting %s not under SETTINGS" % s for s in sorted(settings) if s not in said]
    return problems


def test_postgresql_page_has_every_function_column_and_setting():
    sections = roff_sections("lcloud-postgresql.7")
    assert "FUNCTIONS" in sections and "SETTINGS" in sections, sorted(sections)
    problems = pg_page_problems(sections, sql_functions(), pg_settings())
    assert not problems, problems
    # what each answer asks of the DBA, and the startup check's messages
    answers = words(sections.get("ANSWERS", ""))
    assert {"untorn", "no", "unknown"} <= answers, sorted(answers)
    check = sections.get("STARTUP CHECK", "")
    assert "WARNING" in check and "LOG" in check and "shared_preload_libraries" in check


def mariadb_variables():
    with open(os.path.join(SRC, "bindings", "mariadb", "plugin.c")) as f:
        code = f.read()
    status = set(re.findall(r'\{\s*"(lcloud_\w+)",', code))
    system = {"lcloud_" + n for n in re.findall(r"MYSQL_SYSVAR_\w+\((\w+),", code)}
    assert status and system, (status, system)
    return status, system


def test_mariadb_page_has_every_variable():
    sections = roff_sections("lcloud-mariadb.7")
    status, system = mariadb_variables()
    missing = sorted(v for v in status if v not in words(sections.get("STATUS VARIABLES", "")))
    assert not missing, ("status variables not under STATUS VARIABLES", missing)
    missing = sorted(v for v in system if v not in words(sections.get("SYSTEM VARIABLES", "")))
    assert not missing, ("system variables not under SYSTEM VARIABLES", missing)


def test_pages_say_the_package_first_and_render_clean():
    for page, package in (("lcloud-postgresql.7", "postgresql-15-lcloud"), ("lcloud-mariadb.7", "mariadb-plugin-lcloud")):
        install = roff_sections(page)["INSTALLATION"]
        assert package.replace("-", "\\-") in install.split("make")[0], (page, "the package comes before the build")
        p = subprocess.run(["groff", "-man", "-ww", "-z", os.path.join(MAN, page)], capture_output=True, text=True)
        assert p.returncode == 0 and not p.stderr, (page, p.stderr)


def test_the_check_sees_what_is_missing():
    # the comparison can fail: a function, a column and a setting the page does not have
    sections = roff_sections("lcloud-postgresql.7")
    funcs = dict(sql_functions())
    funcs["lcloud_datadir"] = funcs["lcloud_datadir"] + ["no_such_column"]
    funcs["lcloud_no_such_function"] = ["x"]
    problems = pg_page_problems(sections, funcs, pg_settings() | {"lcloud.no_such_setting"})
    assert problems == ["lcloud_datadir: column no_such_column not described",
                        "lcloud_no_such_function: needs one .SS heading of its own",
                        "setting lcloud.no_such_setting not under SETTINGS"], problems


if __name__ == "__main__":
    main([test_postgresql_page_has_every_function_column_and_setting, test_mariadb_page_has_every_variable,
          test_pages_say_the_package_first_and_render_clean, test_the_check_sees_what_is_missing])
