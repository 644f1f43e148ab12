#!/usr/bin/env python3
"""Writes the issue-6 throughput benchmark's candidate fixtures for KernelBench
level-1 `88_MinGPTNewGelu` (y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
x = torch.rand(8192, 8192) fp32).

Each of the 32 candidates below is written twice, with the same CUDA text (its
`__global__` kernels and the `launch_gelu` host function that holds the launch
configuration) between the `KERNEL_BEGIN`/`KERNEL_END` markers of both files:

    <id>.py   kernelbench format: ModelNew over torch.utils.cpp_extension.load_inline
    <id>.cu   native format: kforge_forward() over the kforge C ABI (kforge_native.h)

so that a verdict (correct / incorrect / compile_error) can be compared across
formats. manifest.json lists every id with its expected verdict.

    python3 bench/throughput/make_fixtures.py [--out DIR]

The expected verdicts are checked (without a GPU) by
tests/scenario/test_throughput_fixtures.py: nvcc must build exactly the
candidates not marked compile_error, and the numpy models at the end of this
file (each candidate's arithmetic in float32, and which output elements it
writes) must put the correct ones within atol = rtol = 1e-4 of the reference
and the incorrect ones outside it on the task's own [0, 1) inputs.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
from dataclasses import dataclass

TASK = "level1/88_MinGPTNewGelu"
TASK_SHAPE = (8192, 8192)
DEFAULT_OUT = pathlib.Path(__file__).resolve().parent / "fixtures" / "88_MinGPTNewGelu"
REPO = pathlib.Path(__file__).resolve().parents[2]  # its .clang-format lays out the .cu files

KERNEL_BEGIN = "// ---- KERNEL_BEGIN (identical in the .py and .cu of this candidate) ----"
KERNEL_END = "// ---- KERNEL_END ----"


@dataclass(frozen=True)
class Candidate:
    id: str
    expect: str      # correct | incorrect | compile_error
    why: str         # one line for the manifest
    kernel: str      # CUDA text shared by both formats; defines launch_gelu()
    math: str = ""   # key of MATH_MODELS (empty for compile_error)
    writes: str = "all"   # key of WRITE_MODELS: which outputs it writes, from which inputs


# ----------------------------------------------------------------------------
# Building blocks of the kernel texts. Every kernel text defines
#   static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream)
# which each format's wrapper calls with its own pointers and stream.

K0 = "0.7978845608028654f"   # sqrt(2/pi)
K1 = "0.044715f"


def gelu_fn(body: str, name: str = "gelu") -> str:
    return f"__device__ __forceinline__ float {name}(float x) {{\n{body}}}\n"


GELU_TANHF = gelu_fn(f"""\
  const float u = {K0} * (x + {K1} * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
""")

# 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)): one transcendental instead of two.
# __expf overflows to inf for very negative x, and x / inf = -0, as the reference.
GELU_SIGMOID_EXPF = gelu_fn(f"""\
  const float u = {K0} * (x + {K1} * x * x * x);
  return x / (1.0f + __expf(-2.0f * u));
""")

# tanh(u) = 1 - 2 / (1 + exp(2u)); saturates to +-1 when __expf gives inf or 0.
GELU_EXPF_TANH = gelu_fn(f"""\
  const float u = {K0} * (x + {K1} * x * x * x);
  const float t = 1.0f - 2.0f / (1.0f + __expf(2.0f * u));
  return 0.5f * x * (1.0f + t);
""")

# u = x (k0 + k0 k1 x^2) and y = hx + hx t with fused multiply-adds.
GELU_FMA = gelu_fn("""\
  const float k0 = 0.7978845608028654f;
  const float k0k1 = 0.035677408136300125f;  // sqrt(2/pi) * 0.044715
  const float u = x * fmaf(k0k1, x * x, k0);
  const float hx = 0.5f * x;
  return fmaf(hx, tanhf(u), hx);
""")

GELU_DOUBLE = gelu_fn("""\
  const double xd = (double)x;
  const double u = 0.7978845608028654 * (xd + 0.044715 * xd * xd * xd);
  return (float)(0.5 * xd * (1.0 + tanh(u)));
""")

# tanh(u) = expm1(2u) / (expm1(2u) + 2); clamped first, since inf / inf is NaN.
# |u| = 9 already rounds tanh to +-1 in float32.
GELU_EXPM1 = gelu_fn(f"""\
  float u = {K0} * (x + {K1} * x * x * x);
  u = fminf(fmaxf(u, -9.0f), 9.0f);
  const float e = expm1f(2.0f * u);
  return 0.5f * x * (1.0f + e / (e + 2.0f));
""")

GELU_WRONG_K = gelu_fn(f"""\
  const float u = 1.2533141373155001f * (x + {K1} * x * x * x);  // sqrt(pi/2), not sqrt(2/pi)
  return 0.5f * x * (1.0f + tanhf(u));
""")

GELU_X_SQUARED = gelu_fn(f"""\
  const float u = {K0} * (x + {K1} * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
""")

GELU_NO_HALF = gelu_fn(f"""\
  const float u = {K0} * (x + {K1} * x * x * x);
  return x * (1.0f + tanhf(u));
""")


def scalar_kernel(threads: int, load: str = "x[i]", guard: str = "i < n",
                  blocks: str = "(n + threads - 1) / threads") -> str:
    """One element per thread."""
    return f"""\
__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {{
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if ({guard}) y[i] = gelu({load});
}}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {{
  if (n == 0) return cudaSuccess;
  const int threads = {threads};
  const int64_t blocks = {blocks};
  gelu_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}}
"""


# The scalar kernel float4 launchers fall back to when a pointer is not 16-byte
# aligned (a view with a storage offset); never taken for the task's tensors.
SCALAR_FALLBACK = """\
__global__ void gelu_scalar_kernel(const float* __restrict__ x, float* __restrict__ y,
                                   int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = gelu(x[i]);
}
"""


ALIGNED16_GUARD = """\
  if ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % 16 != 0) {
    gelu_scalar_kernel<<<(unsigned int)((n + 255) / 256), 256, 0, stream>>>(x, y, n);
    return cudaGetLastError();
  }
"""


def vec4_kernel(threads: int, load4: str = "reinterpret_cast<const float4*>(x)[i]",
                blocks: str = "((n4 > 0 ? n4 : 1) + threads - 1) / threads") -> str:
    """One float4 per thread; the last n % 4 elements go to the grid's first threads."""
    return f"""\
{SCALAR_FALLBACK}
__global__ void gelu_vec4_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {{
  const int64_t n4 = n / 4;
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {{
    float4 v = {load4};
    v.x = gelu(v.x);
    v.y = gelu(v.y);
    v.z = gelu(v.z);
    v.w = gelu(v.w);
    reinterpret_cast<float4*>(y)[i] = v;
  }}
  const int64_t tail = n4 * 4 + i;
  if (tail < n) y[tail] = gelu(x[tail]);
}}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {{
  if (n == 0) return cudaSuccess;
{ALIGNED16_GUARD}  const int threads = {threads};
  const int64_t n4 = n / 4;
  const int64_t blocks = {blocks};
  gelu_vec4_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}}
"""


def unrolled_kernel(threads: int, items: int, load_index: str = "i") -> str:
    """`items` elements per thread, each a block's width apart (coalesced): all
    loads first, then all stores, so the loads are in flight together."""
    return f"""\
__global__ void gelu_unrolled_kernel(const float* __restrict__ x, float* __restrict__ y,
                                     int64_t n) {{
  const int64_t base = (int64_t)blockIdx.x * blockDim.x * {items} + threadIdx.x;
  float v[{items}];
#pragma unroll
  for (int k = 0; k < {items}; ++k) {{
    const int64_t i = base + (int64_t)k * blockDim.x;
    v[k] = i < n ? x[{load_index}] : 0.0f;
  }}
#pragma unroll
  for (int k = 0; k < {items}; ++k) {{
    const int64_t i = base + (int64_t)k * blockDim.x;
    if (i < n) y[i] = gelu(v[k]);
  }}
}}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {{
  if (n == 0) return cudaSuccess;
  const int threads = {threads};
  const int64_t per_block = (int64_t)threads * {items};
  const int64_t blocks = (n + per_block - 1) / per_block;
  gelu_unrolled_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}}
"""


# Grid-stride launchers size the grid from the SM count (a full wave), not from n.
SM_COUNT = """\
  int device = 0, sms = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
"""

GRID_STRIDE_B256 = f"""\
__global__ void gelu_grid_stride_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        int64_t n) {{
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{
    y[i] = gelu(x[i]);
  }}
}}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {{
  if (n == 0) return cudaSuccess;
{SM_COUNT}  const int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > (int64_t)sms * 8) blocks = (int64_t)sms * 8;
  gelu_grid_stride_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}}
"""

FLOAT4_GRID_STRIDE_B512 = f"""\
{SCALAR_FALLBACK}
__global__ void gelu_vec4_grid_stride_kernel(const float* __restrict__ x, float* __restrict__ y,
                                             int64_t n) {{
  const int64_t n4 = n / 4;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (int64_t i = first; i < n4; i += stride) {{
    float4 v = x4[i];
    v.x = gelu(v.x);
    v.y = gelu(v.y);
    v.z = gelu(v.z);
    v.w = gelu(v.w);
    y4[i] = v;
  }}
  for (int64_t i = n4 * 4 + first; i < n; i += stride) y[i] = gelu(x[i]);
}}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {{
  if (n == 0) return cudaSuccess;
{ALIGNED16_GUARD}{SM_COUNT}  const int threads = 512;
  const int64_t n4 = n / 4;
  int64_t blocks = ((n4 > 0 ? n4 : 1) + threads - 1) / threads;
  if (blocks > (int64_t)sms * 4) blocks = (int64_t)sms * 4;
  gelu_vec4_grid_stride_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}}
"""

FLOAT2_B256 = """\
__global__ void gelu_vec2_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t n2 = n / 2;
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) {
    float2 v = reinterpret_cast<const float2*>(x)[i];
    v.x = gelu(v.x);
    v.y = gelu(v.y);
    reinterpret_cast<float2*>(y)[i] = v;
  }
  if (i == 0 && (n & 1)) y[n - 1] = gelu(x[n - 1]);
}

__global__ void gelu_scalar_kernel(const float* __restrict__ x, float* __restrict__ y,
                                   int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = gelu(x[i]);
}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int threads = 256;
  if ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % 8 != 0) {
    gelu_scalar_kernel<<<(unsigned int)((n + threads - 1) / threads), threads, 0, stream>>>(x, y, n);
    return cudaGetLastError();
  }
  const int64_t n2 = n / 2;
  const int64_t blocks = ((n2 > 0 ? n2 : 1) + threads - 1) / threads;
  gelu_vec2_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
"""

FLOAT4_UNROLL2_B256 = f"""\
{SCALAR_FALLBACK}
// Two float4 per thread, a block's width apart (8 elements per thread).
__global__ void gelu_vec4x2_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {{
  const int64_t n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  const int64_t i0 = (int64_t)blockIdx.x * blockDim.x * 2 + threadIdx.x;
  const int64_t i1 = i0 + blockDim.x;
  float4 a = i0 < n4 ? x4[i0] : make_float4(0.f, 0.f, 0.f, 0.f);
  float4 b = i1 < n4 ? x4[i1] : make_float4(0.f, 0.f, 0.f, 0.f);
  a.x = gelu(a.x); a.y = gelu(a.y); a.z = gelu(a.z); a.w = gelu(a.w);
  b.x = gelu(b.x); b.y = gelu(b.y); b.z = gelu(b.z); b.w = gelu(b.w);
  if (i0 < n4) y4[i0] = a;
  if (i1 < n4) y4[i1] = b;
  const int64_t tail = n4 * 4 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (tail < n) y[tail] = gelu(x[tail]);
}}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {{
  if (n == 0) return cudaSuccess;
{ALIGNED16_GUARD}  const int threads = 256;
  const int64_t n4 = n / 4;
  const int64_t per_block = (int64_t)threads * 2;
  const int64_t blocks = ((n4 > 0 ? n4 : 1) + per_block - 1) / per_block;
  gelu_vec4x2_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}}
"""

TEMPLATE_TILED = """\
template <int kBlock, int kItems>
__global__ void __launch_bounds__(kBlock)
gelu_tiled_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t base = (int64_t)blockIdx.x * (kBlock * kItems) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int64_t i = base + (int64_t)k * kBlock;
    if (i < n) y[i] = gelu(__ldg(x + i));
  }
}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  constexpr int kBlock = 256;
  constexpr int kItems = 4;
  const int64_t blocks = (n + kBlock * kItems - 1) / (kBlock * kItems);
  gelu_tiled_kernel<kBlock, kItems><<<(unsigned int)blocks, kBlock, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
"""

# Writes half: the grid is sized for n4 / 2 threads (copied from a two-float4-per-
# thread launcher), so only the first n / 2 elements are written; memory-safe.
FLOAT4_HALF_GRID = vec4_kernel(256, blocks="(n4 / 2 + threads - 1) / threads")

# ----------------------------------------------------------------------------
# Compile errors: each sits in the shared kernel text, so both formats fail.

CE_MISSING_SEMICOLON = GELU_TANHF + """
__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x
  if (i < n) y[i] = gelu(x[i]);
}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  gelu_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
"""

CE_UNDECLARED = GELU_TANHF + scalar_kernel(256, guard="i < num_elements")

CE_FLOAT4_TO_FLOAT = GELU_TANHF + """
__global__ void gelu_vec4_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 4) {
    float v = reinterpret_cast<const float4*>(x)[i];
    reinterpret_cast<float4*>(y)[i] = make_float4(gelu(v), gelu(v), gelu(v), gelu(v));
  }
}

static cudaError_t launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int threads = 256;
  const int64_t blocks = (n / 4 + threads - 1) / threads;
  gelu_vec4_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
"""

# The template arguments cannot be deduced from the call.
CE_TEMPLATE_NO_ARGS = GELU_TANHF + TEMPLATE_TILED.replace(
    "gelu_tiled_kernel<kBlock, kItems><<<", "gelu_tiled_kernel<<<")

CE_UNBALANCED_PAREN = GELU_TANHF + "\n" + scalar_kernel(256, guard="(i < n)").replace(
    "if ((i < n))", "if ((i < n)")

# ----------------------------------------------------------------------------
# The table. erf GELU is deliberately absent: it differs from the tanh form by at
# most 1.5e-4 on [0, 1) (within the task's tolerance there, and within the 10x
# tolerance of kforge's input variants), so kforge accepts it and it is neither
# a clean "correct" nor a clean "incorrect" fixture.

CANDIDATES = [
    # -- correct: the variety a search produces ---------------------------------------
    Candidate("01_scalar_b256", "correct", "one element per thread, 256 threads, tanhf",
              GELU_TANHF + "\n" + scalar_kernel(256), "tanhf"),
    Candidate("02_scalar_b128", "correct", "one element per thread, 128 threads",
              GELU_TANHF + "\n" + scalar_kernel(128), "tanhf"),
    Candidate("03_scalar_b512", "correct", "one element per thread, 512 threads",
              GELU_TANHF + "\n" + scalar_kernel(512), "tanhf"),
    Candidate("04_scalar_b1024", "correct", "one element per thread, 1024 threads",
              GELU_TANHF + "\n" + scalar_kernel(1024), "tanhf"),
    Candidate("05_scalar_ldg_b384", "correct",
              "384 threads (not a power of two, ceil-div grid), __ldg read-only loads",
              GELU_TANHF + "\n" + scalar_kernel(384, load="__ldg(x + i)"), "tanhf"),
    Candidate("06_grid_stride_b256", "correct",
              "grid-stride loop, grid capped at 8 blocks per SM",
              GELU_TANHF + "\n" + GRID_STRIDE_B256, "tanhf"),
    Candidate("07_float4_vectorized", "correct",
              "one float4 per thread, scalar tail, scalar fallback when unaligned",
              GELU_TANHF + "\n" + vec4_kernel(256), "tanhf"),
    Candidate("08_float4_grid_stride_b512", "correct",
              "float4 grid-stride loop, 512 threads, 4 blocks per SM, scalar tail loop",
              GELU_TANHF + "\n" + FLOAT4_GRID_STRIDE_B512, "tanhf"),
    Candidate("09_float4_ldg_b128", "correct", "float4 loads through __ldg, 128 threads",
              GELU_TANHF + "\n" + vec4_kernel(
                  128, load4="__ldg(reinterpret_cast<const float4*>(x) + i)"), "tanhf"),
    Candidate("10_float2_vectorized", "correct", "one float2 per thread, odd element by thread 0",
              GELU_TANHF + "\n" + FLOAT2_B256, "tanhf"),
    Candidate("11_unroll2_b256", "correct", "2 elements per thread, a block's width apart",
              GELU_TANHF + "\n" + unrolled_kernel(256, 2), "tanhf"),
    Candidate("12_unroll4_b256", "correct", "4 elements per thread, loads before stores",
              GELU_TANHF + "\n" + unrolled_kernel(256, 4), "tanhf"),
    Candidate("13_unroll8_b128", "correct", "8 elements per thread, 128 threads",
              GELU_TANHF + "\n" + unrolled_kernel(128, 8), "tanhf"),
    Candidate("14_float4_unroll2", "correct", "two float4 per thread (8 elements)",
              GELU_TANHF + "\n" + FLOAT4_UNROLL2_B256, "tanhf"),
    Candidate("15_expf_tanh", "correct", "tanh(u) = 1 - 2/(1 + __expf(2u)) instead of tanhf",
              GELU_EXPF_TANH + "\n" + scalar_kernel(256), "expf_tanh"),
    Candidate("16_sigmoid_expf_float4", "correct",
              "x / (1 + __expf(-2u)) (the same function), float4",
              GELU_SIGMOID_EXPF + "\n" + vec4_kernel(256), "sigmoid_expf"),
    Candidate("17_fma_horner", "correct", "u = x*fmaf(k0*k1, x*x, k0), y = fmaf(hx, t, hx)",
              GELU_FMA + "\n" + scalar_kernel(256), "fma"),
    Candidate("18_double_math", "correct", "computes in double, rounds once to float",
              GELU_DOUBLE + "\n" + scalar_kernel(256), "double"),
    Candidate("19_expm1_clamped_b512", "correct",
              "tanh from expm1f with |u| clamped to 9 (no inf/inf)",
              GELU_EXPM1 + "\n" + scalar_kernel(512), "expm1_clamped"),
    Candidate("20_template_launch_bounds", "correct",
              "template<kBlock=256, kItems=4> with __launch_bounds__ and __ldg",
              GELU_TANHF + "\n" + TEMPLATE_TILED, "tanhf"),
    # -- incorrect: all memory-safe, all wrong on the task's own [0, 1) inputs ------------
    Candidate("21_wrong_constant", "incorrect", "uses sqrt(pi/2) where sqrt(2/pi) belongs",
              GELU_WRONG_K + "\n" + scalar_kernel(256), "wrong_k"),
    Candidate("22_x_squared", "incorrect", "0.044715*x^2 instead of 0.044715*x^3",
              GELU_X_SQUARED + "\n" + scalar_kernel(256), "x_squared"),
    Candidate("23_missing_half", "incorrect", "drops the 0.5 factor (returns twice GELU)",
              GELU_NO_HALF + "\n" + vec4_kernel(256), "no_half"),
    Candidate("24_float4_writes_half", "incorrect",
              "one float4 per thread, grid sized for two: only the first half is written",
              GELU_TANHF + "\n" + FLOAT4_HALF_GRID, "tanhf", "first_half"),
    Candidate("25_floor_grid_b384", "incorrect",
              "grid = n / 384 rounded down: the last partial block (256 elements) is never written",
              GELU_TANHF + "\n" + scalar_kernel(384, blocks="n / threads"), "tanhf",
              "floor_blocks_384"),
    Candidate("26_off_by_one", "incorrect", "bound i + 1 < n: the last element is never written",
              GELU_TANHF + "\n" + scalar_kernel(256, guard="i + 1 < n"), "tanhf",
              "all_but_last"),
    Candidate("27_unroll4_index_mixup", "incorrect",
              "unroll-4 kernel loads x[base + k] but stores y[base + k*blockDim]",
              GELU_TANHF + "\n" + unrolled_kernel(256, 4, load_index="base + k"), "tanhf",
              "unroll4_mixup_b256"),
    # -- compile errors, in the shared kernel text -------------------------------------------
    Candidate("28_ce_missing_semicolon", "compile_error",
              "missing semicolon after the index computation", CE_MISSING_SEMICOLON),
    Candidate("29_ce_undeclared_identifier", "compile_error",
              "bound uses num_elements, which is not declared", CE_UNDECLARED),
    Candidate("30_ce_float4_to_float", "compile_error",
              "assigns a float4 load to a float", CE_FLOAT4_TO_FLOAT),
    Candidate("31_ce_template_args_missing", "compile_error",
              "launches a template kernel without template arguments (not deducible)",
              CE_TEMPLATE_NO_ARGS),
    Candidate("32_ce_unbalanced_paren", "compile_error",
              "syntax error: unbalanced parenthesis in the bounds check", CE_UNBALANCED_PAREN),
]


# ----------------------------------------------------------------------------
# The two formats.

PY_TEMPLATE = '''\
"""kforge throughput fixture {id}: {why}.
Expected verdict: {expect}. Task: KernelBench {task}.
Generated by bench/throughput/make_fixtures.py; do not edit. The CUDA text between
KERNEL_BEGIN and KERNEL_END is identical to {id}.cu."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#include <stdint.h>

{kernel_block}
torch::Tensor gelu_forward(torch::Tensor x) {{
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be float32");
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const cudaError_t err = launch_gelu(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(),
                                      at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == cudaSuccess, "gelu launch failed: ", cudaGetErrorString(err));
  return out;
}}
"""
cpp_source = "torch::Tensor gelu_forward(torch::Tensor x);"

gelu_ext = load_inline(name="{ext_name}",
                       cpp_sources=[cpp_source], cuda_sources=[cuda_source],
                       functions=["gelu_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_ext.gelu_forward(x)
'''

CU_TEMPLATE = '''\
// kforge throughput fixture {id}: {why}.
// Expected verdict: {expect}. Task: KernelBench {task}.
// Generated by bench/throughput/make_fixtures.py; do not edit. The CUDA text between
// KERNEL_BEGIN and KERNEL_END is identical to {id}.py.
#include "kforge_native.h"
#include <cuda_runtime.h>
#include <stdint.h>

{kernel_block}
KFORGE_NATIVE_ABI()

// The kernel indexes its tensors as dense row-major arrays.
static bool is_row_major(const kf_tensor* t) {{
  int64_t expected = 1;
  for (int d = t->ndim - 1; d >= 0; --d) {{
    if (t->shape[d] != 1 && t->strides[d] != expected) return false;
    expected *= t->shape[d];
  }}
  return true;
}}

static int64_t element_count(const kf_tensor* t) {{
  int64_t count = 1;
  for (int d = 0; d < t->ndim; ++d) count *= t->shape[d];
  return count;
}}

extern "C" int32_t kforge_forward(const kf_call* call) {{
  if (call->num_inputs < 1 || call->num_outputs < 1) return 1;
  const kf_tensor* x = &call->inputs[0];
  const kf_tensor* y = &call->outputs[0];
  if (x->dtype != KF_FLOAT32 || y->dtype != KF_FLOAT32) return 2;
  if (!is_row_major(x) || !is_row_major(y)) return 3;
  const int64_t n = element_count(x);
  if (element_count(y) != n) return 4;
  const cudaError_t err = launch_gelu(static_cast<const float*>(x->data),
                                      static_cast<float*>(y->data), n,
                                      static_cast<cudaStream_t>(call->stream));
  return err == cudaSuccess ? 0 : 5;
}}
'''


def kernel_block(c: Candidate) -> str:
    return f"{KERNEL_BEGIN}\n{c.kernel.rstrip()}\n{KERNEL_END}\n"


def render_py(c: Candidate, block: str) -> str:
    assert '"""' not in block, c.id   # it lives in a raw triple-quoted string
    return PY_TEMPLATE.format(id=c.id, why=c.why, expect=c.expect, task=TASK,
                              kernel_block=block, ext_name=f"kf88_{c.id}")


def render_cu(c: Candidate) -> str:
    return CU_TEMPLATE.format(id=c.id, why=c.why, expect=c.expect, task=TASK,
                              kernel_block=kernel_block(c))


def manifest() -> dict:
    return {"task": TASK,
            "candidates": [{"id": c.id, "expect": c.expect, "why": c.why} for c in CANDIDATES]}


def clang_format_cu(text: str) -> str:
    """The .cu text as the project's .clang-format lays it out (clang-format is
    installed by `make setup`)."""
    return subprocess.run(["clang-format", f"--assume-filename={REPO / 'fixture.cu'}"],
                          input=text, capture_output=True, text=True, check=True).stdout


def formatted_kernel(cu_text: str) -> str:
    """The marked kernel block of a formatted .cu, markers included."""
    begin = cu_text.index(KERNEL_BEGIN)
    end = cu_text.index(KERNEL_END) + len(KERNEL_END)
    return cu_text[begin:end] + "\n"


def render_all() -> dict[str, str]:
    """File name -> text, for every file the fixtures folder holds. The .cu is
    clang-formatted and the .py embeds its formatted kernel block, so the two
    stay identical between the markers."""
    files = {}
    for c in CANDIDATES:
        cu = clang_format_cu(render_cu(c))
        files[f"{c.id}.cu"] = cu
        files[f"{c.id}.py"] = render_py(c, formatted_kernel(cu))
    files["manifest.json"] = json.dumps(manifest(), indent=2) + "\n"
    return files


def write(out: pathlib.Path) -> list[pathlib.Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_all().items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


# ----------------------------------------------------------------------------
# numpy models of each candidate, for tests/scenario/test_throughput_fixtures.py.
# They restate what the CUDA computes (not run it): the arithmetic in float32,
# and which output element each input element lands in.

def _math_models():
    import numpy as np

    f32 = np.float32
    k0, k1 = f32(0.7978845608028654), f32(0.044715)

    def cubic(x):
        return k0 * (x + k1 * x * x * x)

    def expf_approx(a):
        # __expf is ex2.approx(a * log2 e): the product's rounding grows with |a|,
        # plus ~2 ulp of its own (taken here at the worst sign, upward).
        with np.errstate(over="ignore"):
            r = np.exp2((a * f32(1.4426950408889634)).astype(f32)).astype(f32)
            return (r * f32(1 + 2 ** -22)).astype(f32)

    def tanhf(x):
        return f32(0.5) * x * (f32(1) + np.tanh(cubic(x)))

    def expf_tanh(x):
        with np.errstate(divide="ignore"):
            t = f32(1) - f32(2) / (f32(1) + expf_approx(f32(2) * cubic(x)))
        return f32(0.5) * x * (f32(1) + t)

    def sigmoid_expf(x):
        return x / (f32(1) + expf_approx(f32(-2) * cubic(x)))

    def fma(x):
        # fmaf rounds once: the exact product and sum in float64, then one rounding.
        f64 = np.float64
        x2 = x * x
        inner = (f64(f32(0.035677408136300125)) * x2.astype(f64) + f64(k0)).astype(f32)
        u = x * inner
        hx = f32(0.5) * x
        return (hx.astype(f64) * np.tanh(u).astype(f64) + hx.astype(f64)).astype(f32)

    def double(x):
        xd = x.astype(np.float64)
        return (0.5 * xd * (1.0 + np.tanh(0.7978845608028654 * (xd + 0.044715 * xd ** 3)))
                ).astype(f32)

    def expm1_clamped(x):
        u = np.clip(cubic(x), f32(-9), f32(9))
        e = np.expm1(f32(2) * u).astype(f32)
        return f32(0.5) * x * (f32(1) + e / (e + f32(2)))

    def wrong_k(x):
        return f32(0.5) * x * (f32(1) + np.tanh(f32(1.2533141373155001) * (x + k1 * x * x * x)))

    def x_squared(x):
        return f32(0.5) * x * (f32(1) + np.tanh(k0 * (x + k1 * x * x)))

    def no_half(x):
        return x * (f32(1) + np.tanh(cubic(x)))

    return {"tanhf": tanhf, "expf_tanh": expf_tanh, "sigmoid_expf": sigmoid_expf, "fma": fma,
            "double": double, "expm1_clamped": expm1_clamped, "wrong_k": wrong_k,
            "x_squared": x_squared, "no_half": no_half}


def _write_models():
    """(n) -> (dst, src): the kernel stores gelu(x[src[j]]) into y[dst[j]]; every
    other output element is never written (the harness poisons it)."""
    import numpy as np

    def all_(n):
        i = np.arange(n)
        return i, i

    def first_half(n):
        # (n4 / 2 + 255) / 256 blocks of 256 threads, one float4 each
        threads = 256
        blocks = (n // 4 // 2 + threads - 1) // threads
        i = np.arange(min(n, 4 * blocks * threads))
        return i, i

    def floor_blocks_384(n):
        i = np.arange((n // 384) * 384)
        return i, i

    def all_but_last(n):
        i = np.arange(n - 1)
        return i, i

    def unroll4_mixup_b256(n):
        threads, items = 256, 4
        blocks = (n + threads * items - 1) // (threads * items)
        b, t, k = np.meshgrid(np.arange(blocks), np.arange(threads), np.arange(items),
                              indexing="ij")
        base = b * threads * items + t
        dst = (base + k * threads).ravel()
        src = (base + k).ravel()
        keep = dst < n
        return dst[keep], src[keep]

    return {"all": all_, "first_half": first_half, "floor_blocks_384": floor_blocks_384,
            "all_but_last": all_but_last, "unroll4_mixup_b256": unroll4_mixup_b256}


def emulate(c: Candidate, x):
    """What candidate c writes for a 1-D float32 numpy input x (NaN: not written)."""
    import numpy as np

    dst, src = _write_models()[c.writes](x.size)
    y = np.full(x.size, np.nan, dtype=np.float32)
    y[dst] = _math_models()[c.math](x[src])
    return y


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                    help=f"folder to write (default: {DEFAULT_OUT})")
    args = ap.parse_args(argv)
    written = write(args.out)
    print(f"wrote {len(written)} files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
