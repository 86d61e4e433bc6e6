"""Bug: the trailing partial block gets a hash too, so a half-filled block is cached and can be hit."""


def block_hashes(tokens, block_size):
    _require(block_size >= 1, f"block_size must be >= 1, got {block_size}")
    hashes, parent = [], ROOT_HASH
    for start in range(0, len(tokens), block_size):
        parent = _chain_hash(parent, tokens[start:start + block_size])
        hashes.append(parent)
    return hashes
