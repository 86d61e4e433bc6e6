"""Bug: a cache hit may cover the whole prompt, leaving no token to compute the next-token logits from."""


class PrefixCache(PrefixCache):
    def match(self, tokens):
        hits = list(takewhile(self._blocks.__contains__, block_hashes(tokens, self.block_size)))
        self._touch(hits)
        return len(hits) * self.block_size


def cacheable_prefix(prev_tokens, tokens, block_size, min_tokens):
    _require(block_size >= 1, f"block_size must be >= 1, got {block_size}")
    _require(min_tokens >= 0, f"min_tokens must be >= 0, got {min_tokens}")
    if len(tokens) < min_tokens:
        return 0
    return _shared_blocks(block_hashes(prev_tokens, block_size), block_hashes(tokens, block_size)) * block_size
