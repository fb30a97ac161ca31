// Second, independent Groth16 verifier (bls12381) using only @noble/curves.
// (Copied from the project's shared tools.) usage: node tests/interop/verify_noble.mjs verification_key.json public.json proof.json   (exit 0 = valid)
import fs from "node:fs";
import { bls12_381 } from "@noble/curves/bls12-381.js";

const [vkPath, pubPath, proofPath] = process.argv.slice(2);
const vk = JSON.parse(fs.readFileSync(vkPath, "utf8"));
const pub = JSON.parse(fs.readFileSync(pubPath, "utf8")).map(BigInt);
const proof = JSON.parse(fs.readFileSync(proofPath, "utf8"));
const { Fp, Fp2, Fp12, Fr } = bls12_381.fields;
const G1 = bls12_381.G1.Point, G2 = bls12_381.G2.Point;

if (vk.protocol !== "groth16" || vk.curve !== "bls12381") throw new Error("expects groth16/bls12381 vk");
if (pub.length !== vk.nPublic || vk.IC.length !== vk.nPublic + 1) throw new Error("public input count mismatch");
for (const x of pub) if (x < 0n || x >= Fr.ORDER) throw new Error("public input not reduced mod r");

// snarkjs/ffjavascript JSON points: [x, y, z]; z=1 -> affine, z=0 -> infinity, else Jacobian (x/z^2, y/z^3)
function jac(F, x, y, z) {
  if (F.is0(z)) return null;
  if (F.eql(z, F.ONE)) return { x, y };
  const zi = F.inv(z), zi2 = F.sqr(zi);
  return { x: F.mul(x, zi2), y: F.mul(y, F.mul(zi2, zi)) };
}
function g1(j) {
  const a = jac(Fp, Fp.create(BigInt(j[0])), Fp.create(BigInt(j[1])), Fp.create(BigInt(j[2] ?? 1)));
  const P = a ? G1.fromAffine(a) : G1.ZERO; P.assertValidity(); return P;   // on-curve + prime-order subgroup
}
function g2(j) {
  const e = (v) => Fp2.create({ c0: BigInt(v[0]), c1: BigInt(v[1]) });
  const a = jac(Fp2, e(j[0]), e(j[1]), e(j[2] ?? ["1", "0"]));
  const P = a ? G2.fromAffine(a) : G2.ZERO; P.assertValidity(); return P;
}

const A = g1(proof.pi_a), B = g2(proof.pi_b), C = g1(proof.pi_c);
const alpha = g1(vk.vk_alpha_1), beta = g2(vk.vk_beta_2), gamma = g2(vk.vk_gamma_2), delta = g2(vk.vk_delta_2);
let L = g1(vk.IC[0]);
pub.forEach((x, i) => { if (x !== 0n) L = L.add(g1(vk.IC[i + 1]).multiply(x)); });

// e(A,B) == e(alpha,beta) * e(L,gamma) * e(C,delta)   <=>   e(-A,B) e(alpha,beta) e(L,gamma) e(C,delta) == 1
const pairs = [{ g1: A.negate(), g2: B }, { g1: alpha, g2: beta }, { g1: L, g2: gamma }, { g1: C, g2: delta }]
  .filter((p) => !p.g1.is0() && !p.g2.is0());        // noble rejects infinity; a zero term contributes 1
const t0 = Date.now();
const ok = Fp12.eql(bls12_381.pairingBatch(pairs), Fp12.ONE);
// Optional cross-check against vk_alphabeta_12 (e(alpha,beta) written by snarkjs) is not needed for validity.
console.log(ok ? "noble: proof VALID" : "noble: proof INVALID", `(${Date.now() - t0} ms pairing)`);
process.exit(ok ? 0 : 1);
