"""Hand-made server logs for the public serving_metrics checks (times in quarter seconds: exact in float64)."""


def record(rid, arrival, token_times, status="ok", finish=None):
    """A record as simulate writes it; `finish` defaults to the last token's time."""
    return {"id": rid, "arrival": arrival, "first_token": token_times[0] if token_times else None,
            "token_times": list(token_times), "finish": token_times[-1] if finish is None else finish,
            "status": status, "prompt_tokens": 16, "output_tokens": len(token_times)}


# TTFTs 0.5, 1, 1.5, 2 and 10 s: p90 interpolates to 6.8 s where the nearest rank says 10 s.
SKEWED = [record(f"s{i}", 0.0, [ttft]) for i, ttft in enumerate([1.5, 0.5, 10.0, 2.0, 1.0])]
# An even count: the median lies halfway between the two middle values.
EVEN = [record(f"e{i}", 1.0, [1.0 + ttft]) for i, ttft in enumerate([4.0, 1.0, 3.0, 2.0])]
PERCENTILES = (25, 50, 90, 99, 99.9)

# TPOT (1 s and 2.5/3 s) leaves out the first token's wait and the one-token request b;
# ITL pools the five gaps 1, 1, 0.5, 1.5, 0.5 (mean 0.9 s, not the 0.917 s mean of per-request means).
TOKENS = [record("a", 0.0, [1.0, 2.0, 3.0]), record("b", 0.5, [2.0]), record("c", 1.0, [2.0, 2.5, 4.0, 4.5])]

# A request cancelled after three tokens and one timed out before its first: counted, never timed.
FAILED = [record("ok-1", 0.0, [1.0, 2.0]), record("cancelled", 0.0, [1.0, 5.0, 9.0], "cancelled", 9.5),
          record("timeout", 1.0, [], "timeout", 4.0), record("ok-2", 2.0, [3.0, 3.5, 4.0])]

# ttft, tpot, largest gap, e2e:  a 0.5, 0.25, 0.25, 1   b 0.25, -, -, 0.25   c 1, 0.375, 0.5, 1.75
#                                d 0.5, 0.5, 0.75, 1.5  (and a cancelled request that never counts)
SLO_LOG = [record("a", 0.0, [0.5, 0.75, 1.0]), record("b", 0.0, [0.25]), record("c", 1.0, [2.0, 2.5, 2.75]),
           record("d", 2.0, [2.5, 2.75, 3.5]), record("x", 0.0, [0.25], "cancelled", 0.5)]
# each SLO set sits exactly on some request's value: meeting an SLO is inclusive
SLOS = [{"ttft": 0.5}, {"ttft": 0.5, "tpot": 0.25}, {"itl": 0.5}, {"e2e": 1.5},
        {"ttft": 1.0, "tpot": 0.5, "itl": 0.75, "e2e": 1.75}, {}]
SLO_DURATION = 4.0

# Four streams of 81 tokens side by side in 11 s (7.4 tokens/s each, 29.5 for the server), and a cancelled one.
STREAM = [1.0 + 0.125 * k for k in range(81)]
CONCURRENT = [record(f"u{i}", 0.0, STREAM) for i in range(4)] + [record("gone", 0.0, STREAM[:9], "cancelled", 2.0)]
CONCURRENT_DURATION = 11.0

# Logs with nothing to time: no record at all, only failed requests, only one-token requests.
EMPTY = {"no records": [],
         "only failed": [record("c", 0.0, [1.0, 2.0], "cancelled", 2.5), record("t", 0.0, [], "timeout", 3.0)],
         "only one-token": [record("one", 0.0, [0.75]), record("two", 0.5, [2.0])]}
