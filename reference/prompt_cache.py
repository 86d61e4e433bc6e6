"""Hidden reference for the prompt_cache topic: chained block hashes, an LRU prefix cache and session cost.

Written for clarity: a block's hash is the SHA-256 of its parent's hash and its tokens, so it names the whole
prefix up to that block; the cache stamps each block with (tick of its last use, -depth) and evicts the smallest
stamp, which is the least recently used block and, among blocks used together, the latest in its chain.
"""
import hashlib


def require_block_size(block_size):
    """Reject block sizes below one token."""
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")


def block_hashes(tokens, block_size):
    """One hash per full block of `tokens`, each chained on the previous block's hash."""
    require_block_size(block_size)
    hashes = []
    parent = "root"
    full_blocks = len(tokens) // block_size
    for b in range(full_blocks):
        block = tokens[b * block_size:(b + 1) * block_size]
        text = parent + ":" + ",".join(str(int(token)) for token in block)
        parent = hashlib.sha256(text.encode()).hexdigest()
        hashes.append(parent)
    return hashes


def usable_blocks(num_tokens, block_size):
    """Whole blocks a hit may cover while leaving at least the last token to compute."""
    if num_tokens == 0:
        return 0
    return (num_tokens - 1) // block_size


class PrefixCache:
    """A block cache of prompt prefixes with least-recently-used eviction."""

    def __init__(self, capacity_blocks, block_size):
        """An empty cache of at most capacity_blocks blocks of block_size tokens."""
        if capacity_blocks < 0:
            raise ValueError(f"capacity_blocks must be >= 0, got {capacity_blocks}")
        require_block_size(block_size)
        self.capacity_blocks = capacity_blocks
        self.block_size = block_size
        self.stamps = {}  # block hash -> (tick of last use, -depth in its chain)
        self.tick = 0

    def touch(self, hashes):
        """Mark the blocks of one operation as used now."""
        self.tick += 1
        for depth, block_hash in enumerate(hashes):
            self.stamps[block_hash] = (self.tick, -depth)

    def evict(self):
        """Drop the smallest-stamped blocks until the cache fits its capacity."""
        while len(self.stamps) > self.capacity_blocks:
            victim = min(self.stamps, key=lambda block_hash: self.stamps[block_hash])
            del self.stamps[victim]

    def insert(self, tokens):
        """Cache every full block of `tokens`."""
        self.touch(block_hashes(tokens, self.block_size))
        self.evict()

    def match(self, tokens):
        """Tokens of the longest cached whole-block prefix that leaves the last token uncached."""
        hashes = block_hashes(tokens, self.block_size)
        hits = []
        for block_hash in hashes[:usable_blocks(len(tokens), self.block_size)]:
            if block_hash not in self.stamps:
                break
            hits.append(block_hash)
        self.touch(hits)
        return len(hits) * self.block_size


def cacheable_prefix(prev_tokens, tokens, block_size, min_tokens):
    """Tokens of `tokens` that a cache written from `prev_tokens` serves, in whole blocks, capped like match."""
    require_block_size(block_size)
    if min_tokens < 0:
        raise ValueError(f"min_tokens must be >= 0, got {min_tokens}")
    if len(tokens) < min_tokens:
        return 0
    shared = 0
    while shared < len(prev_tokens) and shared < len(tokens) and prev_tokens[shared] == tokens[shared]:
        shared += 1
    blocks = min(shared // block_size, usable_blocks(len(tokens), block_size))
    return blocks * block_size


def session_cost(turns, prices, block_size, min_tokens):
    """Per-turn cached/written/uncached tokens and cost of a session, its total cost and its cache hit rate."""
    require_block_size(block_size)
    if min_tokens < 0:
        raise ValueError(f"min_tokens must be >= 0, got {min_tokens}")
    rows = []
    written_prompt = None  # the previous turn's prompt, when it was written to the cache
    total_cached = 0
    total_prompt = 0
    for turn in turns:
        prompt = list(turn["prompt"])
        output_tokens = turn["output_tokens"]
        if output_tokens < 0:
            raise ValueError(f"output_tokens must be >= 0, got {output_tokens}")
        if written_prompt is None:
            cached = 0
        else:
            cached = cacheable_prefix(written_prompt, prompt, block_size, min_tokens)
        if len(prompt) >= min_tokens:
            full_block_tokens = (len(prompt) // block_size) * block_size
            written = full_block_tokens - cached
            written_prompt = prompt
        else:
            written = 0
            written_prompt = None
        uncached = len(prompt) - cached - written
        cost = (cached * float(prices["cache_read"]) + written * float(prices["cache_write"])
                + uncached * float(prices["input"]) + output_tokens * float(prices["output"]))
        rows.append({"cached": cached, "written": written, "uncached": uncached, "cost": cost})
        total_cached += cached
        total_prompt += len(prompt)
    total_cost = 0.0
    for row in rows:
        total_cost += row["cost"]
    hit_rate = total_cached / total_prompt if total_prompt else 0.0
    return {"turns": rows, "total_cost": total_cost, "hit_rate": hit_rate}
