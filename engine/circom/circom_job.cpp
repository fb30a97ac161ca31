#include "engine/circom/circom_job.hpp"

#include <map>

#include "engine/circom/r1cs_file.hpp"
#include "engine/circom/wtns_file.hpp"
#include "engine/groth16/prover.hpp"

namespace zk::circom {
namespace {

void check_witness_fits_key(const ZkeyFile& zkey, size_t values, const std::filesystem::path& wtns) {
  if (values != zkey.header().num_vars)
    fail("{}: the witness has {} values but {} has {} variables: the witness and the key are of different circuits",
         wtns.string(), values, zkey.name(), zkey.header().num_vars);
}

void check_r1cs_header_fits_key(const ZkeyFile& zkey, const R1csFile& r1cs) {
  const auto& k = zkey.header();
  const auto& c = r1cs.header();
  if (c.num_wires != k.num_vars || c.num_public() != k.num_public || c.num_constraints != k.num_constraints)
    fail("{} ({} wires, {} public, {} constraints) and {} ({} variables, {} public, {} constraints) are of "
         "different circuits", r1cs.name(), c.num_wires, c.num_public(), c.num_constraints, zkey.name(),
         k.num_vars, k.num_public, k.num_constraints);
}

}  // namespace

std::vector<Fr> read_key_witness(const ZkeyFile& zkey, const std::filesystem::path& wtns) {
  auto z = read_witness(wtns);
  check_witness_fits_key(zkey, z.size(), wtns);
  return z;
}

void evaluate_circom_rows(ZkeyFile& zkey, std::span<const Fr> z, const std::optional<std::filesystem::path>& r1cs_path,
                          std::span<Fr> a, std::span<Fr> b, std::span<Fr> c) {
  std::optional<R1csFile> r1cs;
  if (r1cs_path) {
    r1cs.emplace(R1csFile::open(*r1cs_path));
    check_r1cs_header_fits_key(zkey, *r1cs);
  }
  zkey.evaluate_rows(z, a, b, c);
  if (r1cs) r1cs->check_witness(z, a, b);
}

std::vector<Fr> circom_rows(ZkeyFile& zkey, const std::filesystem::path& wtns,
                            const std::optional<std::filesystem::path>& r1cs, std::span<Fr> a,
                            std::span<Fr> b, std::span<Fr> c, PhaseLog* log) {
  auto scope = timed(log, "synth", zkey.header().num_constraints);
  auto z = read_key_witness(zkey, wtns);
  evaluate_circom_rows(zkey, z, r1cs, a, b, c);
  return z;
}

CircomRows circom_rows(ZkeyFile& zkey, const std::filesystem::path& wtns,
                       const std::optional<std::filesystem::path>& r1cs, PhaseLog* log) {
  size_t n = zkey.header().domain_size();
  CircomRows rows{std::vector<Fr>(n), std::vector<Fr>(n), std::vector<Fr>(n), {}};
  rows.z = circom_rows(zkey, wtns, r1cs, rows.a, rows.b, rows.c, log);
  return rows;
}

void check_r1cs_fits_key(const ZkeyFile& zkey, const std::filesystem::path& r1cs) {
  check_r1cs_header_fits_key(zkey, R1csFile::open(r1cs));
}

void check_witnesses_fit_key(const ZkeyFile& zkey, std::span<const std::filesystem::path> wtns) {
  std::string unfit;
  size_t count = 0;
  for (const auto& path : wtns) {
    try {
      check_witness_fits_key(zkey, read_witness_count(path), path);
    } catch (const Error& e) {
      unfit += fmt::format("\n  {}", e.what());
      ++count;
    }
  }
  if (count)
    fail("{} of {} witness files do not fit {}; nothing was proved:{}", count, wtns.size(), zkey.name(), unfit);
}

std::vector<ProofOutputs> witness_outputs(std::span<const std::filesystem::path> wtns,
                                          const std::filesystem::path& out_dir) {
  std::vector<ProofOutputs> outputs;
  std::map<std::string, const std::filesystem::path*> by_stem;
  for (const auto& path : wtns) {
    const std::string stem = path.stem().string();
    if (stem.empty()) fail("{}: a witness file needs a name to name its proof after", path.string());
    const auto [taken, fresh] = by_stem.emplace(stem, &path);
    if (!fresh)
      fail("{} and {} would both write {}: each proof is named after its witness file (rename one)",
           taken->second->string(), path.string(), (out_dir / (stem + ".proof.json")).string());
    outputs.push_back({out_dir / (stem + ".proof.json"), out_dir / (stem + ".public.json")});
  }
  return outputs;
}

CircomWorkload describe_circom_workload(const std::filesystem::path& zkey_path, const std::filesystem::path& wtns) {
  auto zkey = ZkeyFile::open(zkey_path);
  auto z = read_witness(wtns);
  check_witness_fits_key(zkey, z.size(), wtns);
  const auto& k = zkey.header();
  const groth16::WitnessCounts counts = groth16::count_witness(z);
  const std::vector<uint32_t> b_absent = zkey.b_absent();
  const groth16::WitnessCounts absent = groth16::count_witness_at(z, b_absent);
  return {k.num_constraints, k.num_public, k.num_vars, k.lg_domain, counts.zeros, counts.ones, counts.significant,
          static_cast<uint32_t>(b_absent.size()), absent.ones, absent.significant};
}

}  // namespace zk::circom
