"""What each misconception of the serving topic would return, computed from the reference's own functions.

Most of simulate's misconceptions are changes of its inputs: an engine that ignores max_num_seqs runs as if there
were a seat for every request, one that hands out the first token without prefill as if prompt tokens cost
nothing, one that never chunks a prompt as if there were no token budget, one that admits what max_model_len
refuses as if there were no such limit. The two preemption misconceptions change one decision of the reference's
engine: which request is evicted, and whether an evicted one recomputes its cache. serving_metrics'
misconceptions change one field each; a prediction holds only the fields it changes.
"""
import math

SEAT_FOR_EVERY_REQUEST = 10 ** 6
LIMITS = ("kv_blocks", "block_size", "max_num_batched_tokens", "max_model_len")


def engine_run(ref, engine_class, requests: list, policy: str, max_num_seqs: int, cost: dict, limits: dict) -> list:
    """The records of an engine of class `engine_class` (the reference's Engine or a subclass) on valid inputs."""
    settings = {"block_size": 16, **limits}
    return engine_class(requests, policy, max_num_seqs, ref.validated_cost(cost), settings.get("kv_blocks"),
                        settings["block_size"], settings.get("max_num_batched_tokens"),
                        settings.get("max_model_len")).run()


def preemption_predictions(ref, requests: list, policy: str, max_num_seqs: int, cost: dict, limits: dict) -> dict:
    """The records of an engine that evicts the oldest running request, and of one whose evicted requests come
    back with their cache (no recomputation)."""
    class OldestFirst(ref.Engine):
        def victim(self):
            return self.running[0]

    class KeepsCache(ref.Engine):
        def resume(self, i):
            if self.records[i]["preemptions"] == 0:
                super().resume(i)

    return {"preempts_oldest": engine_run(ref, OldestFirst, requests, policy, max_num_seqs, cost, limits),
            "preemption_keeps_cache": engine_run(ref, KeepsCache, requests, policy, max_num_seqs, cost, limits)}


def simulate_predictions(ref, requests: list, policy: str, max_num_seqs: int, cost: dict, **limits) -> dict:
    """{misconception id: the records simulate would return under it}; `limits` are simulate's optional
    arguments (kv_blocks, block_size, max_num_batched_tokens, max_model_len)."""
    assert set(limits) <= set(LIMITS), limits
    predictions = {"ignores_max_num_seqs": ref.simulate(requests, policy, SEAT_FOR_EVERY_REQUEST, cost, **limits),
                   "first_token_without_prefill": ref.simulate(requests, policy, max_num_seqs,
                                                               {**cost, "per_prefill_token": 0.0}, **limits)}
    if limits.get("kv_blocks") is not None:
        predictions.update(preemption_predictions(ref, requests, policy, max_num_seqs, cost, limits))
    if limits.get("max_num_batched_tokens") is not None:
        predictions["prefill_not_chunked"] = ref.simulate(requests, policy, max_num_seqs, cost,
                                                          **{**limits, "max_num_batched_tokens": None})
    if limits.get("max_model_len") is not None:
        predictions["admits_over_max_model_len"] = ref.simulate(requests, policy, max_num_seqs, cost,
                                                                **{**limits, "max_model_len": None})
    return predictions


def nearest_rank(sorted_values: list, q: float) -> float:
    """The nearest-rank percentile: the smallest value with at least q% of the values at or below it."""
    return sorted_values[max(math.ceil(q / 100 * len(sorted_values)) - 1, 0)]


def nearest_rank_stats(ref, values: list, percentiles) -> dict:
    """A statistic's dict with its percentiles taken by nearest rank instead of interpolation."""
    stats = ref.summary(values, percentiles)
    ordered = sorted(values)
    for q in percentiles:
        if ordered:
            stats[ref.percentile_key(q)] = nearest_rank(ordered, float(q))
    return stats


def latency_values(ref, records: list) -> dict:
    """The values each latency statistic is computed from, over the given records."""
    return {"ttft": [ref.ttft(r) for r in records],
            "tpot": [ref.tpot(r) for r in records if ref.tpot(r) is not None],
            "itl": [gap for r in records for gap in ref.gaps(r)],
            "e2e": [ref.e2e(r) for r in records]}


def metrics_predictions(ref, records: list, percentiles=(50, 90, 99)) -> dict:
    """{misconception id: {field: the value serving_metrics would return under it}}."""
    done = [r for r in records if r["status"] == "ok"]
    with_tokens = [r for r in records if r["first_token"] is not None]
    # tpot over every token, the first one's wait included: e2e / output_tokens, one-token requests too
    whole_request = [ref.e2e(r) / r["output_tokens"] for r in done]
    wrong_latency = latency_values(ref, with_tokens)
    right_latency = latency_values(ref, done)
    return {
        "tpot_includes_first_token": {"tpot": ref.summary(whole_request, percentiles)},
        "failed_in_latency": {name: ref.summary(values, percentiles) for name, values in wrong_latency.items()},
        "mean_of_rates": {"output_throughput": sum(r["output_tokens"] / ref.e2e(r) for r in done) / len(done)
                          if done else 0.0},
        "nearest_rank_percentile": {name: nearest_rank_stats(ref, values, percentiles)
                                    for name, values in right_latency.items()},
    }
