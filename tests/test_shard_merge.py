"""`grade-batch --shard K/N` and `infergrade merge` on a small class (kv_cache's public checks): the shards are
disjoint and cover the class, and merged they give the grades.csv, batch.json and report of one run; bad --shard
values and shards that do not make one class are refused before anything is written.

The commands run in this process, each submission graded by the workers' own function rather than in a pool of
spawned workers (test_batch runs the pool): the class is graded three times, and a pool would import torch twice
per run."""
import csv
import json
import os
import random
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.instructor import batch
from grader.instructor.commands import grade_batch, merge_cmd, report_cmd
from grader.sandbox.policy import REPO

pytestmark = pytest.mark.xdist_group("shard_merge")  # one worker grades the class once for every test here
SOLUTION = (REPO / "solutions" / "kv_cache.py").read_text()
MUTANT = (REPO / "tests" / "mutants" / "kv_cache" / "uses_query_heads.py").read_text()
SHARDS = 2


def grade_here(paths, topics, hidden, seed, jobs, previous=None):
    """batch.grade_all without its pool: each upload graded in this process by the function a worker runs."""
    for path in paths:
        yield batch.Outcome(path, *batch.grade_one(path, topics, hidden, seed))


def run(command, *args) -> tuple[int, str]:
    """The exit code and output (standard error included) of an instructor command run here."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batch, "grade_all", grade_here)
        result = CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A class of three graded once whole and once in two shards, merged: the folder holding class/, whole/,
    shard-1/, shard-2/ and merged/, and the merge's exit code and output."""
    root = tmp_path_factory.mktemp("shards")
    for name, source in (("ada", SOLUTION), ("bo", SOLUTION + MUTANT)):
        (root / "class" / name).mkdir(parents=True)
        (root / "class" / name / "kv_cache.py").write_text(source)
    with zipfile.ZipFile(root / "class" / "ed.zip", "w") as z:              # graded as an error (no topic module)
        z.writestr("notes.txt", "no code")
    grading = ("--topic", "kv_cache", "--public", "--seed", 3)
    code, said = run(grade_batch, root / "class", "--out", root / "whole", *grading)
    assert code == 1, said                                                  # ed could not be graded
    for k in range(1, SHARDS + 1):
        code, said = run(grade_batch, root / "class", "--out", root / f"shard-{k}", "--shard", f"{k}/{SHARDS}",
                         *grading)
        assert code in (0, 1) and f"shard {k}/{SHARDS} of a class of 3" in said, said
    return root, run(merge_cmd, *(root / f"shard-{k}" for k in range(1, SHARDS + 1)), "--out", root / "merged")


def rows(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def without_timings(page: str) -> str:
    """A report with its grading-time figure blanked (the one part that differs between two runs)."""
    blanked, n = re.subn(r'(alt="grading time[^"]*" src=")[^"]*', r"\1", page)
    assert n == 1
    return blanked


def test_merged_shards_give_the_grades_and_report_of_one_run(graded):
    root, (code, said) = graded
    assert code == 1, said                                                  # as the whole run: ed is an error
    whole, out = root / "whole", root / "merged"
    assert (out / "grades.csv").read_bytes() == (whole / "grades.csv").read_bytes()
    assert [r["student"] for r in rows(out / "grades.csv")] == ["ada", "bo", "ed"]
    assert {r["status"] for r in rows(out / "grades.csv")} == {"completed", "error"}
    assert 0 < float(rows(out / "grades.csv")[1]["total"]) < float(rows(out / "grades.csv")[0]["total"])
    assert (out / "batch.json").read_bytes() == (whole / "batch.json").read_bytes()    # one class, one manifest
    assert "(2 graded, 1 could not be graded, 0 not graded" in said, said              # ed's zip holds no module
    results = sorted(p.name for p in out.glob("*.json"))
    assert results == sorted(p.name for p in whole.glob("*.json")) == \
        ["ada.json", "batch.json", "bo.json", "ed.json"]
    written = {p.name: p.read_bytes() for k in range(1, SHARDS + 1) for p in (root / f"shard-{k}").glob("*.json")
               if p.name != "batch.json"}
    assert {p.name: p.read_bytes() for p in out.glob("*.json") if p.name != "batch.json"} == written  # as written
    reported, headline = run(report_cmd, whole, "--out", root / "whole.html")
    assert reported == 0 and said.splitlines()[0] == headline.splitlines()[0] and "uses_query_heads" in said
    assert without_timings((out / "report.html").read_text()) == without_timings((root / "whole.html").read_text())


def test_the_shards_are_disjoint_and_cover_the_class(graded):
    root, _ = graded
    manifests = [json.loads((root / f"shard-{k}" / "batch.json").read_text()) for k in range(1, SHARDS + 1)]
    slices = [m["shard"]["students"] for m in manifests]
    assert sorted(sum(slices, [])) == ["ada", "bo", "ed"] and all(slices)   # each student in one shard
    for k, (manifest, names) in enumerate(zip(manifests, slices), start=1):
        assert (manifest["shard"]["index"], manifest["shard"]["count"], manifest["shard"]["class_size"]) == \
            (k, SHARDS, 3)
        assert [r["student"] for r in rows(root / f"shard-{k}" / "grades.csv")] == names
        assert sorted(p.stem for p in (root / f"shard-{k}").glob("*.json") if p.name != "batch.json") == names


@pytest.mark.parametrize("size", [1, 2, 7, 10])
@pytest.mark.parametrize("count", [1, 3, 12])
def test_a_slice_depends_only_on_the_names(size, count):
    names = [f"s{i:02d}" for i in range(size)]
    slices = [batch.shard_of(names, k, count) for k in range(1, count + 1)]
    assert sorted(sum(slices, [])) == names                                  # disjoint and covering
    assert max(map(len, slices)) - min(map(len, slices)) <= 1
    shuffled = random.Random(size * 100 + count).sample(names, size)
    assert [batch.shard_of(shuffled, k, count) for k in range(1, count + 1)] == slices
    assert batch.class_digest(shuffled) == batch.class_digest(names)


def test_a_slice_is_the_same_under_any_hash_seed():
    script = ("from grader.instructor.batch import shard_of; "
              "print(shard_of(['bo', 'ada', 'cy', 'Ed', 'éa', 'di'], 2, 3))")
    seen = {subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO),
                                                                "PYTHONHASHSEED": seed},
                           capture_output=True, text=True, timeout=60, check=True).stdout for seed in ("1", "2")}
    assert len(seen) == 1


@pytest.mark.parametrize("value", ["0/3", "4/3", "1/0", "a/b", "3", "-1/2", "1/2/3", "²/3"])
def test_a_bad_shard_is_a_usage_error_naming_the_option(tmp_path, value):
    (tmp_path / "ada").mkdir()
    code, said = run(grade_batch, tmp_path, "--out", tmp_path / "out", "--shard", value)
    assert code == 2 and "--shard" in said and value in said
    assert not (tmp_path / "out").exists()


def test_a_shard_folder_takes_only_its_own_shard(graded):
    root, _ = graded
    for out, shard, held in (("shard-1", "2/2", "1/2"), ("whole", "1/2", "whole class"), ("shard-1", None, "1/2")):
        before = (root / out / "batch.json").read_bytes()
        code, said = run(grade_batch, root / "class", "--out", root / out, *(["--shard", shard] if shard else []))
        assert code == 2 and held in said, said
        assert (root / out / "batch.json").read_bytes() == before


def test_a_shard_with_no_student_writes_an_empty_slice(graded):
    root, _ = graded
    code, said = run(grade_batch, root / "class", "--out", root / "empty", "--shard", "6/6", "--public")
    assert code == 0, said
    assert rows(root / "empty" / "grades.csv") == []
    shard = json.loads((root / "empty" / "batch.json").read_text())["shard"]
    assert (shard["index"], shard["count"], shard["class_size"], shard["students"]) == (6, 6, 3, [])


def edit_manifest(folder: Path, change) -> None:
    path = folder / "batch.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def copy_of(root: Path, tmp_path: Path, name: str, change=None, label: str = "copy") -> Path:
    copy = tmp_path / f"{label}-of-{name}"
    shutil.copytree(root / name, copy)
    if change is not None:
        edit_manifest(copy, change)
    return copy


REFUSALS = {  # what is changed in shard 2's batch.json, and what the refusal says (it names the folder but in
    "seed": (lambda d: d.update(seed=4), "seed"),                                            # the last case)
    "mode": (lambda d: d.update(mode="hidden"), "mode"),
    "topics": (lambda d: d.update(topics=["kv_cache", "latency"]), "topics"),
    "grader version": (lambda d: d["tool"].update(version="0.0.1"), "grader version"),
    "number of shards": (lambda d: d["shard"].update(count=3), "number of shards"),
    "class": (lambda d: d["shard"].update(class_size=5, class_sha256="0" * 64), "different classes"),
    "maximum": (lambda d: d["max_scores"].update(kv_cache=99), "maximum of kv_cache"),
    "students": (lambda d: d["shard"].update(students=d["shard"]["students"][:-1]), "not the class of 3"),
}


@pytest.mark.parametrize("what", REFUSALS)
def test_merge_refuses_shards_that_differ(graded, tmp_path, what):
    root, _ = graded
    change, said = REFUSALS[what]
    odd = copy_of(root, tmp_path, "shard-2", change)
    code, output = run(merge_cmd, root / "shard-1", odd, "--out", tmp_path / "out")
    assert code == 2 and said in output, output
    assert what == "students" or str(odd) in output
    assert not (tmp_path / "out").exists()


def test_merge_refuses_missing_repeated_and_overlapping_shards_and_other_folders(graded, tmp_path):
    root, _ = graded
    one, two = root / "shard-1", root / "shard-2"
    again = copy_of(root, tmp_path, "shard-1")
    relabelled = copy_of(root, tmp_path, "shard-1", lambda d: d["shard"].update(index=2), "relabelled")
    cases = [([one], ["2 of 2", "missing"]), ([one, one], ["given twice"]), ([one, again], ["1/2", "given twice"]),
             ([one, relabelled], ["ada", "two shards", str(relabelled)]), ([one, root / "whole"], ["whole class"]),
             ([one, root / "class"], ["batch.json"])]
    for folders, expected in cases:
        code, said = run(merge_cmd, *folders, "--out", tmp_path / "out")
        assert code == 2 and all(s in said for s in expected), (folders, said)
        assert not (tmp_path / "out").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("")
    code, said = run(merge_cmd, one, two, "--out", tmp_path / "full")
    assert code == 2 and "not an empty folder" in said
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["keep.txt"]


def test_merge_refuses_a_results_file_that_is_not_one(graded, tmp_path):
    root, _ = graded
    broken = copy_of(root, tmp_path, "shard-1")
    doc = json.loads((broken / "ada.json").read_text())
    (broken / "ada.json").write_text(json.dumps(doc | {"score": doc["max_score"] + 1}))
    code, said = run(merge_cmd, broken, root / "shard-2", "--out", tmp_path / "out")
    assert code == 2 and str(broken / "ada.json") in said
    assert not (tmp_path / "out").exists()


FORGERIES = {  # a results document that is valid on its own but not the one its shard graded
    "seed": (lambda d: d.update(seed=d["seed"] + 1), "seed"),
    "mode": (lambda d: d.update(mode="hidden"), "mode"),
    "topics": (lambda d: d["topics"][0].update(id="latency"), "topics"),
    "student": (lambda d: d["submission"].update(path=d["submission"]["path"].replace("ada", "bo")), "bo"),
}


@pytest.mark.parametrize("what", FORGERIES)
def test_merge_refuses_a_results_file_its_shard_did_not_grade(graded, tmp_path, what):
    """A document whose seed, mode or topics differ from its shard's manifest, or which grades another student's
    upload (one copied over a classmate's file), is refused before anything is written."""
    root, _ = graded
    forged = copy_of(root, tmp_path, "shard-1")
    doc = json.loads((forged / "ada.json").read_text())
    change, named = FORGERIES[what]
    change(doc)
    (forged / "ada.json").write_text(json.dumps(doc))
    code, said = run(merge_cmd, forged, root / "shard-2", "--out", tmp_path / "out")
    assert code == 2 and str(forged / "ada.json") in said and named in said, said
    assert not (tmp_path / "out").exists()
