import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cfloat>

constexpr int kThreads = 256;

__device__ float block_reduce(float v, float* smem, bool is_max) {
    // warp reduction, then the warp leaders' values through shared memory
    for (int off = 16; off > 0; off >>= 1) {
        const float o = __shfl_xor_sync(0xffffffff, v, off);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kThreads / 32 ? smem[lane] : (is_max ? -FLT_MAX : 0.0f);
        for (int off = 16; off > 0; off >>= 1) {
            const float o = __shfl_xor_sync(0xffffffff, v, off);
            v = is_max ? fmaxf(v, o) : v + o;
        }
        if (lane == 0) smem[0] = v;
    }
    __syncthreads();
    const float r = smem[0];
    __syncthreads();
    return r;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float smem[32];
    const float* row = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float m = -FLT_MAX;
    for (int c = threadIdx.x; c < cols; c += kThreads) m = fmaxf(m, row[c]);
    m = block_reduce(m, smem, true);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) s += expf(row[c] - m);
    s = block_reduce(s, smem, false);
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += kThreads) out[c] = expf(row[c] - m) * inv;
}

torch::Tensor softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "x: CUDA matrix");
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const int rows = (int)in.size(0), cols = (int)in.size(1);
    softmax_kernel<<<rows, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        in.data_ptr<float>(), out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(name="kf_legit_softmax_cuda",
                  cpp_sources="torch::Tensor softmax_forward(torch::Tensor x);",
                  cuda_sources=cuda_src, functions=["softmax_forward"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.softmax_forward(x)
