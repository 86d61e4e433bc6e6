"""The memory check of tiled_attention at Tq = Tk = 8192, D = 64: the call must stay far below the 256 MiB
float32 score matrix, whatever the submission did before it."""
import torch

from grader.checks.flash_attention.expect import expect_attention, split
from grader.engine import SubmissionRaised, fail, tr

MIB = 2**20
T = 8192
# The cap (address space, above the size before the big call) and the limit (resident growth since before the
# import) leave room for the import, the inputs, the output, their transport and 512x512 tiles (the solution grows
# 45 MiB), while the full score matrix alone needs 256 MiB.
CAP, LIMIT = 160 * MIB, 128 * MIB
# o and lse of the big call are 2.1 MiB in float32: room for them in float64 too, so that a wrong dtype is told as such
REPLY = 5 * MIB


def expect_small_footprint(sub, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rows: torch.Tensor,
                           case: dict) -> None:
    """tiled_attention(q, k, v) with 512x512 tiles ([1, 1, T, 64] each) must grow the child by less than LIMIT
    over its whole life and match `case` (the reference on query `rows`)."""
    # A small call first starts the child's thread pools. Growth is measured from the resident memory the child
    # reported before the submission was imported, to the peak of the child's whole life: a baseline any
    # submission code could raise (a buffer kept from the small call and reused, ballast dropped before the big
    # call) or a peak outside the big call (the answer computed at import or in the small call, then served
    # from a cache) would hide the full score matrix.
    small = [t[:, :, :1024].clone() for t in (q, k, v)]
    sub.tiled_attention(*small, causal=False, block_q=512, block_k=512)
    baseline = sub.rss_before_import
    sub.set_timeout(30)
    sub.set_memory_limit(CAP)
    sub.set_reply_budget(REPLY)
    try:
        result = sub.tiled_attention(q, k, v, causal=False, block_q=512, block_k=512)
    except SubmissionRaised as raised:
        if "MemoryError" in raised.type_names or "allocate memory" in raised.message:
            fail(tr("{call} ran out of memory with {cap} MiB to spare ({type}: {message}); the full {t}x{t} float32 "
                    "score matrix needs 256 MiB", call=raised.call, cap=CAP // MIB, type=raised.type_name,
                    message=raised.message[:160], t=T), "materializes_full_scores")
        raise
    what = sub.last_call
    peak = sub.life_peak_rss_bytes
    if baseline is not None and peak is not None and peak - baseline > LIMIT:
        fail(tr("{what}: your module held {held:.0f} MiB more than the child did before it was imported; it must "
                "stay below {limit} MiB (the full score matrix is 256 MiB, a 512x512 tile 1 MiB)", what=what,
                held=(peak - baseline) / MIB, limit=LIMIT // MIB), "materializes_full_scores")
    o, lse = split(result, what, torch.float32)
    if o.shape != q.shape or lse.shape != q.shape[:3]:
        fail(tr("{what} returned o {o} and lse {lse}, expected {o_shape} and {lse_shape}", what=what,
                o=list(o.shape), lse=list(lse.shape), o_shape=list(q.shape), lse_shape=list(q.shape[:3])))
    shown = ", ".join(str(r) for r in rows[:3].tolist())
    expect_attention((o[:, :, rows], lse[:, :, rows]), case, tr("{what}, query rows {rows}, ...", what=what,
                                                                rows=shown), torch.float32)
