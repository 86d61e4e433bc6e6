"""Hostile submission: looks for the grader's parameters (the class-wide --seed, the --out path, the command line,
a secret in the grader's environment) from inside its child, through `grade` and `grade-batch` run as an
instructor would. grade-batch's workers are spawned by multiprocessing; a zygote forked inside one kept the start-up
frame holding the parent's argv and working folder on its stack.

The probe, at import, walks every frame above it, every module's globals, every object `gc` tracks, sys.argv,
sys.orig_argv, os.environ, /proc/self/cmdline and /proc/self/environ for the parameters, and scans its own
writable memory for them (by sha256, so that it holds no copy of what it looks for), and raises what it found:
the topic's import error, in the results.
"""
import hashlib
import json
import os
import subprocess
import sys
import uuid

import pytest

from grader.instructor.selftest import SOLUTIONS_DIR

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")

SEED = 864209753
PROBE = r'''
import gc, hashlib, json, mmap, os, re, sys

HEX = {needles!r}       # what to look for: name -> its text in hex, decoded after the memory scan
HASHES = {hashes!r}     # name -> sha256 of the text: the memory scan holds no copy of what it looks for
# where a parameter would start in memory, then the pattern of the parameter after it
PREFIXES = [("--se" + "ed", "[0-9]{{6,}}"), ("secret-" + "out-", "[0-9a-f]{{32}}"),
            ("bait-" + "value-", "[0-9a-f]{{32}}")]
found = set()


def look(where, value, depth=0, seen=None):
    """Look in `value`, in the containers it holds and in the attributes of the objects it holds (to `depth` 3)."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 3 or value is globals() or value is NEEDLES:
        return
    seen.add(id(value))
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("latin-1")
    if isinstance(value, str):
        found.update(f"{{where}}:{{name}}" for name, needle in NEEDLES.items() if needle in value)
    elif type(value) is int and value == SEED:
        found.add(f"{{where}}:seed")
    elif isinstance(value, dict):
        for k, v in list(value.items()):
            look(where, k, depth + 1, seen)
            look(where, v, depth + 1, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in list(value):
            look(where, v, depth + 1, seen)
    elif type(value).__dict__.get("__dict__") is not None and not isinstance(value, (type, type(sys))):
        look(where, vars(value), depth + 1, seen)  # an instance's own attributes, no properties run


def look_shallow(where, container):
    """Look at the strings and integers `container` (a dict, list or tuple tracked by gc) holds directly."""
    for v in (container.values() if isinstance(container, dict) else container):
        if type(v) is str:
            if any(needle in v for needle in NEEDLES.values()):
                found.add(f"{{where}}:" + next(n for n, needle in NEEDLES.items() if needle in v))
        elif type(v) is int and v == SEED:
            found.add(f"{{where}}:seed")


def scan_memory():
    """Every anonymous writable mapping, read through /proc/self/mem into a scratch mapping that is skipped;
    the heap also for UTF-32 (the interpreter's own copy of argv is wchar_t)."""
    chunk = 16 * 2**20
    scratch = mmap.mmap(-1, chunk, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    import ctypes
    own = ctypes.addressof(ctypes.c_char.from_buffer(scratch))
    with open("/proc/self/maps") as f:
        regions = [line.split() for line in f]
    mem = os.open("/proc/self/mem", os.O_RDONLY)
    for fields in regions:
        start, end = (int(x, 16) for x in fields[0].split("-"))
        anonymous = len(fields) < 6 or fields[5] in ("[heap]", "[stack]")  # files hold no argument
        if not fields[1].startswith("rw") or not anonymous or start == own or end - start > 2**30:
            continue
        encodings = ("utf-8", "utf-32-le") if fields[-1] == "[heap]" else ("utf-8",)
        for at in range(start, end, chunk):
            try:
                n = os.preadv(mem, [memoryview(scratch)[: min(chunk, end - at)]], at)
            except OSError:
                break
            data = scratch[:n]
            for prefix, after in PREFIXES:
                for encoding in encodings:
                    pattern = prefix.encode(encoding).rstrip(b"\0")
                    i = data.find(pattern)
                    while i >= 0:
                        text = data[i + len(pattern): i + len(pattern) + 256].decode(encoding, "ignore")
                        for candidate in re.findall(after, text.replace("\0", "")):
                            digest = hashlib.sha256(candidate.encode()).hexdigest()
                            found.update(f"memory:{{name}}" for name, h in HASHES.items() if h == digest)
                        i = data.find(pattern, i + 1)
    os.close(mem)


scan_memory()
NEEDLES = {{name: bytes.fromhex(text).decode() for name, text in HEX.items()}}
SEED = int(NEEDLES["seed"])
frame = sys._getframe(1)
while frame is not None:
    look(f"frame {{frame.f_code.co_name}}", frame.f_locals)
    frame = frame.f_back
seen = set()
for name, module in list(sys.modules.items()):
    if module is not None and vars(module) is not globals():
        for value in list(vars(module).values()):
            look(f"module {{name}}", value, depth=2, seen=seen)
for obj in gc.get_objects():
    if isinstance(obj, (dict, list, tuple)) and obj is not NEEDLES and obj is not globals():
        look_shallow("gc", obj)
look("sys.argv", sys.argv)
look("sys.orig_argv", sys.orig_argv)
look("os.environ", dict(os.environ))
for name in ("cmdline", "environ"):
    with open(f"/proc/self/{{name}}", "rb") as f:
        look(f"/proc/self/{{name}}", f.read())


raise ImportError("PROBE " + json.dumps(sorted(found)) + " END")
'''


def probe_folder(root, needles: dict) -> os.PathLike:
    folder = root / "student"
    folder.mkdir(parents=True)
    hashes = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in needles.items()}
    encoded = {name: text.encode().hex() for name, text in needles.items()}
    (folder / "sampling.py").write_text(PROBE.format(needles=encoded, hashes=hashes))
    return folder


def findings(text: str) -> list[str]:
    """What the probe reported, from the text of a results file; fails when it did not report."""
    assert "PROBE " in text, text[:3000]
    reported = text.split("PROBE ", 1)[1].split(" END", 1)[0]
    return json.loads(reported.replace('\\"', '"'))


def parameters(tmp_path):
    """The bait: a distinctive seed, an output path, a secret in the environment, and the probe's folder."""
    secret = uuid.uuid4().hex
    out = tmp_path / f"secret-out-{uuid.uuid4().hex}"
    needles = {"seed": str(SEED), "out": out.name.removeprefix("secret-out-"), "environment": secret}
    env = {**os.environ, "INFERGRADE_BAIT": f"bait-value-{secret}"}
    return needles, out, env


def test_grade_shows_a_submission_no_grading_parameter(tmp_path):
    needles, out, env = parameters(tmp_path)
    folder = probe_folder(tmp_path, needles)
    subprocess.run([sys.executable, "-m", "grader", "grade", "--topic", "sampling", "--submission", str(folder),
                    "--seed", str(SEED), "--out", str(out), "--hidden"], env=env, capture_output=True,
                   timeout=300, cwd=tmp_path)
    assert findings(out.read_text()) == []


def test_grade_batch_shows_a_submission_no_grading_parameter(tmp_path):
    needles, out, env = parameters(tmp_path)
    probe_folder(tmp_path / "class", needles)
    (tmp_path / "class" / "model").mkdir()
    (tmp_path / "class" / "model" / "sampling.py").write_text((SOLUTIONS_DIR / "sampling.py").read_text())
    done = subprocess.run([sys.executable, "-m", "grader", "grade-batch", str(tmp_path / "class"), "--topic",
                           "sampling", "--seed", str(SEED), "--out", str(out), "--jobs", "1"], env=env,
                          capture_output=True, timeout=600, cwd=tmp_path)
    assert (out / "student.json").exists(), done.stderr.decode()[-2000:]
    assert findings((out / "student.json").read_text()) == []
    assert json.loads((out / "model.json").read_text())["score"] > 0  # the batch graded the others as usual


def test_a_restarted_child_cannot_read_its_checks_seed_from_the_global_generators(tmp_path):
    """Hidden checks restart the child with `global_seed=seed + 1` (seed: the check's, a hash of the run's --seed
    and the check id): `torch.initial_seed()` showed it, and a small --seed (a CI run number) is found from it by
    trying them all. The child gets seeds that differ as the checks' do, and that say nothing of them."""
    from grader.engine.runner import sandbox_config, zygote
    from grader.sandbox.pool import ChildPool
    from grader.sandbox.remote import Submission

    (tmp_path / "demo.py").write_text("import torch\n\ndef seed():\n    return torch.initial_seed()\n")
    config = {**sandbox_config(tmp_path, 2**30, 2**20), "topic": "demo", "forbidden": []}
    pool = ChildPool(zygote())
    sub = Submission(pool, config)
    try:
        seen = []
        for given in (12346, 12347):
            sub.restart(global_seed=given)
            seen.append(sub.seed())
    finally:
        sub.close()
        pool.close()
    assert not {12346, 12347} & set(seen)
    assert seen[0] != seen[1]
