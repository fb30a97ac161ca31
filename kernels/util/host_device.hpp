// host_device.hpp — one macro so arithmetic is written once for g++ (CPU backend) and nvcc (CUDA).
// ZK_HD marks a function callable from host and device; under g++ it is plain `inline`.
#pragma once

#if defined(__CUDACC__)
#define ZK_HD __host__ __device__ __forceinline__
#define ZK_HD_CONSTEXPR __host__ __device__ constexpr
#else
#define ZK_HD inline
#define ZK_HD_CONSTEXPR constexpr
#endif

#if defined(__CUDA_ARCH__)
#define ZK_UNROLL _Pragma("unroll")
#else
#define ZK_UNROLL
#endif
