"""Sandbox v3, red team: what a submission sends to a served toy model is its own error, and costs the grader little.

The models run in the grader on arguments the child chose (through the allowlisting codec: floats may be inf or
nan, tensors any shape up to the message limit). Found:
- `target.next_probs([float("inf")])` raised OverflowError (int(inf)) in the grader: every speculative_generate
  check became "grader error while running this check" with `internal_error` set, not a submission error.
  Fixed in grader/sandbox/served.py: any exception of a served call is answered to the child as an error.
- the speculative target logs every accepted `score` call, unbounded, with prefixes of up to 4096 tokens: a call
  that loops on `target.score(zeros(4096), 1)` makes the grader keep 30-80 MiB per second of its time (0.2-1 GiB
  over one 10 s call; a check's budget is 120 s and every model of a check stays in `sub._served` until it ends),
  so a submission can push the grader towards its own memory limit. Not fixed: cap the log (decoding's models
  keep at most MAX_LOG prefixes of at most 512 tokens), or the bytes a request's callbacks may send.
- decoding's models converted a 1-D integer tensor to a list before checking its length: a 60 MiB uint8 tensor
  cost the grader ~550 MiB and seconds per call. Fixed in served.py: arguments past MAX_ARGUMENT_ITEMS are refused
  before any object sees them.
"""
import json
import subprocess
import sys
import textwrap

from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "speculative.py").read_text()

# Odd arguments to the served models, caught by the submission, before doing the real work.
ODD_ARGUMENTS = '''
_generate = speculative_generate
SEEN = []


def speculative_generate(target, draft, prompt, max_new_tokens, gamma, generator):
    for model in (target, draft):
        for call in (lambda: model.next_probs([float("inf")]), lambda: model.next_probs([float("nan")]),
                     lambda: model.score([float("-inf")], 1), lambda: model.score(torch.full((3,), float("inf")), 1),
                     lambda: model.next_probs(torch.zeros(2, 2)), lambda: model.score([0], float("inf"))):
            try:
                call()
            except Exception as exc:
                SEEN.append(type(exc).__name__)
    return _generate(target, draft, prompt, max_new_tokens, gamma, generator)
'''

# The first call floods the target's score log for 9 s (the call timeout is 10 s), then every call does the real work.
FLOOD = '''
import time as _time

_generate = speculative_generate
_FLOODED = []


def speculative_generate(target, draft, prompt, max_new_tokens, gamma, generator):
    if not _FLOODED:
        _FLOODED.append(1)
        long, end = torch.zeros(4096, dtype=torch.int64), _time.monotonic() + 9.0
        while _time.monotonic() < end:
            target.score(long, 1)
    return _generate(target, draft, prompt, max_new_tokens, gamma, generator)
'''


def test_odd_arguments_to_a_served_model_are_the_submissions_error_not_the_graders(graded_speculative):
    checks = graded_speculative("odd", SOLUTION + ODD_ARGUMENTS)
    assert not [c["id"] for c in checks.values() if c.get("internal_error") or "grader error" in c["message"]]
    generate = [c for c in checks.values() if c["hint"] == "speculative.speculative_generate"]
    assert generate and all(c["status"] == "passed" for c in generate), [c["message"] for c in generate]


GRADER_PEAK = '''
import json, pathlib, resource, sys
from grader.grading import grade
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
doc = grade(pathlib.Path(sys.argv[1]), ["speculative"], hidden=False, seed=5, with_progress=False)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
checks = {c["id"].split(".")[-1]: c["status"] for t in doc["topics"] for c in t["checks"]}
print(json.dumps({"grew": after - before, "checks": checks}))
'''


def test_a_flood_of_calls_to_a_served_model_does_not_grow_the_grader(tmp_path):
    folder = tmp_path / "flood"
    folder.mkdir()
    (folder / "speculative.py").write_text(SOLUTION + FLOOD)
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    (baseline / "speculative.py").write_text(SOLUTION)
    grew = {}
    for name, sub in (("baseline", baseline), ("flood", folder)):
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(GRADER_PEAK), str(sub)], cwd=REPO,
                             capture_output=True, text=True, timeout=180, check=True)
        report = json.loads(out.stdout.strip().splitlines()[-1])
        grew[name] = report["grew"]
    assert report["checks"]["verify_bonus_token"] == "passed"            # a neighbour keeps its points
    # thousands of logged prefixes of 4096 tokens: 0.2-1 GiB kept by the grader today, by the machine's speed
    assert grew["flood"] - grew["baseline"] < 96 * 2**20, grew


DECODING = (REPO / "solutions" / "decoding.py").read_text()

# The first HUGE_CALLS calls hand the served model a 60 MiB tensor of token ids (uint8: every one in the vocabulary).
HUGE_CALLS = 3
HUGE_ARGUMENT = f'''
_greedy = greedy_decode
_SENT = []


def greedy_decode(model, *args, **kwargs):
    if len(_SENT) < {HUGE_CALLS}:
        _SENT.append(1)
        try:
            model(torch.zeros(60 * 2**20, dtype=torch.uint8))
        except Exception:
            pass
    return _greedy(model, *args, **kwargs)
'''

GRADER_PEAK_DECODING = GRADER_PEAK.replace('["speculative"]', '["decoding"]')


def test_a_huge_argument_to_a_served_model_is_refused_before_the_model_converts_it(tmp_path):
    """Found: decoding's models turned a 1-D integer tensor into a list before checking its length: 60 MiB of
    uint8 token ids became ~550 MiB and seconds of the grader's time per call. A message from a child is now
    refused past the reply budget (codec.TooLarge) before it is decoded: the three checks that sent one fail as
    the submission's own error, and the rest keep their points."""
    folder = tmp_path / "huge"
    folder.mkdir()
    (folder / "decoding.py").write_text(DECODING + HUGE_ARGUMENT)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(GRADER_PEAK_DECODING), str(folder)], cwd=REPO,
                         capture_output=True, text=True, timeout=180, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    refused = [name for name, status in report["checks"].items() if status != "passed"]
    assert len(refused) == HUGE_CALLS and all(
        report["checks"][name] == "failed" for name in refused), report["checks"]
    # the 60 MiB frame is neither kept nor decoded, nor is the list of 60M ints made
    assert report["grew"] < 320 * 2**20, report["grew"]
