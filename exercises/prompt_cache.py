"""Prefix (prompt) caching: block hashes, a prefix cache with LRU eviction, and what caching saves a session.

Prompts are lists of int token ids. A block is `block_size` consecutive tokens starting at a multiple of
`block_size`; only full blocks are ever cached.
"""


def block_hashes(tokens, block_size):
    """Hashes that identify the cacheable blocks of a prompt.

    Args:
        tokens: list of int token ids (any int: the checks use negative ids too).
        block_size: tokens per block (>= 1).
    Returns:
        A list with one hashable value (int or str) per full block. Two prompts with equal first k full blocks
        get equal first k hashes; changing token i (to any other int) changes the hash of block i // block_size
        and of every later block, and no earlier one. Deterministic within a process; the values themselves are
        up to you.
    Raises:
        ValueError naming `block_size` when it is below 1.
    """
    raise NotImplementedError("TODO: block_hashes — one hash per full block that identifies the prefix so far")


class PrefixCache:
    """A cache of prompt prefixes in whole blocks, holding at most `capacity_blocks` blocks.

    Both `insert` and `match` refresh the recency of the blocks they touch. When more than `capacity_blocks`
    blocks are cached, the least recently used ones are evicted; among blocks used equally recently, a chain's
    later blocks go before its earlier ones.
    """

    def __init__(self, capacity_blocks, block_size):
        """An empty cache of at most `capacity_blocks` (>= 0) blocks of `block_size` (>= 1) tokens.

        Raises:
            ValueError naming `capacity_blocks` or `block_size` when out of range.
        """
        raise NotImplementedError("TODO: PrefixCache.__init__ — validate and set up the block store")

    def insert(self, tokens):
        """Cache every full block of `tokens` (a list of int token ids)."""
        raise NotImplementedError("TODO: PrefixCache.insert — cache the full blocks, then evict down to capacity")

    def match(self, tokens):
        """The number of leading tokens of `tokens` served from the cache: whole cached blocks, from the start,
        leaving at least the last token of `tokens` uncached (its logits must be computed)."""
        raise NotImplementedError("TODO: PrefixCache.match — the longest cached prefix a hit may cover")


def cacheable_prefix(prev_tokens, tokens, block_size, min_tokens):
    """How many leading tokens of `tokens` a cache written from `prev_tokens` can serve.

    Args:
        prev_tokens, tokens: lists of int token ids.
        block_size: tokens per block (>= 1).
        min_tokens: prompts shorter than this are not cached (>= 0).
    Returns:
        The shared prefix of the two lists in whole blocks, leaving at least the last token of `tokens`
        uncached; 0 when `tokens` has fewer than `min_tokens` tokens.
    Raises:
        ValueError naming `block_size` or `min_tokens` when out of range.
    """
    raise NotImplementedError("TODO: cacheable_prefix — the whole-block shared prefix, capped like match")


def session_cost(turns, prices, block_size, min_tokens):
    """Cost of a multi-turn session with prompt caching.

    Args:
        turns: list of {"prompt": list of int token ids, "output_tokens": int >= 0}, in the order they were sent
            (a retried turn and a compaction call are turns like any other; after a compaction the next prompt
            keeps the system prompt and tool definitions in front and then the summary, so it shares the prefix
            up to the summary and no further).
        prices: per-token prices {"input", "cache_write", "cache_read", "output"}.
        block_size, min_tokens: as in `cacheable_prefix`.
    Prices, block size and minimum length are a provider's rules, and they change by provider, model and
    version: they come in as arguments, never as figures built into the function.
    Each turn reads from the cache its `cacheable_prefix` with the previous turn's prompt (only when that prompt
    was written), writes the rest of its own prompt's full blocks when the prompt has at least `min_tokens`
    tokens, and pays the input price for its other prompt tokens.
    Returns:
        {"turns": [{"cached", "written", "uncached", "cost"}, ...], "total_cost": float,
         "hit_rate": cached prompt tokens / all prompt tokens of the session}
    Raises:
        ValueError naming `block_size`, `min_tokens` or `output_tokens` when out of range.
    """
    raise NotImplementedError("TODO: session_cost — split each prompt into cached/written/uncached and price it")
