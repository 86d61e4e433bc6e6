"""Sandbox v4, red team: every site-packages on sys.path is bound read-only into the private root.

An installed grader keeps its checks and reference in site-packages, which the child must read for its own
packages: the grader's folders there are hidden (Landlock), everything else read-only. Attacked: writing into
any bound package folder (a planted module or .pth would run in the next child), and reading a hidden package
that sits inside a bound site-packages, by path, by listing and by import.
"""
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from grader.sandbox import policy

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")


@pytest.fixture
def outside_tmp():
    """A folder outside /tmp: below /tmp, only the mask keeps it hidden (test_mounts_installed_copy.py)."""
    path = Path(tempfile.mkdtemp(prefix="infergrade-v4-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


PROBES = '''
import os
import sys


def write_everywhere(extra):
    done = []
    folders = [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages") and os.path.isdir(p)]
    folders.append(extra)
    for folder in folders:
        existing = sorted(os.listdir(folder))[0]
        for what, attempt in (("create", lambda: open(os.path.join(folder, "planted.pth"), "w").close()),
                              ("mkdir", lambda: os.mkdir(os.path.join(folder, "planted"))),
                              ("chmod", lambda: os.chmod(os.path.join(folder, existing), 0o777)),
                              ("utime", lambda: os.utime(os.path.join(folder, existing))),
                              ("rename", lambda: os.rename(os.path.join(folder, existing),
                                                           os.path.join(folder, existing + ".x")))):
            try:
                attempt()
                done.append(f"{what} {folder}")
            except OSError:
                pass
    return [len(folders), done]


def read_hidden(folder):
    got = []
    for attempt in (lambda: open(os.path.join(folder, "grader_bait", "test_hidden.py")).read(),
                    lambda: os.listdir(os.path.join(folder, "grader_bait")),
                    lambda: __import__("grader_bait.test_hidden").test_hidden.SECRET):
        try:
            got.append(str(attempt()))
        except (OSError, ImportError):
            pass
    return [open(os.path.join(folder, "other.py")).read(), got]
'''


@linux_only
def test_no_bound_package_folder_takes_a_write(outside_tmp, monkeypatch, sandboxed):
    site = outside_tmp / "shared-env" / "site-packages"        # a shared environment anyone may write to
    site.mkdir(parents=True)
    (site / "module.py").write_text("")
    outside_tmp.chmod(0o755)
    (outside_tmp / "shared-env").chmod(0o755)
    site.chmod(0o777)
    (site / "module.py").chmod(0o666)
    monkeypatch.syspath_prepend(str(site))
    sub = sandboxed(PROBES)
    folders, done = sub.write_everywhere(str(site))
    assert folders >= 2 and done == []
    assert sorted(p.name for p in site.iterdir()) == ["module.py"]
    sub.close()


@linux_only
def test_a_hidden_package_inside_a_bound_site_packages_stays_unreadable(outside_tmp, monkeypatch, sandboxed):
    site = outside_tmp / "env" / "site-packages"               # an installed grader's layout, in brief
    (site / "grader_bait").mkdir(parents=True)
    (site / "grader_bait" / "__init__.py").write_text("")
    (site / "grader_bait" / "test_hidden.py").write_text("SECRET = 'hidden-bait-4711'\n")
    (site / "other.py").write_text("visible = True\n")
    for path in (outside_tmp, outside_tmp / "env", site, site / "grader_bait"):
        path.chmod(0o755)
    monkeypatch.syspath_prepend(str(site))
    real = policy.hidden_paths
    monkeypatch.setattr(policy, "hidden_paths", lambda *a: [*real(*a), str(site / "grader_bait")])
    sub = sandboxed(PROBES)
    other, got = sub.read_hidden(str(site))
    if not sub.isolation.get("landlock_abi"):
        pytest.skip("no Landlock here: the hidden package is not hidden (see test_hostile_v4_open_site_packages)")
    assert other == "visible = True\n"                         # the folder is bound, its other files readable
    assert got == []
    sub.close()
