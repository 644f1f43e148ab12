#!/usr/bin/env python3
"""Scripted replies for the issue-5 device run (bench/device/issue5_greedy.sh): a greedy
optimize of KernelBench level-1 88_MinGPTNewGelu on cuda, served by
tests/fixtures/fake_llm_server.py on loopback.

SCRIPTED, NOT A MODEL: these replies were written by hand to exercise the optimize loop,
the GPU evaluator and the store over 20 iterations (correct kernels of different speeds, a
wrong one, one that does not compile, one that the integrity checks reject, a reply
without code and a duplicate, which are not evaluated). Device time is scarce, so all but
one candidate share one CUDA source (built once; the extension cache is shared through
TORCH_EXTENSIONS_DIR) and differ only in how Python calls it.

    python3 bench/device/issue5_gelu_replies.py > replies.jsonl
"""
import json
import sys

CUDA_SOURCE = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

// GELU, tanh form: half * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))); the same value
// as x / (1 + exp(-2u)) when half = 0.5 (the exp form needs one transcendental, not two).
template <bool kExp>
__device__ __forceinline__ float gelu(float x, float half) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  if (kExp) return 2.0f * half * x / (1.0f + expf(-2.0f * u));
  return half * x * (1.0f + tanhf(u));
}

template <bool kExp>
__global__ void gelu_scalar_kernel(const float* __restrict__ x, float* __restrict__ out,
                                   int64_t n, float half) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = gelu<kExp>(x[i], half);
}

template <bool kExp>
__global__ void gelu_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ out,
                                 int64_t n4, float half) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v = x[i];
    v.x = gelu<kExp>(v.x, half);
    v.y = gelu<kExp>(v.y, half);
    v.z = gelu<kExp>(v.z, half);
    v.w = gelu<kExp>(v.w, half);
    out[i] = v;
  }
}

torch::Tensor gelu_scalar(torch::Tensor x, int64_t threads, double half, bool use_exp) {
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t n = xc.numel();
  const int64_t blocks = (n + threads - 1) / threads;
  if (use_exp) {
    gelu_scalar_kernel<true><<<blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), n,
                                                  (float)half);
  } else {
    gelu_scalar_kernel<false><<<blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(),
                                                   n, (float)half);
  }
  return out;
}

// blocks_per_sm = 0: one thread per float4; otherwise a fixed grid and a grid-stride loop.
torch::Tensor gelu_vec4(torch::Tensor x, int64_t threads, int64_t blocks_per_sm, double half,
                        bool use_exp) {
  auto xc = x.contiguous();
  TORCH_CHECK(xc.numel() % 4 == 0, "gelu_vec4 needs a multiple of 4 elements");
  auto out = torch::empty_like(xc);
  const int64_t n4 = xc.numel() / 4;
  int64_t blocks = (n4 + threads - 1) / threads;
  if (blocks_per_sm > 0) {
    const int64_t sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    if (blocks > blocks_per_sm * sms) blocks = blocks_per_sm * sms;
  }
  const float4* xp = reinterpret_cast<const float4*>(xc.data_ptr<float>());
  float4* op = reinterpret_cast<float4*>(out.data_ptr<float>());
  if (use_exp) {
    gelu_vec4_kernel<true><<<blocks, threads>>>(xp, op, n4, (float)half);
  } else {
    gelu_vec4_kernel<false><<<blocks, threads>>>(xp, op, n4, (float)half);
  }
  return out;
}
'''

CPP_SOURCE = ('"torch::Tensor gelu_scalar(torch::Tensor x, int64_t threads, double half, '
              'bool use_exp);\\n"\n              "torch::Tensor gelu_vec4(torch::Tensor x, '
              'int64_t threads, int64_t blocks_per_sm, double half, bool use_exp);"')

TEMPLATE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""{cuda}"""
cpp_source = ({cpp})

gelu_ext = load_inline(name="kforge_issue5_gelu", cpp_sources=[cpp_source],
                       cuda_sources=[cuda_source], functions=["gelu_scalar", "gelu_vec4"],
                       verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {call}
'''

TYPO = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void gelu_half2_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    out[i] = 0.5f * v * (1.0f + tanhf(u))
  }
}

torch::Tensor gelu_fast(torch::Tensor x) {
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t n = xc.numel();
  gelu_half2_kernel<<<(n + 255) / 256, 256>>>(xc.data_ptr<float>(), out.data_ptr<float>(), n);
  return out;
}
"""
cpp_source = "torch::Tensor gelu_fast(torch::Tensor x);"

fast_ext = load_inline(name="kforge_issue5_gelu_unrolled", cpp_sources=[cpp_source],
                       cuda_sources=[cuda_source], functions=["gelu_fast"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return fast_ext.gelu_fast(x)
'''

TORCH_COPY = '''import math
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
'''


def candidate(call):
    return TEMPLATE.format(cuda=CUDA_SOURCE, cpp=CPP_SOURCE, call=call)


def scalar(threads, use_exp=False, half=0.5):
    return candidate(f"gelu_ext.gelu_scalar(x, {threads}, {half}, {use_exp})")


def vec4(threads, blocks_per_sm=0, use_exp=False, half=0.5):
    return candidate(f"gelu_ext.gelu_vec4(x, {threads}, {blocks_per_sm}, {half}, {use_exp})")


def reply(analysis, code=None):
    return analysis if code is None else f"{analysis}\n\n```python\n{code}```\n"


REPLIES = [
    reply("Eager PyTorch runs about seven elementwise kernels (pow, mul, add, mul, tanh, add, "
          "mul), each reading and writing 256 MB. Fuse them into one kernel.", scalar(256)),
    reply("Try 128 threads per block.", scalar(128)),
    reply("The kernel is memory bound: load and store float4.", vec4(256)),
    reply("Fold the 0.5 into the final scale.", vec4(256, half=1.0)),
    reply("512 threads per block for the float4 kernel.", vec4(512)),
    reply("Hand-unrolled version.", TYPO),
    reply("A fixed grid of 4 blocks per SM with a grid-stride loop.", vec4(256, 4)),
    reply("8 blocks per SM.", vec4(256, 8)),
    reply("Simpler: let PyTorch evaluate the formula.", TORCH_COPY),
    reply("Replace 0.5*(1+tanh(u)) by 1/(1+exp(-2u)): one transcendental instead of two.",
          vec4(256, use_exp=True)),
    reply("I would next look at the register usage of the exp kernel."),
    reply("The exp form with 128 threads per block.", vec4(128, use_exp=True)),
    reply("The exp form on a fixed grid, 8 blocks per SM.", vec4(256, 8, use_exp=True)),
    reply("The exp form with float4 loads.", vec4(256, use_exp=True)),
    reply("The exp form, 512 threads, 4 blocks per SM.", vec4(512, 4, use_exp=True)),
    reply("The exp form, 16 blocks per SM.", vec4(256, 16, use_exp=True)),
    reply("Check the scalar kernel with the exp form.", scalar(256, use_exp=True)),
    reply("The exp form with 1024 threads per block.", vec4(1024, use_exp=True)),
    reply("tanh form, 128 threads, 16 blocks per SM.", vec4(128, 16)),
    reply("exp form, 128 threads, 32 blocks per SM.", vec4(128, 32, use_exp=True)),
    reply("exp form, 64 threads per block.", vec4(64, use_exp=True)),
    reply("exp form, 2 blocks per SM.", vec4(256, 2, use_exp=True)),
]


def main():
    for r in REPLIES:
        sys.stdout.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
