"""Exercise: tiled (flash) attention.

Attention computes softmax(q k^T / sqrt(D)) v. The naive way holds the whole [Tq, Tk] score matrix; at 8k
tokens that is 256 MiB per head in float32. Compute the same result one [block_q, block_k] tile of scores at
a time, carrying per query only a running state (its output row so far and two numbers) between tiles. Do not call
torch.nn.functional.scaled_dot_product_attention or any other fused attention operator of PyTorch
(torch.ops.aten._scaled_dot_product_*, nn.MultiheadAttention): the grader refuses them all.

Shapes: q [B, H, Tq, D]; k and v [B, H, Tk, D]. Causal masking is bottom-right aligned: query i may attend
to key j only when j <= i + (Tk - Tq), as when decoding with a KV cache (with Tq = 1 the query sees every key).
That is FlashAttention's convention since version 2.1 and that of torch.nn.attention.bias.causal_lower_right.
PyTorch's scaled_dot_product_attention(is_causal=True) aligns the mask top-left instead (j <= i, as FlashAttention
2.0 did); the two conventions agree only when Tq = Tk.

Exercise, once attention_memory_bytes and attention_hbm_bytes work: at T = 8192 and D = 128, how much does each
algorithm store between its steps, and how many bytes does each move through HBM for block_q = 16, 64 and 128?
Both do the same FLOPs; say why the one that moves fewer bytes is faster, and where tiling stops paying in this
count, then what the count leaves out (attention_hbm_bytes says which model it is).
"""
import functools

import torch


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    """Softmax attention computed one score tile at a time.

    Args:
        q: [B, H, Tq, D] queries; k, v: [B, H, Tk, D] keys and values (float32, float16 or bfloat16).
        causal: mask keys in each query's future (bottom-right aligned, see the module docstring).
        block_q, block_k: query rows and key rows per tile; any positive int, need not divide Tq or Tk.

    Returns:
        (o, lse): o [B, H, Tq, D] in q's dtype, the attention output with scale 1/sqrt(D);
        lse [B, H, Tq], the natural-log logsumexp of each row of scaled (and masked) scores,
        computed in float32 (or wider).

    Accumulate in float32 and never hold more than one [block_q, block_k] tile of scores: the grader caps
    the memory a call may use and measures your module's from before its import to its peak, summed over every
    process it starts. Scores can be large (hundreds): the result must stay finite.

    Raises:
        ValueError naming the argument: block_q or block_k < 1; q, k or v not 4-d, or shapes that do not fit
        together (k and v alike, B, H and D as in q); causal with Tq > Tk (name causal: the first Tq - Tk
        queries would see no key at all).
    """
    raise NotImplementedError("TODO: tiled attention with an online softmax (running max and sum per query)")


def attention_memory_bytes(tq, tk, d, block_q, block_k, dtype_bytes=4):
    """Intermediate storage of one (batch, head): naive attention against the tiled algorithm.

    Args:
        tq, tk: query and key lengths; d: head dim; block_q, block_k: tile sizes (no larger than tq and tk);
        dtype_bytes: bytes per score.

    Returns:
        {"naive_scores": bytes of the full score matrix,
         "tiled_scores": bytes of one [block_q, block_k] score tile,
         "tiled_state": bytes of what one query block carries from key tile to key tile (the output
                        accumulator, the running max and the running sum), all float32 whatever dtype_bytes}.

    Raises:
        ValueError naming the argument when any of them is < 1.
    """
    raise NotImplementedError("TODO: bytes of the full score matrix, of one score tile and of the running state")


def attention_hbm_bytes(n, d, block_q, dtype_bytes=2):
    """HBM traffic (bytes read plus bytes written) of one head's forward pass, n queries against n keys.

    Both passes do the same multiply-adds; they differ in what goes through HBM. Count every element once per
    read and once per write, dtype_bytes each, except lse (float32):
    - "naive": three kernels. S = Q K^T reads Q and K and writes S; P = softmax(S) reads S and writes P;
      O = P V reads P and V and writes O.
    - "tiled": one kernel that keeps its tiles on chip. Each query block of block_q rows (the last may be
      shorter) is read once and reads all of K and V; O is written once; lse is written once, 4 bytes a query.

    This is FlashAttention-2's loop order (query blocks outside, key/value blocks inside) counted in the
    FlashAttention paper's IO model, where every read reaches HBM: K and V are charged once per query block. On a
    GPU, query blocks of one head run at the same time, and their re-reads of K and V can be served by the L2
    cache, which this count leaves out. The original FlashAttention loops over key/value blocks outside instead:
    it reads K and V once, and reads and writes the output and its running max and sum once per key block.

    Returns:
        {"naive": int, "tiled": int}.

    Raises:
        ValueError naming the argument when any of them is < 1.
    """
    raise NotImplementedError("TODO: bytes the naive and the tiled pass move through HBM")


@functools.cache
def _fwd_kernel():
    """The Triton kernel, defined on first use so that this module imports fast and without Triton."""
    import triton
    import triton.language as tl

    @triton.jit
    def attention_fwd_kernel(Q, K, V, O, LSE, TQ, TK, D, scale,
                             CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_D: tl.constexpr):
        """One program: BLOCK_M query rows of one (batch, head) of contiguous [B*H, T, D] tensors."""
        # TODO 1: which query rows (tl.program_id(0)) and which (batch, head) (tl.program_id(1)) this program
        #         owns; load its q tile [BLOCK_M, BLOCK_D], masking rows >= TQ and columns >= D.
        # TODO 2: float32 running max (start at -inf), running sum and accumulator [BLOCK_M, BLOCK_D].
        # TODO 3: loop over key tiles of BLOCK_N rows (when CAUSAL, stop after the last key the tile's last
        #         row may see): load k and v, scores = tl.dot(q, tl.trans(k)) * scale, set masked scores to
        #         -inf, then update max, sum and accumulator as in tiled_attention.
        # TODO 4: store o = accumulator / sum in O's dtype, and lse = max + log(sum).
        pass

    return attention_fwd_kernel


def flash_attention_triton(q, k, v, causal=False):
    """tiled_attention's contract as a Triton kernel (tile sizes are yours to choose); returns (o, lse).

    Args/returns as tiled_attention; q, k, v live on the GPU, or on the CPU when TRITON_INTERPRET=1.
    Launch _fwd_kernel() over a grid of (query tiles, B * H) programs: `_fwd_kernel()[grid](...)`, with
    triton.cdiv for the tile count. BLOCK_D must be a power of two >= 16 (tl.dot needs it): mask the head
    dims beyond D.
    """
    raise NotImplementedError("TODO: allocate o and lse, launch _fwd_kernel(), return (o, lse)")
