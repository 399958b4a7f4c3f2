"""ps5_kernels: a C++ and a CUDA kernel through jax.ffi, with their JAX glue."""
