// pippenger_cuda_g1.cu — the GPU MSM and batch addition instantiated for G1 of BLS12-381.
#include "kernels/msm/pippenger_cuda_impl.cuh"

namespace zk::msm {
template class CudaMsm<bls12_381::G1Curve>;
template class CudaFixedBases<bls12_381::G1Curve>;
}  // namespace zk::msm
