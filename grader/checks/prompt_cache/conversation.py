"""The sessions of the public session_cost checks. Token ids are arbitrary but fixed; the caching rules they are
priced under (whose, and from when) live in pricing.py.

- `chat`: a five-turn chat on a stable system prompt, built two ways. Stable: system prompt, history, new user
  message, so each prompt extends the previous one. Timestamped: the current time at the very front, so every
  prompt differs from the previous one at its second token: nothing is read, yet every turn pays to write.
- `agent_session`: a coding agent's tasks with a failed turn that is redone (the failed answer is billed and
  thrown away; the retry sends the same prompt) and a compaction call (its prompt is the history, its output a
  summary that replaces the history after the system prompt, so the cached history is lost).
- `qa_session`: a short question-and-answer session, with or without 1,500 tokens of tool descriptions it never
  uses in front: the padding lifts every prompt over the minimum length, so the hit rate rises, and so does
  the bill.
"""
from grader.engine import tr

SYSTEM = list(range(1000, 2500))  # 1,500 tokens of instructions and tool descriptions
UNUSED_TOOLS = list(range(3000, 4500))  # 1,500 tokens of tool descriptions the Q&A session never needs
QA_SYSTEM = list(range(5000, 5200))  # 200 tokens of instructions
COMPACT = list(range(9000, 9030))  # the instruction that asks for a summary of the history
SUMMARY = list(range(9500, 9740))  # the compaction call's output: 240 tokens
FAILED_OUTPUT = 310  # tokens of a malformed tool call, billed and thrown away
TURNS = 5


def user_message(turn: int) -> list:
    """The user's message of `turn` (40 to 68 tokens)."""
    start = 20_000 + 100 * turn
    return list(range(start, start + 40 + 7 * turn))


def output_tokens(turn: int) -> int:
    """Length of the model's reply in `turn`."""
    return 120 + 30 * turn


def reply(turn: int) -> list:
    """The model's reply in `turn`, which the next prompt carries in its history."""
    start = 30_000 + 1000 * turn
    return list(range(start, start + output_tokens(turn)))


def timestamp(turn: int) -> list:
    """`[time: 12:0<turn>]` as five tokens; the second one changes every turn."""
    return [9, 100 + turn, 11, 12, 13]


def chat(timestamped: bool) -> list:
    """The chat's turns: {"prompt": token ids, "output_tokens": n}."""
    turns, history = [], []
    for turn in range(TURNS):
        prompt = SYSTEM + history + user_message(turn)
        turns.append({"prompt": timestamp(turn) + prompt if timestamped else prompt,
                      "output_tokens": output_tokens(turn)})
        history = history + user_message(turn) + reply(turn)
    return turns


def agent_session() -> list:
    """Four tasks: the answer to task 1 fails and is redone; a compaction call comes before task 3."""
    turns, history = [], []
    for task in range(4):
        if task == 3:
            turns.append({"prompt": SYSTEM + history + COMPACT, "output_tokens": len(SUMMARY)})
            history = SUMMARY
        prompt = SYSTEM + history + user_message(task)
        if task == 1:
            turns.append({"prompt": prompt, "output_tokens": FAILED_OUTPUT})
        turns.append({"prompt": prompt, "output_tokens": output_tokens(task)})
        history = history + user_message(task) + reply(task)
    return turns


def qa_session(padded: bool) -> list:
    """Four questions on a 200-token system prompt (every prompt under 1,024 tokens), optionally behind
    UNUSED_TOOLS."""
    turns, history = [], []
    for turn in range(4):
        prompt = (UNUSED_TOOLS if padded else []) + QA_SYSTEM + history + user_message(turn)
        turns.append({"prompt": prompt, "output_tokens": output_tokens(turn)})
        history = history + user_message(turn) + reply(turn)
    return turns


CHATS = {"stable prefix, dynamic part at the end": chat(timestamped=False),
         "timestamp at the front of every turn": chat(timestamped=True)}
QA = {"lean": qa_session(padded=False), "padded with unused tool descriptions": qa_session(padded=True)}


def named(name: str) -> str:
    """A session's name in CHATS or QA (the goldens' keys are made of the English one) in the run's language."""
    return {"stable prefix, dynamic part at the end": tr("stable prefix, dynamic part at the end"),
            "timestamp at the front of every turn": tr("timestamp at the front of every turn"),
            "lean": tr("lean"),
            "padded with unused tool descriptions": tr("padded with unused tool descriptions")}[name]
