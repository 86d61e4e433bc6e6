"""The fixed per-task results of the public checks: two prompt comparisons and three families of tasks run at
three reasoning efforts. Results are written out as strings of 1 (correct) and 0 (wrong), one character a task;
tokens and seconds follow simple formulas so the cases stay readable.
"""


def results(outcomes: str, tokens, seconds_per_token: float = 1 / 80, overhead: float = 0.5) -> list:
    """Per-task results from a string of 1/0 outcomes and each task's token count (a function of the index)."""
    return [{"correct": outcome == "1", "tokens": tokens(i),
             "seconds": round(overhead + tokens(i) * seconds_per_token, 3)} for i, outcome in enumerate(outcomes)]


def base_tokens(i: int) -> int:
    """Tokens a task takes with the clear prompt: 900 to 1,590."""
    return 900 + (i * 137) % 700


# Forty code-review questions. The clear prompt states the task once; the padded prompt is the same text with
# "Think very carefully. Take a deep breath and consider every detail." sentences added: 64 more input tokens,
# and the model reasons longer. Padded: 2 tasks lost, 4 won over the clear prompt (30/40 against 32/40).
CLEAR = "1011010111010111111001111111011111111001"
PADDED = "1110011111010111111001111101111111111101"
CLEAR_RESULTS = results(CLEAR, base_tokens)
PADDED_RESULTS = results(PADDED, lambda i: base_tokens(i) + 64 + 350 + (i * 53) % 200, overhead=0.8)

# The same questions with the repository's test command and one worked example of the expected output format
# added to the clear prompt: 1 task lost, 11 won (26/40 against 36/40), for some 250 more tokens a task.
BASELINE = "1001111011110101100111011111011011101000"
IMPROVED = "1101111111111111011111111111011111111011"
BASELINE_RESULTS = results(BASELINE, base_tokens)
IMPROVED_RESULTS = results(IMPROVED, lambda i: base_tokens(i) + 250 + (i * 31) % 40)

# Whether each answer came with something a reader can check: with the test command in the prompt, most answers
# quote a test run; the baseline's answers rarely cite anything. The padded comparison says nothing (None).
BASELINE_VERIFIABLE = "0000100000000010000000000100000000000000"
IMPROVED_VERIFIABLE = "1101111111111011011111111111011111101011"
for result, mark in zip(BASELINE_RESULTS, BASELINE_VERIFIABLE):
    result["verifiable"] = mark == "1"
for result, mark in zip(IMPROVED_RESULTS, IMPROVED_VERIFIABLE):
    result["verifiable"] = mark == "1"

COMPARISONS = {
    "clear prompt vs padded prompt": (CLEAR_RESULTS, PADDED_RESULTS),
    "padded prompt vs clear prompt": (PADDED_RESULTS, CLEAR_RESULTS),
    "baseline prompt vs prompt with a worked example": (BASELINE_RESULTS, IMPROVED_RESULTS),
    "prompt with a worked example vs baseline prompt": (IMPROVED_RESULTS, BASELINE_RESULTS),
}

# Discordant pairs (tasks only a got right, tasks only b got right) whose exact p-values are worked out by hand
# in tests/topics/test_reasoning.py: none, 5-0 (never significant at n = 5), 9-1, 3-5, 0-6 and 2-12.
DISCORDANT = [(0, 0), (5, 0), (9, 1), (3, 5), (0, 6), (2, 12)]


def discordant_results(only_a: int, only_b: int, both: int = 3, neither: int = 2) -> tuple[list, list]:
    """Paired results with the given discordant counts and some concordant tasks; b uses 10 more tokens a task."""
    a = "1" * only_a + "0" * only_b + "1" * both + "0" * neither
    b = "0" * only_a + "1" * only_b + "1" * both + "0" * neither
    return results(a, lambda i: 500 + i), results(b, lambda i: 510 + i)


def effort_results(correct: int, tokens_per_task: int, spread: int, tasks: int = 20) -> list:
    """`tasks` results at one effort level: the first `correct` right, tokens around tokens_per_task."""
    outcomes = "1" * correct + "0" * (tasks - correct)
    return results(outcomes, lambda i: tokens_per_task + (i * 7919) % spread)


# Twenty tasks per family, at three efforts: (correct, tokens per task, spread of tokens).
FAMILIES = {
    # the KV-cache bytes of a given model config: a closed-form formula, low effort suffices
    "closed-form formula": {"low": effort_results(19, 350, 120), "medium": effort_results(19, 1100, 400),
                            "high": effort_results(20, 3200, 900)},
    # which call sites break when a function in another module changes its signature: effort helps
    "cross-module reasoning": {"low": effort_results(9, 600, 200), "medium": effort_results(14, 2400, 800),
                               "high": effort_results(18, 7000, 2000)},
    # the timeout a private config file (never given to the model) sets: no effort can know it
    "a private file the model was never given": {"low": effort_results(2, 400, 150),
                                                 "medium": effort_results(3, 1900, 600),
                                                 "high": effort_results(3, 6500, 1500)},
}
TARGET = 0.85
