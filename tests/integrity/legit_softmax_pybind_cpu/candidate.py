import torch
import torch.nn as nn
import torch.utils.cpp_extension

# The C++ is a template; the block of rows handed to each task is filled in.
TEMPLATE = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <vector>

/* Softmax over the last dimension: one pass for the max, one for the sum of
   exponentials (kept in a scratch row), one to scale. */
static void softmax_row(const float* row, float* out, int64_t cols) {
    float m = row[0];
    for (int64_t c = 1; c < cols; ++c) m = std::max(m, row[c]);
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) { out[c] = std::exp(row[c] - m); s += out[c]; }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t c = 0; c < cols; ++c) out[c] *= inv;
}

torch::Tensor softmax_forward(const torch::Tensor& x) {
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const int64_t cols = in.size(-1);
    const int64_t rows = in.numel() / cols;
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    // #pragma omp is allowed; without -fopenmp it is simply ignored.
    #pragma omp parallel for schedule(static, @ROWS_PER_TASK@)
    for (int64_t r = 0; r < rows; ++r) softmax_row(src + r * cols, dst + r * cols, cols);
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("softmax_forward", &softmax_forward, "row softmax (CPU)");
}
"""

cpp_source = TEMPLATE.replace("@ROWS_PER_TASK@", str(4))

softmax_mod = torch.utils.cpp_extension.load_inline(
    name="kf_legit_softmax_pybind_cpu",
    cpp_sources=cpp_source,
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = softmax_mod

    def forward(self, x):
        y = self.kernel.softmax_forward(x)
        return y.view(x.shape)
