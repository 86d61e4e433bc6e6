"""Bug: a request longer than max_model_len (prompt plus output tokens) is served instead of rejected."""
import math


def _rejected(request, kv_blocks, block_size, max_model_len):
    tokens = request["prompt_tokens"] + request["output_tokens"]
    return kv_blocks is not None and math.ceil(tokens / block_size) > kv_blocks
