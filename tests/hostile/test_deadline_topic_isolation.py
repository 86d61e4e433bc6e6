"""A topic that hangs or crashes everywhere costs its own points only: graded first, beside a correct kv_cache.py,
it leaves kv_cache full marks (each topic has its own share of the run's deadline, and a topic whose checks time
out three times in a row is stopped, saying so once).

Before the shares, a sampling.py whose functions slept took the whole 120 s deadline and kv_cache scored 0/121.
"""
import pytest

from grader.engine.plugin import STOPPED, TIMEOUTS_TO_STOP
from grader.grading import grade
from grader.results import problems
from grader.sandbox import remote
from grader.sandbox.policy import REPO

CALL_TIMEOUT_S = 2.0  # each hang needs one timeout to prove it, not the 10 s default (kv_cache's calls take ms)

FUNCTIONS = ("apply_temperature", "top_k_filter", "top_p_filter", "filtered_probs", "sample", "greedy",
             "empirical_distribution")
# the body every function of sampling.py runs instead of its answer
ATTACKS = {
    "endless_loop": "while True:\n        pass",
    "sleep": "import time\n    time.sleep(10**6)",
    "busy_threads": "import threading, time\n    for _ in range(8):\n"
                    "        threading.Thread(target=lambda: sum(iter(int, 1)), daemon=True).start()\n"
                    "    time.sleep(10**6)",
    "ignored_sigterm": "import signal, time\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                       "    while True:\n        time.sleep(0.01)",
    "stack_overflow": "import sys\n    sys.setrecursionlimit(10**7)\n    f = lambda n: f(n + 1) + 1\n    f(0)",
    "huge_return": "import torch\n    return torch.zeros(48 * 2**20, dtype=torch.int8)",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_hostile_topic_leaves_its_neighbour_full_marks(tmp_path, monkeypatch, attack):
    monkeypatch.setattr(remote, "DEFAULT_CALL_TIMEOUT", CALL_TIMEOUT_S)
    source = (REPO / "solutions" / "sampling.py").read_text()
    for function in FUNCTIONS:
        source += f"\n\ndef {function}(*args, **kwargs):\n    {ATTACKS[attack]}\n"
    (tmp_path / "sampling.py").write_text(source)
    (tmp_path / "kv_cache.py").write_text((REPO / "solutions" / "kv_cache.py").read_text())
    doc = grade(tmp_path, ["sampling", "kv_cache"], hidden=True, seed=1, with_progress=False)
    assert problems(doc) == []
    sampling, kv_cache = doc["topics"]
    assert sampling["id"] == "sampling" and sampling["score"] == 0
    assert kv_cache["score"] == kv_cache["max_score"] > 0, [c["message"] for c in kv_cache["checks"]][:3]
    if attack in ("endless_loop", "sleep", "busy_threads", "ignored_sigterm"):  # hangs: stopped, said once
        statuses = [c["status"] for c in sampling["checks"]]
        assert statuses[:TIMEOUTS_TO_STOP] == ["timeout"] * TIMEOUTS_TO_STOP
        assert all(s == "timeout" for s in statuses) and STOPPED in sampling["message"]
        assert not any(STOPPED in c["message"] for c in sampling["checks"])
