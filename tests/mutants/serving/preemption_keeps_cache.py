"""Bug: a preempted request comes back with its cache as it was, so its prompt and tokens are never recomputed."""


def _resume(state, request, record):
    if record["preemptions"] == 0:
        state["todo"], state["cached"] = request["prompt_tokens"] + record["output_tokens"], 0
