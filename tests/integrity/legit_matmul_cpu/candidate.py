import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>

// C = A @ B, row-major, i-k-j loop order so the inner loop streams rows of B and C.
torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shape mismatch");
    auto A = a.contiguous();
    auto B = b.contiguous();
    const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
    auto C = torch::zeros({M, N}, A.options());
    const float* pa = A.data_ptr<float>();
    const float* pb = B.data_ptr<float>();
    float* pc = C.data_ptr<float>();
    at::parallel_for(0, M, 8, [&](int64_t r0, int64_t r1) {
        for (int64_t i = r0; i < r1; ++i) {
            float* crow = pc + i * N;
            for (int64_t k = 0; k < K; ++k) {
                const float aik = pa[i * K + k];
                const float* brow = pb + k * N;
                for (int64_t j = 0; j < N; ++j) crow[j] += aik * brow[j];
            }
        }
    });
    return C;
}
"""

ext = load_inline(name="kf_legit_matmul_cpu", cpp_sources=cpp_src, functions=["matmul_forward"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return ext.matmul_forward(A, B)
