"""Bug: each block is hashed on its own tokens only, so equal blocks after different prefixes collide."""


def block_hashes(tokens, block_size):
    _require(block_size >= 1, f"block_size must be >= 1, got {block_size}")
    return [_chain_hash(ROOT_HASH, tokens[start:start + block_size])
            for start in range(0, len(tokens) // block_size * block_size, block_size)]
