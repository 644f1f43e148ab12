// Native fixture with static shared memory and a large local array, so ptxas
// reports shared bytes and a stack frame.
#include "kforge_native.h"

#include <cuda_runtime.h>

KFORGE_NATIVE_ABI()

__global__ void tile_sum(const float* x, float* y, int64_t n) {
  __shared__ float tile[256];
  float local[64];
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  for (int k = 0; k < 64; ++k) local[k] = (i + k < n) ? x[i + k] : 0.0f;
  tile[threadIdx.x] = local[(int)(i % 64)];
  __syncthreads();
  float s = 0.0f;
  for (int k = 0; k < 64; ++k) s += local[(k * 7 + (int)i) % 64];
  if (i < n) y[i] = s + tile[(threadIdx.x + 1) % 256];
}

KFORGE_EXPORT int32_t kforge_forward(const kf_call* call) {
  const kf_tensor& x = call->inputs[0];
  int64_t n = x.shape[0];
  tile_sum<<<(n + 255) / 256, 256, 0, (cudaStream_t)call->stream>>>(
      (const float*)x.data, (float*)call->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
