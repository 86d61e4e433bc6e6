"""Hostile submission: reads the seed of the generator a check hands it. Checks made it from their own seed
(`sub.make(toys.generator, seed)`), so `generator.initial_seed()` showed the check's seed, a hash of the run's --seed
and the check id from which a small --seed (a CI run number) is found by trying them all. The child now gets a
seed keyed with a secret of the grader process (`Submission.generator`)."""
import re

from grader import toys
from grader.grading import grade
from grader.sandbox import remote
from grader.instructor.selftest import SOLUTIONS_DIR

REPORTS_SEED = '''

def empirical_distribution(probs, num_samples, generator):
    raise ValueError(f"generator seed={generator.initial_seed()}")
'''
OFFSETS = range(8)  # checks also hand generators seeded seed + 1, seed + 2, ...


def test_a_check_hands_the_child_no_generator_seeded_with_its_own_seed(tmp_path, monkeypatch):
    handed = []  # every seed a generator was built from in a child, hidden checks' included
    make = remote.Submission.make

    def recorded(self, factory, *args, **kwargs):
        if factory is toys.generator:
            handed.append(args[0])
        return make(self, factory, *args, **kwargs)

    monkeypatch.setattr(remote.Submission, "make", recorded)
    (tmp_path / "sampling.py").write_text((SOLUTIONS_DIR / "sampling.py").read_text() + REPORTS_SEED)
    doc = grade(tmp_path, ["sampling"], hidden=True, seed=12345, with_progress=False,
                only={"empirical_distribution"})
    checks = doc["topics"][0]["checks"]
    seeds = {check["seed"] + k for check in checks for k in OFFSETS}
    # public messages show what the submission read (hidden ones show only the check's title)
    shown = {check["seed"]: int(found.group(1)) for check in checks
             if (found := re.search(r"generator seed=(\d+)", check["message"]))}
    assert len(shown) >= 3 and {c["visibility"] for c in checks} == {"public", "hidden"}, checks
    assert not seeds & set(shown.values()), shown
    assert len(handed) >= len(checks) and not seeds & set(handed), (handed, seeds)
    assert len(set(shown.values())) == len(shown)  # keyed, the seeds still differ where the checks' do
