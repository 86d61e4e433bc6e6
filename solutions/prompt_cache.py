"""Model answer for the prompt_cache topic: chained block hashes, an LRU prefix cache and session cost."""
import hashlib
from collections import OrderedDict
from itertools import takewhile

ROOT_HASH = "0" * 64  # the parent of a prompt's first block


def _require(ok, message):
    """Raise ValueError(message) unless ok."""
    if not ok:
        raise ValueError(message)


def _chain_hash(parent, block):
    """SHA-256 of the parent's hash and the block's ids in decimal: no two (parent, ids) pairs share a text.

    Python's hash() would not do: hash(-1) == hash(-2), so tuples differing only there collide.
    """
    text = parent + ":" + ",".join(str(int(token)) for token in block)
    return hashlib.sha256(text.encode()).hexdigest()


def block_hashes(tokens, block_size):
    """One hash per full block; each folds in its parent's hash, so it names the whole prefix up to the block."""
    _require(block_size >= 1, f"block_size must be >= 1, got {block_size}")
    hashes, parent = [], ROOT_HASH
    for start in range(0, len(tokens) // block_size * block_size, block_size):
        parent = _chain_hash(parent, tokens[start:start + block_size])
        hashes.append(parent)
    assert len(hashes) == len(tokens) // block_size
    return hashes


def _shared_blocks(a, b):
    """Number of leading equal entries of two hash lists."""
    return sum(1 for _ in takewhile(lambda pair: pair[0] == pair[1], zip(a, b)))


class PrefixCache:
    """Prompt-prefix cache of whole blocks keyed by chained hashes, evicting the least recently used."""

    def __init__(self, capacity_blocks, block_size):
        """An empty cache of at most capacity_blocks blocks of block_size tokens."""
        _require(capacity_blocks >= 0, f"capacity_blocks must be >= 0, got {capacity_blocks}")
        _require(block_size >= 1, f"block_size must be >= 1, got {block_size}")
        self.capacity_blocks, self.block_size = capacity_blocks, block_size
        self._blocks = OrderedDict()  # block hash -> None, least recently used first

    def _touch(self, hashes):
        """Make the blocks most recent, a chain's earlier blocks more recent than its later ones."""
        for block_hash in reversed(hashes):
            self._blocks[block_hash] = None
            self._blocks.move_to_end(block_hash)

    def insert(self, tokens):
        """Cache every full block of tokens, then evict down to capacity."""
        self._touch(block_hashes(tokens, self.block_size))
        while len(self._blocks) > self.capacity_blocks:
            self._blocks.popitem(last=False)

    def match(self, tokens):
        """Tokens of the longest cached whole-block prefix; the last token is never a hit (it yields the logits)."""
        usable = block_hashes(tokens[:-1], self.block_size)
        hits = list(takewhile(self._blocks.__contains__, usable))
        self._touch(hits)
        return len(hits) * self.block_size


def cacheable_prefix(prev_tokens, tokens, block_size, min_tokens):
    """Whole-block shared prefix of two prompts, leaving the last token uncached; 0 for short prompts."""
    _require(block_size >= 1, f"block_size must be >= 1, got {block_size}")
    _require(min_tokens >= 0, f"min_tokens must be >= 0, got {min_tokens}")
    if len(tokens) < min_tokens:
        return 0
    shared = _shared_blocks(block_hashes(prev_tokens, block_size), block_hashes(tokens[:-1], block_size))
    return shared * block_size


def _turn_cost(prices, cached, written, uncached, output_tokens):
    """Each kind of token at its own per-token price."""
    return (cached * prices["cache_read"] + written * prices["cache_write"]
            + uncached * prices["input"] + output_tokens * prices["output"])


def session_cost(turns, prices, block_size, min_tokens):
    """Price a session whose turns reuse the previous turn's cached prompt prefix."""
    _require(block_size >= 1, f"block_size must be >= 1, got {block_size}")
    _require(min_tokens >= 0, f"min_tokens must be >= 0, got {min_tokens}")
    rows, previous = [], None  # previous: the last turn's prompt when it was written to the cache
    for turn in turns:
        prompt, output_tokens = turn["prompt"], turn["output_tokens"]
        _require(output_tokens >= 0, f"output_tokens must be >= 0, got {output_tokens}")
        cached = 0 if previous is None else cacheable_prefix(previous, prompt, block_size, min_tokens)
        writes = len(prompt) >= min_tokens
        written = len(prompt) // block_size * block_size - cached if writes else 0
        uncached = len(prompt) - cached - written
        assert min(cached, written, uncached) >= 0
        rows.append({"cached": cached, "written": written, "uncached": uncached,
                     "cost": _turn_cost(prices, cached, written, uncached, output_tokens)})
        previous = prompt if writes else None
    prompt_tokens = sum(len(turn["prompt"]) for turn in turns)
    hit_rate = sum(row["cached"] for row in rows) / prompt_tokens if prompt_tokens else 0.0
    return {"turns": rows, "total_cost": sum(row["cost"] for row in rows), "hit_rate": hit_rate}
