"""Bug: output throughput is the mean of each request's own tokens per second, not the server's tokens per second."""


def _output_throughput(completed, duration):
    rates = [r["output_tokens"] / (r["finish"] - r["arrival"]) for r in completed]
    return sum(rates) / len(rates) if rates else 0.0
