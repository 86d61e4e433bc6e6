"""The public comparison: a five-turn chat with a stable system prompt, built two ways.

`stable`: system prompt, then the history, then the new user message — each prompt extends the previous one,
so everything up to the new message can be read from the cache.
`timestamped`: the same prompt with the current time inserted at the very front, so every turn's prompt
differs from the previous one at its second token and nothing can be reused, yet every turn pays to write.
Token ids are arbitrary but fixed; prices are per token, shaped like a hosted API's (cache writes cost 1.25x
input, cache reads 0.1x).
"""
SYSTEM = list(range(1000, 2500))  # 1,500 tokens of instructions and tool descriptions
TURNS = 5
BLOCK_SIZE = 16
MIN_TOKENS = 1024
PRICES = {"input": 3e-6, "cache_write": 3.75e-6, "cache_read": 3e-7, "output": 1.5e-5}


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


def conversation(timestamped: bool) -> list:
    """The session's turns: {"prompt": token ids, "output_tokens": n}."""
    turns, history = [], []
    for turn in range(TURNS):
        prompt = SYSTEM + history + user_message(turn)
        turns.append({"prompt": timestamp(turn) + prompt if timestamped else prompt,
                      "output_tokens": output_tokens(turn)})
        history = history + user_message(turn) + reply(turn)
    return turns


SESSIONS = {"stable prefix, dynamic part at the end": conversation(timestamped=False),
            "timestamp at the front of every turn": conversation(timestamped=True)}
