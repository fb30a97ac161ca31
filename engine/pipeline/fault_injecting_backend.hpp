// fault_injecting_backend.hpp — what the engine knows of a device backend that injects faults (the
// fake device, fake_backend.hpp; the real CUDA backend with faults, faulty_cuda_backend.hpp): it is
// told which attempt its next calls serve, since its faults are keyed by it, and it fails in one
// of two ways the engine tells apart: DeviceError (the call failed, the device is still usable:
// the attempt is retried) and DeviceLost (the device is gone: the worker stops).
#pragma once
#include <cstdint>

#include "engine/groth16/backend.hpp"
#include "engine/util/error.hpp"

namespace zk::pipeline {

// A device call failed; the device is still usable.
class DeviceError : public Error {
 public:
  using Error::Error;
};
// The device is gone; its worker must stop.
class DeviceLost : public Error {
 public:
  using Error::Error;
};

class FaultInjectingBackend : public groth16::ProverBackend {
 public:
  // Names the attempt the next calls serve: their faults are keyed by it. Calls before the first
  // attempt (the engine's idle copy measurement) inject none.
  virtual void begin_attempt(uint32_t partition, uint32_t attempt) = 0;
};

}  // namespace zk::pipeline
