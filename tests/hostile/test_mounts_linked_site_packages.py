"""Sandbox v5, red team: a site-packages reached through a symbolic link kept its hidden packages.

policy.hidden_paths resolves every hidden path (`reference` in each site-packages on sys.path); mounts.build_root
masks it only where that resolved path lies in the private root. A site-packages named on sys.path through a
linked folder (a venv under a symlinked home or CI workspace) is bound under its name as written: its
`reference` sat in the root there, unmasked, and Landlock granted it (all of /tmp, or the python paths).
Fixed: hidden_paths gives each path as written and resolved, and both are masked.
"""
import sys

import pytest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

READ = "def read(path):\n    return open(path).read()\n"


@linux_only
def test_a_hidden_package_behind_a_linked_folder_stays_unreadable(tmp_path, monkeypatch, sandboxed):
    site = tmp_path / "real" / "venv" / "site-packages"
    (site / "reference").mkdir(parents=True)
    (site / "reference" / "sampling.py").write_text("SECRET = 'model-answer-4711'\n")
    for path in (tmp_path, tmp_path / "real", site.parent, site, site / "reference"):
        path.chmod(0o755)
    (site / "reference" / "sampling.py").chmod(0o644)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    linked = tmp_path / "link" / "venv" / "site-packages"
    monkeypatch.syspath_prepend(str(linked))            # as `python -m venv` in a linked workspace writes it
    sub = sandboxed(READ)
    with pytest.raises(Exception, match="Permission denied|No such file"):
        sub.read(str(linked / "reference" / "sampling.py"))  # the attack: it reads the model answer
    sub.close()
