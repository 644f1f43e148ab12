import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# cuBLAS for the matrix product is allowed under the strict policy (CUDA Agent's rule).
cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>

torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.dim() == 2 && b.dim() == 2, "CUDA matrices");
    TORCH_CHECK(a.size(1) == b.size(0), "shape mismatch");
    auto A = a.contiguous();
    auto B = b.contiguous();
    const int m = (int)A.size(0), k = (int)A.size(1), n = (int)B.size(1);
    auto C = torch::empty({m, n}, A.options());
    cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
    const float alpha = 1.0f, beta = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T.
    cublasStatus_t st = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                    B.data_ptr<float>(), n, A.data_ptr<float>(), k, &beta,
                                    C.data_ptr<float>(), n);
    TORCH_CHECK(st == CUBLAS_STATUS_SUCCESS, "cublasSgemm failed");
    return C;
}
"""

ext = load_inline(name="kf_legit_matmul_cublas",
                  cpp_sources="torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=cuda_src, functions=["matmul_forward"],
                  extra_ldflags=["-lcublas"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ext.matmul_forward(A, B)
