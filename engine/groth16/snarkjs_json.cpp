#include "engine/groth16/snarkjs_json.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/groth16/pairing.hpp"
#include "engine/util/atomic_file.hpp"
#include "engine/util/decimal.hpp"

namespace zk::groth16 {
namespace {

using bls12_381::Fp;
using bls12_381::Fp2;
using json = nlohmann::json;

json to_json(const Fp2& x) { return json::array({to_decimal(x.c0), to_decimal(x.c1)}); }
json to_json(const G1Affine& p) {
  if (p.is_infinity()) return json::array({"0", "1", "0"});
  return json::array({to_decimal(p.x), to_decimal(p.y), "1"});
}
json to_json(const G2Affine& p) {
  if (p.is_infinity()) return json::array({json::array({"0", "0"}), json::array({"1", "0"}), json::array({"0", "0"})});
  return json::array({to_json(p.x), to_json(p.y), json::array({"1", "0"})});
}

void write_json(const json& j, const std::filesystem::path& path) {
  write_text_atomically(path, j.dump(1) + "\n");
}

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail("{}: cannot open the file", path.string());
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    fail("{}: not valid JSON (byte {}): fix or regenerate the file", path.string(), e.byte);
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    fail("{}: not readable JSON ({}): fix or regenerate the file", path.string(), e.what());
  }
}

// Reading with the JSON path of each value, for errors that point at the culprit.
struct Cursor {
  const std::filesystem::path& file;
  const json& value;
  std::string where;

  Cursor at(const std::string& key) const {
    if (!value.is_object() || !value.contains(key))
      fail("{}: missing key {}.{}", file.string(), where.empty() ? "$" : where, key);
    return {file, value.at(key), where + "." + key};
  }
  Cursor at(size_t i) const {
    if (!value.is_array() || i >= value.size())
      fail("{}: {} must be an array of at least {} entries", file.string(), where, i + 1);
    return {file, value.at(i), where + "[" + std::to_string(i) + "]"};
  }
  std::string text() const {
    if (!value.is_string())
      fail("{}: {} must be a decimal string (snarkjs writes numbers as strings)", file.string(), where);
    return value.get<std::string>();
  }
  template <class F>
  F field() const {
    return from_decimal<F>(text(), file.string() + ": " + where);
  }
  Fp2 fp2() const { return {at(0).field<Fp>(), at(1).field<Fp>()}; }
  // z = "1": affine; z = "0": infinity; anything else is refused.
  template <class Point, class Coord>
  Point point(Coord (Cursor::*coord)() const) const {
    if (!value.is_array() || (value.size() != 2 && value.size() != 3))
      fail("{}: {} must be a point [x, y] or [x, y, z]", file.string(), where);
    if (value.size() == 3) {
      Coord z = (at(2).*coord)();
      if (z == Coord::zero()) return Point::infinity();
      if (z != Coord::one())
        fail("{}: {} has z other than 0 or 1; write affine points", file.string(), where);
    }
    Point p{(at(0).*coord)(), (at(1).*coord)()};
    if (!p.is_on_curve()) fail("{}: {} is not a point on the curve", file.string(), where);
    return p;
  }
  Fp fp() const { return field<Fp>(); }
  G1Affine g1() const { return point<G1Affine, Fp>(&Cursor::fp); }
  G2Affine g2() const { return point<G2Affine, Fp2>(&Cursor::fp2); }
};

void expect_curve(const Cursor& root) {
  if (root.value.contains("curve") && root.value["curve"] != "bls12381")
    fail("{}: curve is {}, zkpipe proves over bls12381", root.file.string(), root.value["curve"].dump());
  if (root.value.contains("protocol") && root.value["protocol"] != "groth16")
    fail("{}: protocol is {}, zkpipe reads groth16", root.file.string(), root.value["protocol"].dump());
}

}  // namespace

void write_proof_json(const Proof& proof, const std::filesystem::path& path) {
  write_json({{"pi_a", to_json(proof.a)}, {"pi_b", to_json(proof.b)}, {"pi_c", to_json(proof.c)},
              {"protocol", "groth16"}, {"curve", "bls12381"}}, path);
}

Proof read_proof_json(const std::filesystem::path& path) {
  json j = read_json(path);
  Cursor root{path, j, ""};
  expect_curve(root);
  return {root.at("pi_a").g1(), root.at("pi_b").g2(), root.at("pi_c").g1()};
}

void write_public_json(std::span<const Fr> public_inputs, const std::filesystem::path& path) {
  json j = json::array();
  for (const auto& x : public_inputs) j.push_back(to_decimal(x));
  write_json(j, path);
}

std::vector<Fr> read_public_json(const std::filesystem::path& path) {
  json j = read_json(path);
  Cursor root{path, j, "$"};
  if (!j.is_array()) fail("{}: public inputs must be a JSON array of decimal strings", path.string());
  std::vector<Fr> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(root.at(i).field<Fr>());
  return out;
}

void write_verifying_key_json(const VerifyingKey& vk, const std::filesystem::path& path) {
  auto e = pairing(vk.alpha1, vk.beta2);
  auto fp6 = [](const bls12_381::Fp6& x) { return json::array({to_json(x.c0), to_json(x.c1), to_json(x.c2)}); };
  json ic = json::array();
  for (const auto& p : vk.ic) ic.push_back(to_json(p));
  write_json({{"protocol", "groth16"}, {"curve", "bls12381"}, {"nPublic", vk.num_public()},
              {"vk_alpha_1", to_json(vk.alpha1)}, {"vk_beta_2", to_json(vk.beta2)},
              {"vk_gamma_2", to_json(vk.gamma2)}, {"vk_delta_2", to_json(vk.delta2)},
              {"vk_alphabeta_12", json::array({fp6(e.c0), fp6(e.c1)})}, {"IC", ic}}, path);
}

VerifyingKey read_verifying_key_json(const std::filesystem::path& path) {
  json j = read_json(path);
  Cursor root{path, j, ""};
  expect_curve(root);
  VerifyingKey vk{root.at("vk_alpha_1").g1(), root.at("vk_beta_2").g2(), root.at("vk_gamma_2").g2(),
                  root.at("vk_delta_2").g2(), {}};
  Cursor ic = root.at("IC");
  if (!ic.value.is_array() || ic.value.empty())
    fail("{}: IC must be a non-empty array of G1 points", path.string());
  for (size_t i = 0; i < ic.value.size(); ++i) vk.ic.push_back(ic.at(i).g1());
  return vk;
}

}  // namespace zk::groth16
