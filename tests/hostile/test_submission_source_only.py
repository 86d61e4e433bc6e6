"""Sandbox v5, red team: the submission's modules load from their source only (child.SourceOnly).

What is graded must be the source the results hash. Planted in the submission folder: an extension module under
the name of a standard one (a copy of xxlimited), a package whose only `__init__` is compiled (`__init__.pyc`),
an unchecked-hash .pyc in __pycache__ that says otherwise than its source, and a .pth naming a zip of modules.
None of them may run: the extension comes from the standard library, the package is an empty namespace, the
helper is its source, and the zip is not on sys.path.
"""
import importlib.machinery
import py_compile
import shutil
import sys
import zipfile

import pytest
import xxlimited

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

PROBES = '''
import os


def loaded():
    """Where each planted module came from, or that it did not load."""
    import xxlimited
    import helper
    import pkg
    found = {"extension": xxlimited.__file__, "helper": helper.WHO, "pkg": getattr(pkg, "WHO", "namespace")}
    try:
        import zipped
        found["zipped"] = zipped.WHO
    except ImportError:
        found["zipped"] = "not found"
    found["folder"] = os.path.dirname(os.path.abspath(__file__))
    return found
'''


def compiled(source, path, tmp_path):
    """`source` compiled to `path` as an unchecked-hash .pyc (it runs whatever the source beside it says)."""
    (tmp_path / "plain.py").write_text(source)
    path.parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(str(tmp_path / "plain.py"), str(path),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


@linux_only
def test_only_the_source_of_the_submission_s_modules_runs(tmp_path, sandboxed):
    folder = tmp_path / "sub"
    folder.mkdir()
    shutil.copy(xxlimited.__file__, folder / f"xxlimited{importlib.machinery.EXTENSION_SUFFIXES[0]}")
    (folder / "helper.py").write_text("WHO = 'source'\n")
    tag = sys.implementation.cache_tag
    compiled("WHO = 'cached'\n", folder / "__pycache__" / f"helper.{tag}.pyc", tmp_path)
    compiled("WHO = 'compiled'\n", folder / "pkg" / "__init__.pyc", tmp_path)
    with zipfile.ZipFile(folder / "extra.zip", "w") as z:
        z.writestr("zipped.py", "WHO = 'zipped'\n")
    (folder / "extra.pth").write_text("extra.zip\n")
    sub = sandboxed(PROBES, folder=folder)
    found = sub.loaded()
    assert not found["extension"].startswith(found["folder"]), "the planted extension module was loaded"
    assert (found["helper"], found["pkg"], found["zipped"]) == ("source", "namespace", "not found"), found
    sub.close()
