"""PagedAttention: a KV block allocator with copy-on-write forks, paged decode attention, and reservation waste.

The KV cache is a pool of fixed-size blocks. Each sequence owns a block table (the ids of its blocks, in token
order); token i lives in block table[i // block_size] at offset i % block_size. Forked sequences share blocks
until one of them writes into a shared block (copy-on-write, the design of the PagedAttention paper, Kwon et al.
2023; vLLM's current V1 engine has no fork and shares only full blocks, found by hash through prefix caching).
"""
import torch


class OutOfBlocks(RuntimeError):
    """Raised by `BlockAllocator.append` when it needs a block and none is free."""


class BlockAllocator:
    """Hands out fixed-size KV blocks to sequences; forked sequences share blocks until one writes (copy-on-write)."""

    def __init__(self, num_blocks: int, block_size: int):
        """A pool of num_blocks KV blocks of block_size token slots each, all free, and no sequences yet.

        Raises ValueError (naming the argument) when num_blocks < 1 or block_size < 1.
        """
        raise NotImplementedError("TODO: set up the free blocks, reference counts, block tables and lengths")

    def append(self, seq_id) -> tuple:
        """Reserve the slot for the next token of `seq_id`; an unknown seq_id starts an empty sequence.

        Returns (block, offset, copy): the token goes to slot `offset` of block `block`. `copy` is None, or
        (src_block, dst_block) when the sequence's last block is shared with another sequence: the caller copies
        src to dst before writing, and the sequence uses dst from now on.
        Raises OutOfBlocks when a block is needed and none is free; the allocator is then left unchanged.
        """
        raise NotImplementedError("TODO: find or allocate the slot for the next token (copy-on-write if shared)")

    def fork(self, parent_id, child_id) -> None:
        """Create `child_id` sharing all of the parent's blocks (and its length); allocates no block.

        Raises KeyError for an unknown parent_id, ValueError (naming child_id) when child_id already exists.
        """
        raise NotImplementedError("TODO: share the parent's blocks with the child")

    def free(self, seq_id) -> None:
        """Release `seq_id`; each block no other sequence uses goes back to the free pool.

        Raises KeyError for an unknown seq_id.
        """
        raise NotImplementedError("TODO: release the sequence's blocks")

    def block_table(self, seq_id) -> list:
        """The block ids of `seq_id` in token order (a list of int). Raises KeyError for an unknown seq_id."""
        raise NotImplementedError("TODO: return the sequence's block table")

    def num_free_blocks(self) -> int:
        """How many blocks no sequence uses."""
        raise NotImplementedError("TODO: count the free blocks")

    def seq_len(self, seq_id) -> int:
        """How many tokens `seq_id` holds."""
        raise NotImplementedError("TODO: return the sequence's length")


def paged_attention(q, k_cache, v_cache, block_tables, context_lens, scale) -> torch.Tensor:
    """Decode attention: one new query per sequence attends to that sequence's cached tokens.

    Args:
        q: [S, H, D] queries (float32, float16 or bfloat16).
        k_cache, v_cache: [num_blocks, block_size, H_kv, D]; H is a multiple of H_kv, and query head h reads
            KV head h // (H // H_kv).
        block_tables: [S, max_blocks] int; row s lists sequence s's blocks in token order. Entries past its
            first ceil(context_lens[s] / block_size) are padding and may hold any int (-1, 0, an id past the pool).
        context_lens: [S] int; sequence s attends to its first context_lens[s] tokens, at least 1 (the new
            token's own key and value are already in the cache) and at most max_blocks * block_size.
        scale: multiplies the scores q . k before the softmax.
    Returns:
        [S, H, D]: per query head, the softmax(scale * q . k)-weighted sum of the values of the sequence's first
        context_lens[s] tokens (compute the softmax in at least float32). Slots no sequence attends to were never
        written: like real GPU memory they may hold NaN, inf or huge values, and must not change the answer.
    Raises:
        ValueError naming the argument: a context length outside [1, max_blocks * block_size] (with 0 tokens the
        softmax has nothing to normalise and gives NaN), or H not a multiple of H_kv.
    """
    raise NotImplementedError("TODO: gather each sequence's keys and values through its block table and attend")


def reservation_waste(lengths, max_len, block_size) -> dict:
    """Token slots used, reserved and wasted by max-length reservation versus paging.

    Args:
        lengths: current length of each sequence (list of int, each in [0, max_len]).
        max_len: the slots a max-length reservation holds per sequence (>= 1).
        block_size: token slots per block.
    Returns:
        dict of int: "used" (sum of lengths), "reserved_max", "reserved_paged" (whole blocks per sequence),
        "waste_max" and "waste_paged" (reserved minus used).
    Raises ValueError (naming the argument) for block_size < 1, max_len < 1 or a length outside [0, max_len].
    """
    raise NotImplementedError("TODO: count used, reserved and wasted slots for both schemes")
