// rms_norm for the GPU: the same operation as rms_norm.cc, one thread block per row.
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int kThreads = 256;

// Block b normalizes row b: each thread sums the squares of a strided slice of the row, the
// block reduces the partial sums in shared memory, then every thread writes its slice.
__global__ void RmsNormKernel(const float* x, const float* scale, float* y, int64_t n,
                              float eps) {
  __shared__ float partial[kThreads];
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float sum_sq = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum_sq += xr[i] * xr[i];
  partial[threadIdx.x] = sum_sq;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();  // every thread must see the finished sum before the next step reads it
  }
  const float inv_rms = rsqrtf(partial[0] / static_cast<float>(n) + eps);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] * inv_rms * scale[i];
}

ffi::Error RmsNormCudaImpl(cudaStream_t stream, ffi::Buffer<ffi::F32> x,
                           ffi::Buffer<ffi::F32> scale, float eps,
                           ffi::ResultBuffer<ffi::F32> y) {
  auto dims = x.dimensions();
  if (dims.size() == 0) {
    return ffi::Error::InvalidArgument("rms_norm: x must have at least one axis");
  }
  const int64_t n = dims.back();
  auto scale_dims = scale.dimensions();
  if (scale_dims.size() != 1 || scale_dims[0] != n) {
    return ffi::Error::InvalidArgument(
        "rms_norm: scale must have shape (" + std::to_string(n) + ",), the size of x's last axis");
  }
  const int64_t rows = n == 0 ? 0 : static_cast<int64_t>(x.element_count()) / n;
  if (rows == 0) return ffi::Error::Success();
  RmsNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      x.typed_data(), scale.typed_data(), y->typed_data(), n, eps);
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    return ffi::Error::Internal(std::string("rms_norm: ") + cudaGetErrorString(status));
  }
  return ffi::Error::Success();
}

}  // namespace

// The CUDA handler also receives the stream XLA runs the computation on.
XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormCuda, RmsNormCudaImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // x
                                  .Arg<ffi::Buffer<ffi::F32>>()  // scale
                                  .Attr<float>("eps")
                                  .Ret<ffi::Buffer<ffi::F32>>()  // y
);
