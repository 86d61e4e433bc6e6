"""The fixed model, GPUs and agent sessions of the public timeline checks.

Every figure below is an input, named with its source and date:
- Llama-3-8B-like: Meta's meta-llama/Meta-Llama-3-8B config.json (released 18 April 2024): 32 layers,
  hidden_size 4096, 8 KV heads of 128; 8,030,261,248 parameters in bf16. KV bytes per token: 32 layers · K and V
  · 8 heads · 128 · 2 bytes = 131,072.
- H100 SXM5: NVIDIA H100 Tensor Core GPU datasheet (2022): 1,979 TFLOP/s bf16 with 2:4 sparsity, so 989 TFLOP/s
  dense; 3.35 TB/s HBM3.
- H200 SXM: NVIDIA H200 announcement at SC23 (13 November 2023) and datasheet: the H100's compute, 4.8 TB/s HBM3e.
"""

LLAMA3_8B_PARAMS = 8_030_261_248
LLAMA3_8B = {"params": LLAMA3_8B_PARAMS, "weight_bytes": 2 * LLAMA3_8B_PARAMS, "kv_bytes_per_token": 131_072,
             "n_layers": 32, "d_model": 4096}
H100 = {"peak_flops": 989e12, "mem_bandwidth": 3.35e12}
H200 = {"peak_flops": 989e12, "mem_bandwidth": 4.8e12}
GPUS = {"H100": H100, "H200": H200}

# The line past which no batch makes decode compute-bound. Each sequence of c cached tokens adds 2·params FLOPs
# and c·kv_bytes_per_token bytes to a step; only the weights are shared. Its compute outlasts its K/V read while
# c < 2·params·mem_bandwidth / (peak_flops·kv_bytes_per_token):
#   H100: 2 · 8,030,261,248 · 3.35e12 / (989e12 · 131,072) = 5.3803e22 / 1.2963e20 = 415.05 tokens,
#   H200: the same with 4.8e12 = 594.70 tokens.
# Beyond it the K/V read grows with the batch as fast as the compute: long contexts keep decode memory-bound
# whatever the batch (what GQA, MLA and quantised KV attack: fewer K/V bytes per token). That is the whole-step
# roofline, a model: kernel by kernel, the weight matmuls do turn compute-bound at large batches; attention never.
# (gpu, context lengths) either side of the line: finite critical batches, then inf.
CRITICAL_CASES = [("H100", (0, 64, 415, 416, 4000)), ("H200", (415, 594, 595))]
# Exactly on the line, in exact decimals: 2·8e9 / 1e15 = 16 µs of compute per sequence and
# 400 · 120,000 / 3e12 = 16 µs of K/V read per sequence; one more sequence gains nothing, so no batch is enough.
ON_THE_LINE = ({"params": 8_000_000_000, "weight_bytes": 16_000_000_000, "kv_bytes_per_token": 120_000,
                "n_layers": 32, "d_model": 4096}, {"peak_flops": 1e15, "mem_bandwidth": 3e12}, 400)
# Decode throughput on the H100 at a short and a long context, as the batch grows.
THROUGHPUT_CONTEXTS = (64, 4000)
THROUGHPUT_BATCHES = (1, 16, 256, 1024)


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


def compact(summary_tokens, tokens):
    """The model writes a summary of `tokens` tokens over the context, which then holds only `summary_tokens`."""
    return {"kind": "compact", "summary_tokens": summary_tokens, "tokens": tokens}


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
# generate (a prefill and no decode run), an empty tool result, and a generate right after a generate (with a
# prefix cache nothing is pending: a prefill of 0 s).
LAYOUT = [network(0.05), user(40), generate(1), tool(0.5), tool_result(0), user(12), generate(6), generate(3),
          network(0.05)]

# Compaction (compression) on a long agent session with a prefix cache: eight tool rounds read 12,000-token
# results (the context reaches about 100,000 tokens), then four more rounds and a 3,000-token answer. Compacting
# after the eighth round into a 1,000-token summary costs its own call (a decode run over the long context) and a
# cold cache (the next prefill recomputes the summary), and every later decode step and prefill reads about
# 100,000 fewer tokens of context: on the H100 decode falls from 36.1 s to 22.7 s and prefill from 5.1 s to 3.7 s,
# for 9.5 s of compaction.
LONG_AGENT_HEAD = [user(3000)] + 8 * tool_round(80, 1.0, 12_000)
LONG_AGENT_TAIL = 4 * tool_round(120, 1.0, 3000) + [generate(3000)]
LONG_AGENT = LONG_AGENT_HEAD + LONG_AGENT_TAIL
COMPACTED = LONG_AGENT_HEAD + [compact(1000, 1000)] + LONG_AGENT_TAIL
# The layout of a compact: a one-token summary call (one segment, kind "compact"), then a longer one (two), each
# followed by a generate that must prefill the whole summary.
COMPACT_LAYOUT = [user(500), generate(20), compact(40, 1), user(10), generate(3), tool(0.2), tool_result(300),
                  compact(60, 60), generate(2)]
