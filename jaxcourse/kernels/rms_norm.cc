// rms_norm: y[..., i] = x[..., i] / sqrt(mean(x[..., :]^2) + eps) * scale[i]
// A CPU handler for XLA's typed FFI (the headers ship with jaxlib: jax.ffi.include_dir()).
#include <cmath>
#include <cstdint>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// The arithmetic, for one element type T, on `rows` rows of `n` contiguous values each.
// Accumulation is in double for float inputs too, so that long rows keep their accuracy.
template <typename T>
void RmsNormRows(const T* x, const T* scale, T* y, int64_t rows, int64_t n, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    double sum_sq = 0.0;
    for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(xr[i]) * xr[i];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i) yr[i] = static_cast<T>(xr[i] * inv_rms * scale[i]);
  }
}

// Checks what the type system of the FFI cannot: matching dtypes and shapes.
ffi::Error RmsNormImpl(ffi::AnyBuffer x, ffi::AnyBuffer scale, float eps,
                       ffi::Result<ffi::AnyBuffer> y) {
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
  if (scale.element_type() != x.element_type() || y->element_type() != x.element_type()) {
    return ffi::Error::InvalidArgument("rms_norm: x, scale and the result must share a dtype");
  }
  if (!(eps >= 0.0f)) {
    return ffi::Error::InvalidArgument("rms_norm: eps must be >= 0");
  }
  const int64_t rows = n == 0 ? 0 : static_cast<int64_t>(x.element_count()) / n;
  switch (x.element_type()) {
    case ffi::F32:
      RmsNormRows(x.typed_data<float>(), scale.typed_data<float>(), y->typed_data<float>(),
                  rows, n, eps);
      return ffi::Error::Success();
    case ffi::F64:
      RmsNormRows(x.typed_data<double>(), scale.typed_data<double>(), y->typed_data<double>(),
                  rows, n, eps);
      return ffi::Error::Success();
    default:
      return ffi::Error::InvalidArgument("rms_norm: only float32 and float64 are supported");
  }
}

}  // namespace

// The symbol Python looks up: binds two buffers, one float attribute named "eps", one result.
XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()  // x
                                  .Arg<ffi::AnyBuffer>()  // scale
                                  .Attr<float>("eps")
                                  .Ret<ffi::AnyBuffer>()  // y
);
