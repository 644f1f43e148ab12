import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// One block per row; each thread strides over the row, then a shared-memory tree.
__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float buf[256];
    const float* row = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int half_width = blockDim.x / 2; half_width > 0; half_width >>= 1) {
        if (threadIdx.x < half_width) buf[threadIdx.x] += buf[threadIdx.x + half_width];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = buf[0];
}

torch::Tensor sum_dim1(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "x: CUDA matrix");
    auto in = x.contiguous();
    const int rows = (int)in.size(0), cols = (int)in.size(1);
    auto out = torch::empty({rows, 1}, in.options());
    row_sum_kernel<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        in.data_ptr<float>(), out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(name="kf_legit_sum_dim_cuda", cpp_sources="torch::Tensor sum_dim1(torch::Tensor x);",
                  cuda_sources=cuda_src, functions=["sum_dim1"])


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        assert dim == 1, "reduces dimension 1 only"

    def forward(self, x):
        return ext.sum_dim1(x)
