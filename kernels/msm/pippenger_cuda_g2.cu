// pippenger_cuda_g2.cu — the GPU MSM and batch addition instantiated for G2 of BLS12-381.
#include "kernels/msm/pippenger_cuda_impl.cuh"

namespace zk::msm {
template class CudaMsm<bls12_381::G2Curve>;
template class CudaFixedBases<bls12_381::G2Curve>;
}  // namespace zk::msm
