"""The hand-worked agent tasks of the public latency checks, each answer derived by hand in a comment.

Durations are whole seconds (or exact decimals where a tie of decimals is the point), so every sum is exact.
"""

# A coding agent fixes a failing test. Model calls: plan, propose_fix, write_patch, report; a tool round trip
# (fetch_issue) sits between propose_fix and write_patch. The two searches both need only the plan, but
# search_docs was run after search_code out of habit (an `order` edge). edit_file needs the file it read.
AGENT_DURATIONS = {
    "plan": 3.0,          # model call: read the task, stream a plan (visible)
    "search_code": 3.0,   # grep the repository
    "search_docs": 4.0,   # search the documentation
    "read_log": 5.0,      # read the failing CI log
    "read_file": 1.0,     # read the source file to edit
    "propose_fix": 4.0,   # model call: decide the fix, emit a tool call
    "fetch_issue": 2.0,   # tool round trip: fetch the linked issue
    "write_patch": 5.0,   # model call: write the patch
    "edit_file": 1.0,     # apply the patch to the file
    "run_tests": 20.0,    # the test suite
    "report": 2.0,        # model call: tell the user (visible)
}
AGENT_DEPS = {
    "search_code": ["plan"], "search_docs": ["plan"], "read_log": ["plan"], "read_file": ["plan"],
    "propose_fix": ["search_code", "search_docs", "read_log"],
    "fetch_issue": ["propose_fix"],
    "write_patch": ["fetch_issue"],
    "edit_file": ["write_patch", "read_file"],
    "run_tests": ["edit_file"],
    "report": ["run_tests"],
}
AGENT_ORDER = {"search_docs": ["search_code"]}
AGENT = (AGENT_DURATIONS, AGENT_DEPS, AGENT_ORDER)
# schedule, by hand:
#   plan 0-3; search_code 3-6; search_docs waits for search_code: 6-10; read_log 3-8; read_file 3-4;
#   propose_fix max(6, 10, 8) = 10: 10-14; fetch_issue 14-16; write_patch 16-21; edit_file max(21, 4): 21-22;
#   run_tests 22-42; report 42-44.
# critical path: total 44 = 3 + 3 + 4 + 4 + 2 + 5 + 1 + 20 + 2 along
#   plan, search_code, search_docs, propose_fix, fetch_issue, write_patch, edit_file, run_tests, report
#   (through read_log the chain reaches propose_fix at 8 < 10; the tests alone are 20 of the 44 s).
# Without the order edge the task would still take 3 + 5 + 4 + 2 + 5 + 1 + 20 + 2 = 42 s: summing every step
# (as if nothing ran in parallel) gives 50 s.

# (label, change, why): the what-ifs of the lesson, each worked by hand.
AGENT_WHAT_IFS = [
    # fetch_issue inherits propose_fix's deps: starts at max(6, 10, 8) = 10, ends 12; write_patch 12-17; edit_file
    # 17-18; run_tests 18-38; report 38-40. Total 40, saving 4; path plan, search_code, search_docs, fetch_issue,
    # write_patch, edit_file, run_tests, report.
    ("remove one model round trip", {"remove": "propose_fix"}),
    # read_log ends at 6 instead of 8, still before search_docs ends at 10: total 44, saving 0, path unchanged.
    ("shorten the log read", {"shorten": "read_log", "seconds": 1.0}),
    # search_docs 3-7 beside search_code 3-6; propose_fix now waits for read_log: max(6, 7, 8) = 8, ends 12;
    # fetch_issue 12-14; write_patch 14-19; edit_file 19-20; run_tests 20-40; report 40-42. Total 42, saving 2;
    # path plan, read_log, propose_fix, fetch_issue, write_patch, edit_file, run_tests, report.
    ("run the two searches in parallel", {"parallel": ["search_docs", "search_code"]}),
    # read_log and read_file have no edge between them: nothing changes, saving 0.
    ("parallel steps that already run in parallel", {"parallel": ["read_log", "read_file"]}),
    # run_tests 22-32, report 32-34: total 34, saving 10: the test wait dominates the task.
    ("halve the test run", {"shorten": "run_tests", "seconds": 10.0}),
    # propose_fix with a warm prefix cache: 10-13.5, and every later step half a second earlier: total 43.5,
    # saving 0.5, path unchanged: a model-side setting hardly moves a task the tests dominate.
    ("a faster model call", {"shorten": "propose_fix", "seconds": 3.5}),
]

# (label, [a, b]): edit_file needs read_file directly; run_tests needs read_log through edit_file, write_patch,
# fetch_issue and propose_fix. Neither pair may run in parallel, in either order of naming.
DEPENDENT_PAIRS = [
    ("the edit beside the read it needs", ["edit_file", "read_file"]),
    ("the read beside the edit that needs it", ["read_file", "edit_file"]),
    ("the tests beside the log read the fix came from", ["read_log", "run_tests"]),
]

# first output: plan ends at 3 (report at 44), so the first visible output is at 3.
AGENT_VISIBLE = ["report", "plan"]
# The same task with a quick acknowledgement streamed at once: first output 0.5 s, total still 44 s (ack is a
# chain of its own, 0.5 s long), path unchanged. A faster first sentence is not a faster task.
ACK_DURATIONS = {**AGENT_DURATIONS, "ack": 0.5}
ACK = (ACK_DURATIONS, AGENT_DEPS, AGENT_ORDER)
ACK_VISIBLE = ["report", "plan", "ack"]

# Ties: small tasks whose longest chains tie exactly; the path is the smallest list of names.
TIES = [
    # diamond: start-zeta-end and start-alpha-end both take 1 + 2 + 1 = 4 -> [start, alpha, end] (alpha < zeta,
    # though zeta comes first in the dict)
    ("diamond", {"start": 1.0, "zeta": 2.0, "alpha": 2.0, "end": 1.0},
     {"zeta": ["start"], "alpha": ["start"], "end": ["zeta", "alpha"]}, None),
    # a longer chain that is smaller: [a, z] (1 + 2) ties [b] (3) -> [a, z]: ["a", ...] < ["b"]
    ("longer but smaller", {"b": 3.0, "a": 1.0, "z": 2.0}, {"z": ["a"]}, None),
    # a zero-second step on the chain: [a, c] and [a, b, c] both take 2 + 1 = 3 -> [a, b, c] (b < c)
    ("zero-second step", {"a": 2.0, "b": 0.0, "c": 1.0}, {"b": ["a"], "c": ["a", "b"]}, None),
    # an order edge ties a dependency: [p, r] and [q, r] both 2 + 5 = 7, r needs q and waits for p -> [p, r]
    ("order edge in the chain", {"q": 2.0, "p": 2.0, "r": 5.0}, {"r": ["q"]}, {"r": ["p"]}),
    # exact decimals: [b, c] takes 0.1 + 0.2 and [a] takes 0.3: mathematically equal, so [a] (in float64
    # 0.1 + 0.2 = 0.30000000000000004: only the contract's 1e-9 relative tolerance sees the tie)
    ("tie of decimals", {"a": 0.3, "b": 0.1, "c": 0.2}, {"c": ["b"]}, None),
]

# Graphs that no schedule exists for: (label, durations, deps, order, the steps the message may name).
BAD_TASKS = [
    # the log read needs the patch that needs the log read; zz_tail only hangs below the cycle
    ("cycle through deps", {"read_log": 1.0, "write_patch": 2.0, "aa_head": 1.0, "zz_tail": 1.0},
     {"read_log": ["write_patch", "aa_head"], "write_patch": ["read_log"], "zz_tail": ["write_patch"]}, None,
     ["read_log", "write_patch"]),
    # the cycle closes through an order edge
    ("cycle through order", {"search_code": 1.0, "search_docs": 1.0}, {"search_docs": ["search_code"]},
     {"search_code": ["search_docs"]}, ["search_code", "search_docs"]),
    ("step waiting for itself", {"plan": 1.0, "retry": 2.0}, {"retry": ["plan"]}, {"retry": ["retry"]},
     ["retry"]),
    ("unknown step in deps", {"plan": 1.0, "edit_file": 1.0}, {"edit_file": ["plan", "read_file"]}, None,
     ["read_file"]),
    ("unknown step with deps", {"plan": 1.0}, {"report": ["plan"]}, None, ["report"]),
    ("unknown step in order", {"plan": 1.0, "search_docs": 1.0}, {"search_docs": ["plan"]},
     {"search_docs": ["search_code"]}, ["search_code"]),
    ("negative duration", {"plan": 1.0, "run_tests": -20.0}, {"run_tests": ["plan"]}, None,
     ["run_tests", "durations"]),
]

# Measured runs of the agent task (seconds of five or four repeats) under one config each.
BASELINE_CONFIG = {"model": "small", "temperature": 0.2, "prefix_cache": False, "test_shards": 1}
BASELINE_RUN = {"config": BASELINE_CONFIG, "seconds": [44.0, 43.5, 46.0, 44.5, 45.0]}  # median 44.5
# (label, variant run): each changes one setting; the medians are worked by hand
ONE_CHANGE_RUNS = [
    # sorted 43.0 44.0 44.0 44.5 45.5: median 44.0, saving 0.5 s: the cache hardly moves a test-bound task
    ("prefix cache on", {"config": {**BASELINE_CONFIG, "prefix_cache": True},
                         "seconds": [44.0, 43.0, 45.5, 44.0, 44.5]}),
    # sorted 44.0 44.5 45.0: median 44.5, saving 0.0: the sampling setting does not move it at all
    ("greedy sampling", {"config": {**BASELINE_CONFIG, "temperature": 0.0}, "seconds": [44.5, 45.0, 44.0]}),
    # even count: sorted 29.0 29.5 30.5 31.0, median (29.5 + 30.5) / 2 = 30.0, saving 14.5: the test wait
    ("four test shards", {"config": {**BASELINE_CONFIG, "test_shards": 4}, "seconds": [29.0, 30.5, 29.5, 31.0]}),
    # a key the baseline lacks is a change too: sorted 43.5 44.0 45.0, median 44.0, saving 0.5
    ("speculative decoding added", {"config": {**BASELINE_CONFIG, "speculative": True},
                                    "seconds": [45.0, 43.5, 44.0]}),
]
# (label, variant run, the keys the ValueError must name)
CONFOUNDED_RUNS = [
    ("prefix cache and test shards together",
     {"config": {**BASELINE_CONFIG, "prefix_cache": True, "test_shards": 4}, "seconds": [29.5, 30.0, 29.0]},
     ["prefix_cache", "test_shards"]),
    ("a bigger model at greedy sampling",
     {"config": {**BASELINE_CONFIG, "model": "large", "temperature": 0.0}, "seconds": [52.0, 51.0]},
     ["model", "temperature"]),
    ("nothing changed", {"config": dict(BASELINE_CONFIG), "seconds": [44.0, 44.5]}, []),
]
