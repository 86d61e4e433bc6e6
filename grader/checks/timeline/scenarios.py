"""The fixed model, GPUs and agent sessions of the public timeline checks.

Llama-3-8B-like numbers: 8.03B parameters in bf16, 131,072 KV bytes per token (32 layers, 8 KV heads of 128,
K and V, 2 bytes), d_model 4096. H100 SXM: 989 TFLOP/s dense bf16, 3.35 TB/s; H200: the same compute, 4.8 TB/s.
"""

LLAMA3_8B_PARAMS = 8_030_261_248
LLAMA3_8B = {"params": LLAMA3_8B_PARAMS, "weight_bytes": 2 * LLAMA3_8B_PARAMS, "kv_bytes_per_token": 131_072,
             "n_layers": 32, "d_model": 4096}
H100 = {"peak_flops": 989e12, "mem_bandwidth": 3.35e12}
H200 = {"peak_flops": 989e12, "mem_bandwidth": 4.8e12}
GPUS = {"H100": H100, "H200": H200}


def user(tokens):
    """The user's message of `tokens` tokens joins the context."""
    return {"kind": "user", "tokens": tokens}


def generate(tokens):
    """The model writes `tokens` tokens."""
    return {"kind": "generate", "tokens": tokens}


def tool(seconds):
    """Waiting `seconds` for a tool."""
    return {"kind": "tool", "seconds": seconds}


def tool_result(tokens):
    """A tool's output of `tokens` tokens joins the context."""
    return {"kind": "tool_result", "tokens": tokens}


def network(seconds):
    """Waiting `seconds` on the network."""
    return {"kind": "network", "seconds": seconds}


def tool_round(call_tokens, seconds, result_tokens):
    """The model writes a tool call, waits for the tool, and reads its result."""
    return [generate(call_tokens), tool(seconds), tool_result(result_tokens)]


# The three sessions of the issue; network is the request upload and the last streamed bytes.
SESSIONS = {
    # summarise a long document: prefill dominates the work, a short answer
    "long input / short output": [network(0.03), user(7000), generate(150), network(0.03)],
    # write a long piece from a short request: thousands of memory-bound decode steps
    "short input / long output": [network(0.03), user(200), generate(3000), network(0.03)],
    # an agent that calls a tool six times before answering
    "frequent tool calls": [network(0.03), user(1500)] + 6 * tool_round(40, 0.25, 300)
                           + [generate(250), network(0.03)],
}

# The session the three optimisations start from: three sequential tool calls, then a long answer.
BASELINE = [user(3000)] + 3 * tool_round(60, 0.8, 600) + [generate(800)]
# The same answer, four times shorter.
SHORTER_OUTPUT = [user(3000)] + 3 * tool_round(60, 0.8, 600) + [generate(200)]
# The three calls issued in one message and run concurrently: one wait, three results at once.
PARALLEL_TOOLS = [user(3000)] + tool_round(150, 0.8, 1800) + [generate(800)]

# (what changes, events, prefix_cache, the segment kind it is meant to shorten)
OPTIMISATIONS = [
    ("a prefix cache", BASELINE, True, "prefill"),
    ("a shorter output", SHORTER_OUTPUT, False, "decode"),
    ("parallel tool calls", PARALLEL_TOOLS, False, "tool"),
]

# A small session for the layout rules: a wait before the first prefill (it counts towards ttft), a one-token
# generate (a prefill and no decode run) and an empty tool result.
LAYOUT = [network(0.05), user(40), generate(1), tool(0.5), tool_result(0), user(12), generate(6), network(0.05)]
