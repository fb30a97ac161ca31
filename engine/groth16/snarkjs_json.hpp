// snarkjs_json.hpp — proof.json, public.json and verification_key.json exactly as snarkjs writes
// and reads them for BLS12-381 (decimal strings, affine points with z = 1, infinity as
// ["0","1","0"], vk_alphabeta_12 = e(alpha, beta)). Readers accept what snarkjs accepts and
// throw zk::Error naming the file and the JSON key of the first thing that is wrong.
#pragma once
#include <filesystem>
#include <vector>

#include "engine/groth16/keys.hpp"
#include "engine/groth16/prover.hpp"

namespace zk::groth16 {

void write_proof_json(const Proof& proof, const std::filesystem::path& path);
Proof read_proof_json(const std::filesystem::path& path);

void write_public_json(std::span<const Fr> public_inputs, const std::filesystem::path& path);
std::vector<Fr> read_public_json(const std::filesystem::path& path);

void write_verifying_key_json(const VerifyingKey& vk, const std::filesystem::path& path);
VerifyingKey read_verifying_key_json(const std::filesystem::path& path);

}  // namespace zk::groth16
