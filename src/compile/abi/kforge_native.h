/* kforge native candidate ABI, version 1 (docs/candidate-formats.md).
 *
 * A native candidate is one CUDA C++ file (.cu) that includes this header and
 * no PyTorch header. kforge compiles it with nvcc straight to a shared object
 * and the harness calls kforge_forward() with the task's inputs, the reference
 * module's parameters and preallocated outputs, all as device pointers.
 *
 * Rules: launch every kernel on call->stream (work on another stream is caught
 * as side-stream work); do not allocate device memory inside kforge_forward
 * (ask for a workspace instead); do not synchronise the device; write every
 * element of every output. Return 0 on success, anything else on failure.
 */
#ifndef KFORGE_NATIVE_H_
#define KFORGE_NATIVE_H_

#include <stddef.h>
#include <stdint.h>

#define KFORGE_NATIVE_ABI_VERSION 1
#define KFORGE_MAX_DIMS 8

#ifdef __cplusplus
#define KFORGE_EXTERN_C extern "C"
#else
#define KFORGE_EXTERN_C
#endif
#define KFORGE_EXPORT KFORGE_EXTERN_C __attribute__((visibility("default")))

/* Element types, numbered as below whatever the compiler. */
typedef enum kf_dtype {
  KF_FLOAT32 = 0,
  KF_FLOAT16 = 1,
  KF_BFLOAT16 = 2,
  KF_FLOAT64 = 3,
  KF_INT8 = 4,
  KF_UINT8 = 5,
  KF_INT16 = 6,
  KF_INT32 = 7,
  KF_INT64 = 8,
  KF_BOOL = 9
} kf_dtype;

/* One tensor: a device pointer with its shape and strides (in elements, not
 * bytes, as PyTorch counts them). Inputs may be non-contiguous: read strides. */
typedef struct kf_tensor {
  void* data;
  int32_t dtype; /* kf_dtype */
  int32_t ndim;  /* 0 ..= KFORGE_MAX_DIMS; 0 is a scalar tensor */
  int64_t shape[KFORGE_MAX_DIMS];
  int64_t strides[KFORGE_MAX_DIMS];
} kf_tensor;

/* One forward call.
 *  inputs:  the tensors of get_inputs(), in order.
 *  scalars: the non-tensor values of get_inputs() (int, float, bool), in order,
 *           as doubles.
 *  params:  the reference Model's named_parameters(), then its named_buffers(),
 *           each in PyTorch's registration order (not state_dict()'s order,
 *           which lists each module's own parameters and buffers together).
 *  outputs: preallocated by the harness with the reference output's shapes,
 *           dtypes and contiguous strides, in the order forward() returns them.
 *  stream:  the cudaStream_t to launch on.
 *  workspace: workspace_bytes of device memory (kforge_workspace_bytes), or NULL. */
typedef struct kf_call {
  const kf_tensor* inputs;
  int32_t num_inputs;
  const double* scalars;
  int32_t num_scalars;
  const kf_tensor* params;
  int32_t num_params;
  kf_tensor* outputs;
  int32_t num_outputs;
  void* stream;
  void* workspace;
  size_t workspace_bytes;
} kf_call;

/* Required. */
KFORGE_EXPORT int32_t kforge_forward(const kf_call* call);

/* Optional: device bytes of workspace kforge_forward needs for these shapes
 * (called once per input shapes, before any forward; data pointers are valid
 * but must not be read). Absent: no workspace. */
KFORGE_EXPORT size_t kforge_workspace_bytes(const kf_call* call);

/* Define in every candidate with KFORGE_NATIVE_ABI(): the version it was
 * written against. */
#define KFORGE_NATIVE_ABI()                        \
  KFORGE_EXPORT int32_t kforge_abi_version(void) { \
    return KFORGE_NATIVE_ABI_VERSION;              \
  }

#endif /* KFORGE_NATIVE_H_ */
