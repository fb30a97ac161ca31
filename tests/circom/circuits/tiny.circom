pragma circom 2.0.0;

// The smallest useful circuit, for unit tests and as the fuzzers' seed files (a few KB each):
// c = a*b, d = c*c + a, with c public (output) and b public (input).
template Tiny() {
    signal input a;
    signal input b;
    signal output c;
    signal d;
    c <== a * b;
    d <== c * c + a;
}

component main {public [b]} = Tiny();
