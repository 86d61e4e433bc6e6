"""Attention benchmarks: tiled (flash) attention against naive attention and PyTorch's SDPA.

CPU (always): the reference tiled_attention, naive attention (the full score matrix) and
torch.nn.functional.scaled_dot_product_attention, float32, B = H = 1, D = 64, T = 2k..16k: time and peak
resident memory, each measured in a fresh forked process.

GPU (when CUDA and Triton are present): the reference Triton FlashAttention-2 kernels forward and backward
against SDPA in TFLOP/s, bfloat16, D = 64 and 128, T = 1k..16k, causal and not, 16k tokens per batch.

    python bench/attention.py            # CPU T = 2k, 4k, 8k, 16k (a minute or two), then the GPU part
    python bench/attention.py --quick    # CPU T = 2k, 4k only
    python bench/attention.py --threads 8
"""
import argparse
import importlib.util
import math
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from reference.flash_attention import tiled_attention  # noqa: E402

MIB = 2**20


def naive_attention(q, k, v):
    """softmax(q k^T / sqrt(D)) v with the whole [T, T] score matrix in memory."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # [B, H, T, T]
    return torch.softmax(scores, dim=-1) @ v


CPU_METHODS = {
    "reference tiled (256x256 tiles)": lambda q, k, v: tiled_attention(q, k, v, block_q=256, block_k=256)[0],
    "naive (full scores)": naive_attention,
    "torch SDPA": torch.nn.functional.scaled_dot_product_attention,
}


def _resident_bytes(field: str) -> int:
    """VmRSS or VmHWM of this process, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _measure_in_child(method: str, t: int, out) -> None:
    """Child process: build the inputs, reset the peak RSS, run once, report (seconds, peak growth)."""
    g = torch.Generator().manual_seed(t)
    q, k, v = (torch.randn(1, 1, t, 64, generator=g) for _ in range(3))
    fn = CPU_METHODS[method]
    fn(q[:, :, :256], k[:, :, :256], v[:, :, :256])  # warm up thread pools and kernels
    base = _resident_bytes("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    start = time.perf_counter()
    fn(q, k, v)
    seconds = time.perf_counter() - start
    out.send((seconds, _resident_bytes("VmHWM") - base))


def measure_cpu(method: str, t: int) -> tuple[float, int]:
    """(seconds, peak resident growth in bytes) of one call, in a fresh forked process."""
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe()
    proc = ctx.Process(target=_measure_in_child, args=(method, t, theirs))
    proc.start()
    result = ours.recv()
    proc.join()
    return result


def cpu_section(lengths: list[int]) -> None:
    """Time and peak memory of each CPU method at each sequence length."""
    print(f"CPU, float32, B = H = 1, D = 64, threads: {torch.get_num_threads()} "
          f"(peak = resident growth during the call; the float32 score matrix is 4*T*T bytes)")
    print(f"{'T':>6}  {'method':<32} {'time':>9} {'peak':>11} {'scores':>10}")
    for t in lengths:
        for method in CPU_METHODS:
            seconds, peak = measure_cpu(method, t)
            print(f"{t:>6}  {method:<32} {seconds:>8.3f}s {peak / MIB:>8.1f}MiB {4 * t * t / MIB:>7.0f}MiB")


def gpu_section() -> None:
    """TFLOP/s of the Triton kernels against SDPA, forward and backward, bf16 on CUDA."""
    import triton.testing

    from reference.kernels.flash_attention import flash_attention

    print(f"\nGPU {torch.cuda.get_device_name()}, bfloat16, 16k tokens per batch, "
          f"H = 2048 / D; TFLOP/s (causal counts half the FLOPs)")
    print(f"{'D':>4} {'causal':>6} {'T':>6}  {'triton fwd':>10} {'sdpa fwd':>9}  {'triton bwd':>10} {'sdpa bwd':>9}")
    for d in (64, 128):
        for causal in (False, True):
            for t in (1024, 2048, 4096, 8192, 16384):
                b, h = max(1, 16384 // t), 2048 // d
                q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                           for _ in range(3))
                do = torch.randn_like(q)
                fwd_flops = 4 * b * h * t * t * d * (0.5 if causal else 1.0)
                row = []
                for run in (lambda: flash_attention(q, k, v, causal)[0],
                            lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)):
                    fwd_ms = triton.testing.do_bench(run)
                    o = run()
                    bwd_ms = triton.testing.do_bench(lambda: o.backward(do, retain_graph=True), grad_to_none=[q, k, v])
                    row.append((fwd_flops / fwd_ms / 1e9, 2.5 * fwd_flops / bwd_ms / 1e9))
                (tf, tb), (sf, sb) = row
                print(f"{d:>4} {str(causal):>6} {t:>6}  {tf:>10.1f} {sf:>9.1f}  {tb:>10.1f} {sb:>9.1f}")


def main() -> None:
    """Run the CPU section, then the GPU section where CUDA and Triton are available."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CPU at T = 2k and 4k only")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (1: steady on a shared machine)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cpu_section([2048, 4096] if args.quick else [2048, 4096, 8192, 16384])
    if not torch.cuda.is_available():
        print("\nGPU section NOT MEASURED: no CUDA device here (Triton forward/backward TFLOP/s against SDPA, "
              "bf16, D = 64 and 128, T = 1k..16k, causal and not).")
    elif importlib.util.find_spec("triton") is None:
        print("\nGPU section NOT MEASURED: Triton is not installed.")
    elif os.environ.get("TRITON_INTERPRET") == "1":
        print("\nGPU section NOT MEASURED: TRITON_INTERPRET=1 is set, the kernels would run in the interpreter.")
    else:
        gpu_section()


if __name__ == "__main__":
    main()
