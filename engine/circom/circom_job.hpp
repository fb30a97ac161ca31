// circom_job.hpp — a circom circuit as a job of the Groth16 prover and as a workload of the
// engine and the model. The inputs are snarkjs's .zkey, circom's .wtns and, optionally, the
// circuit's .r1cs; the result is what groth16::prove() takes (rows a, b, c on the domain and
// the assignment z), independent of the backend.
//
// The witness is checked against the key (count, w[0] = 1); with the .r1cs every constraint
// A*B = C is checked and the key's A and B rows are compared with the circuit's, so a wrong
// witness or a key of another circuit is an error before any proof exists. Without the .r1cs a
// wrong witness still yields no proof file: the prover verifies each proof before writing it.
// A job of several witnesses (one partition each) checks every witness file's header against
// the key before proving any, and writes each proof under the witness file's name.
#pragma once
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "engine/circom/zkey_file.hpp"
#include "engine/util/phase_log.hpp"

namespace zk::circom {

struct CircomRows {
  std::vector<Fr> a, b, c;  // domain_size() each
  std::vector<Fr> z;        // the witness: ONE, outputs, public inputs, private wires
};

// The witness in `wtns`, checked against the key (its number of values).
std::vector<Fr> read_key_witness(const ZkeyFile& zkey, const std::filesystem::path& wtns);
// Evaluates witness z's rows from the key into a, b, c (domain_size() each: pageable memory or a
// pinned slab) and, when `r1cs` is given, checks the constraints and that the .r1cs and .zkey
// belong together.
void evaluate_circom_rows(ZkeyFile& zkey, std::span<const Fr> z, const std::optional<std::filesystem::path>& r1cs,
                          std::span<Fr> a, std::span<Fr> b, std::span<Fr> c);
// Both: reads the witness, evaluates its rows, returns the witness z. Timed as "synth" in `log`.
std::vector<Fr> circom_rows(ZkeyFile& zkey, const std::filesystem::path& wtns,
                            const std::optional<std::filesystem::path>& r1cs, std::span<Fr> a,
                            std::span<Fr> b, std::span<Fr> c, PhaseLog* log = nullptr);
// The same into rows it allocates.
CircomRows circom_rows(ZkeyFile& zkey, const std::filesystem::path& wtns,
                       const std::optional<std::filesystem::path>& r1cs, PhaseLog* log = nullptr);

// Checks, before any proof, that every witness file is a circom witness over the key's field with
// the key's number of variables (headers only). Throws one zk::Error listing every file that is
// not, each with why, and saying that nothing was proved.
void check_witnesses_fit_key(const ZkeyFile& zkey, std::span<const std::filesystem::path> wtns);
// Checks, before any proof, that `r1cs` is a circom constraint file of the key's circuit (its
// header: wires, public inputs, constraints). Throws a zk::Error naming the files otherwise.
void check_r1cs_fits_key(const ZkeyFile& zkey, const std::filesystem::path& r1cs);

// Where each of several witnesses' proof goes: <out_dir>/<stem>.proof.json and
// <out_dir>/<stem>.public.json, <stem> the witness file's name without its extension
// (inputs/alice.wtns -> out/alice.proof.json). Throws a zk::Error naming both files when two
// witnesses would write the same outputs, so that no proof ever overwrites another.
struct ProofOutputs {
  std::filesystem::path proof, public_inputs;
};
std::vector<ProofOutputs> witness_outputs(std::span<const std::filesystem::path> wtns,
                                          const std::filesystem::path& out_dir);

// What a circom circuit asks of the pipeline, from its files: sizes from the .zkey's header and
// coefficient section, the variables absent from B from its B1 and B2 points, scalar density from
// the witness.
struct CircomWorkload {
  uint64_t num_constraints = 0;
  uint32_t num_public = 0, num_vars = 0, lg_domain = 0;
  uint64_t zero_scalars = 0, one_scalars = 0, other_scalars = 0;  // over the witness
  // The variables absent from B (groth16::ProvingKey::b_absent), and the witness's 1 and other
  // (neither 0 nor 1) values among them.
  uint32_t b_absent_vars = 0;
  uint64_t b_absent_one_scalars = 0, b_absent_other_scalars = 0;
  // Share of witness values that are 0 or 1 (skipped or batch-added rather than multiplied).
  double zero_one_share() const {
    return num_vars ? static_cast<double>(zero_scalars + one_scalars) / num_vars : 0.0;
  }
};
CircomWorkload describe_circom_workload(const std::filesystem::path& zkey, const std::filesystem::path& wtns);

}  // namespace zk::circom
