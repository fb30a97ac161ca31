pragma circom 2.0.0;

// Bit-heavy, Filecoin-like witness: k private 64-bit values, each range-checked by bit
// decomposition (Num2Bits), their running product, and a public bound that every value must be
// below (LessThan). Public: the bound (input) and the product (output). Most witness values are
// 0 or 1, so the prover's zero/one split is exercised.
include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/comparators.circom";

template RangeProduct(k) {
    signal input values[k];
    signal input bound;
    signal output product;
    component bits[k];
    component below[k];
    signal partial[k];
    for (var i = 0; i < k; i++) {
        bits[i] = Num2Bits(64);
        bits[i].in <== values[i];
        below[i] = LessThan(64);
        below[i].in[0] <== values[i];
        below[i].in[1] <== bound;
        below[i].out === 1;
        if (i == 0) {
            partial[i] <== values[i];
        } else {
            partial[i] <== partial[i - 1] * values[i];
        }
    }
    product <== partial[k - 1];
}

component main {public [bound]} = RangeProduct(12);
