"""Sandbox v5, red team: the empty tmpfs and /dev/null that cover hidden paths inside bound folders.

mounts._mask covers a hidden folder with an empty read-only tmpfs and a hidden file with /dev/null, where Landlock
grants the folder around them (all of /tmp). Attacked: unmounting the cover (seccomp refuses umount2), writing
into it (a file planted there would be the next reader's), and reaching the hidden paths by other spellings: a
symbolic link in the submission folder, /proc/self/root, `//` and `/./` in the path, and by listing.
"""
import sys

import pytest

from grader.sandbox import policy

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
BAIT = "hidden-bait-4711"

PROBES = r'''
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)


def attack(folder, file):
    """What each way to the hidden folder and file gives: their text, or the error."""
    found = {"umount": os.strerror(ctypes.get_errno()) if libc.umount2(folder.encode(), 2) else "unmounted"}
    try:
        open(os.path.join(folder, "planted.py"), "w").close()
        found["write"] = "wrote"
    except OSError as error:
        found["write"] = error.strerror
    here = os.path.dirname(os.path.abspath(__file__))
    for name, path in (("by_path", os.path.join(folder, "test_hidden.py")), ("file", file),
                       ("linked", os.path.join(here, "linked", "test_hidden.py")),
                       ("proc_root", "/proc/self/root" + os.path.join(folder, "test_hidden.py")),
                       ("spelled", "/" + os.path.join(folder, ".", "test_hidden.py").replace("/", "//", 2))):
        try:
            with open(path) as f:
                found[name] = f.read()
        except OSError as error:
            found[name] = error.strerror
    found["listing"] = os.listdir(folder)
    return found
'''


@linux_only
def test_a_masked_folder_and_file_cannot_be_uncovered_or_reached_another_way(tmp_path, monkeypatch, sandboxed):
    site = tmp_path / "venv" / "site-packages"                  # below /tmp: Landlock grants it all
    hidden = site / "grader_bait"
    hidden.mkdir(parents=True)
    (hidden / "test_hidden.py").write_text(f"SECRET = '{BAIT}'\n")
    (site / "bait_answers.json").write_text(f'"{BAIT}"')
    for path in (tmp_path, tmp_path / "venv", site, hidden):
        path.chmod(0o755)
    for path in (hidden / "test_hidden.py", site / "bait_answers.json"):
        path.chmod(0o644)
    monkeypatch.syspath_prepend(str(site))
    real = policy.hidden_paths
    monkeypatch.setattr(policy, "hidden_paths", lambda *a: [*real(*a), str(hidden), str(site / "bait_answers.json")])
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "linked").symlink_to(hidden)
    sub = sandboxed(PROBES, folder=folder)
    found = sub.attack(str(hidden), str(site / "bait_answers.json"))
    if not sub.isolation.get("private_root"):
        pytest.skip("no private root here")
    assert found["umount"] == "Operation not permitted" and found["write"] == "Read-only file system", found
    assert found["listing"] == [], found
    assert not [name for name, text in found.items() if BAIT in str(text)], found
    sub.close()
