pragma circom 2.0.0;

// A chain of circomlib Poseidon hashes: h[0] = seed, h[i+1] = Poseidon(h[i], i + tweak).
// Public: the tweak (input) and the last hash (output); about 240 constraints per link.
include "circomlib/circuits/poseidon.circom";

template PoseidonChain(links) {
    signal input seed;
    signal input tweak;
    signal output out;
    component hashes[links];
    signal h[links + 1];
    h[0] <== seed;
    for (var i = 0; i < links; i++) {
        hashes[i] = Poseidon(2);
        hashes[i].inputs[0] <== h[i];
        hashes[i].inputs[1] <== tweak + i;
        h[i + 1] <== hashes[i].out;
    }
    out <== h[links];
}

component main {public [tweak]} = PoseidonChain(8);
