// Tests of trace::check_invariants on hand-made traces: a correct pipeline passes, and each
// invariant catches the one thing broken in a copy of it.
#include <gtest/gtest.h>

#include "trace/invariants.hpp"

namespace zkpipe::trace {
namespace {

constexpr std::uint64_t bytes = 1000;

Span span(std::uint32_t partition, Phase phase, std::string resource, double start_s, double end_s,
          std::uint64_t span_bytes = 0) {
  return {"test", Source::measured, partition, phase, std::move(resource), start_s, end_s, span_bytes, 0};
}

// Two partitions through one GPU, the second waiting for the budget; partition 1 retried once.
Trace correct_trace() {
  return {
      span(0, Phase::synth, "cpu:0", 0, 1, bytes),
      span(1, Phase::wait_budget, "cpu:1", 0, 1.5),
      span(0, Phase::h2d, "pcie0:h2d", 1, 1.5, bytes),
      span(0, Phase::ntt, "gpu0:w0", 1.5, 2),
      span(0, Phase::msm_h, "gpu0:w0", 2, 2.5),
      span(1, Phase::synth, "cpu:1", 1.5, 2.5, bytes),
      span(0, Phase::assemble, "cpu:assemble", 2.5, 2.6),
      span(1, Phase::h2d, "pcie0:h2d", 2.5, 3, bytes),
      span(1, Phase::ntt, "gpu0:w1", 3, 3.5),  // fails after its GPU work: retried
      span(1, Phase::synth, "cpu:0", 3.5, 4.5, bytes),
      span(1, Phase::h2d, "pcie0:h2d", 4.5, 5, bytes),
      span(1, Phase::ntt, "gpu0:w0", 5, 5.5),
      span(1, Phase::assemble, "cpu:assemble", 5.5, 5.6),
  };
}

RunExpectations expectations() {
  RunExpectations expected;
  expected.partitions = 2;
  expected.proved = 2;
  expected.host_budget_bytes = bytes;
  expected.partitions_in_flight_max = 1;
  expected.pool_slabs = 1;
  return expected;
}

std::vector<Invariant> broken(const Trace& spans, const RunExpectations& expected = expectations()) {
  std::vector<Invariant> invariants;
  for (const Violation& violation : check_invariants(spans, expected)) invariants.push_back(violation.invariant);
  return invariants;
}

TEST(TraceInvariants, ACorrectPipelineKeepsEveryInvariant) {
  EXPECT_EQ(format_violations(check_invariants(correct_trace(), expectations())), "");
}

TEST(TraceInvariants, ACopyBeforeItsSynthesisEndedIsOutOfOrder) {
  Trace spans = correct_trace();
  spans[2].start_s = 0.5;
  EXPECT_EQ(broken(spans), std::vector{Invariant::phases_in_order});
}

// The CUDA backend's witness upload is an h2d span after the witness split, part of the split's
// step; a copy after the compute began is still out of order.
TEST(TraceInvariants, TheWitnessUploadAfterItsSplitIsInOrder) {
  const Trace spans = {span(0, Phase::synth, "cpu:0", 0, 1, bytes),       span(0, Phase::h2d, "pcie0:h2d", 1, 1.5, bytes),
                       span(0, Phase::witness_split, "cpu:gpu0w0", 1.5, 1.6), span(0, Phase::h2d, "pcie0:h2d", 1.6, 1.7, 50),
                       span(0, Phase::ntt, "gpu0:w0", 1.7, 2),                span(0, Phase::assemble, "cpu:gpu0w0", 2, 2.1)};
  RunExpectations expected = expectations();
  expected.partitions = expected.proved = 1;
  EXPECT_EQ(format_violations(check_invariants(spans, expected)), "");
  Trace late = spans;
  late[3].start_s = 1.95, late[3].end_s = 1.98;  // while the kernels run
  EXPECT_EQ(broken(late, expected), std::vector{Invariant::phases_in_order});
}

// Chunks of a streamed key cross the link inside the MSMs that stream them: in order there (the
// first from the MSM's start on, as the model records it), and only there (a copy during the NTT,
// which streams nothing, is out of order).
TEST(TraceInvariants, StreamedKeyChunksInsideTheirMsmAreInOrder) {
  Trace spans = {span(0, Phase::synth, "cpu:0", 0, 1, bytes), span(0, Phase::h2d, "pcie0:h2d", 1, 1.5, bytes),
                 span(0, Phase::ntt, "gpu0:w0", 1.5, 2),       span(0, Phase::msm_h, "gpu0:w0", 2, 3),
                 span(0, Phase::h2d, "pcie0:h2d", 2.01, 2.4, 80), span(0, Phase::h2d, "pcie0:h2d", 2.4, 2.8, 80),
                 span(0, Phase::assemble, "cpu:gpu0w0", 3, 3.1)};
  RunExpectations expected = expectations();
  expected.partitions = expected.proved = 1;
  EXPECT_EQ(format_violations(check_invariants(spans, expected)), "");
  spans[4].start_s = 2;  // as the MSM starts
  EXPECT_EQ(format_violations(check_invariants(spans, expected)), "");
  spans[4].start_s = 1.6, spans[4].end_s = 1.9;  // during the NTT
  EXPECT_EQ(broken(spans, expected), std::vector{Invariant::phases_in_order});
}

TEST(TraceInvariants, WorkAfterTheProofIsOutOfOrder) {
  Trace spans = correct_trace();
  spans.push_back(span(0, Phase::synth, "cpu:1", 6, 7, 0));
  EXPECT_EQ(broken(spans), std::vector{Invariant::phases_in_order});
}

TEST(TraceInvariants, AProofRejectedByVerificationMayBeRetriedWhereProofsMayBeRejected) {
  Trace spans = correct_trace();
  spans.push_back(span(0, Phase::verify, "cpu:verify", 2.6, 2.7));  // rejected: retried below
  for (const Span& retry : {span(0, Phase::synth, "cpu:0", 6, 7, bytes), span(0, Phase::h2d, "pcie0:h2d", 7, 7.5, bytes),
                            span(0, Phase::ntt, "gpu0:w0", 7.5, 8), span(0, Phase::assemble, "cpu:assemble", 8, 8.1)})
    spans.push_back(retry);
  RunExpectations expected = expectations();
  expected.proofs_may_be_rejected = true;
  EXPECT_TRUE(broken(spans, expected).empty());
  expected.proofs_may_be_rejected = false;
  EXPECT_EQ(broken(spans, expected), (std::vector{Invariant::phases_in_order, Invariant::ends_exactly_once}));
}

TEST(TraceInvariants, AProofAssembledTwiceIsDuplicated) {
  Trace spans = correct_trace();
  spans.push_back(span(1, Phase::assemble, "cpu:assemble", 5.6, 5.7));
  EXPECT_EQ(broken(spans), std::vector{Invariant::ends_exactly_once});
}

TEST(TraceInvariants, APartitionNeitherProvedNorFailedIsLost) {
  RunExpectations expected = expectations();
  expected.partitions = 3;
  EXPECT_EQ(broken(correct_trace(), expected), std::vector{Invariant::ends_exactly_once});
}

TEST(TraceInvariants, OverlappingComputeOnOneGpuIsCaughtAndOnTwoGpusIsNot) {
  Trace spans = correct_trace();
  spans.push_back(span(1, Phase::msm_h, "gpu0:w1", 5.2, 5.4));
  EXPECT_EQ(broken(spans), std::vector{Invariant::gpu_compute_exclusive});
  spans.back().resource = "gpu1:w0";
  EXPECT_TRUE(broken(spans).empty());
}

TEST(TraceInvariants, HoldingsAboveTheBudgetInFlightLimitAndPoolAreCaught) {
  Trace spans = correct_trace();
  spans[5].start_s = 1.2;  // partition 1 admitted while partition 0 still holds its a/b/c
  spans[1].end_s = 1.2;
  RunExpectations expected = expectations();
  EXPECT_EQ(broken(spans, expected), (std::vector{Invariant::holdings_within_limits, Invariant::holdings_within_limits,
                                                  Invariant::holdings_within_limits}));
  expected.host_budget_bytes = 2 * bytes;
  expected.partitions_in_flight_max = 2;
  expected.pool_slabs = 2;
  EXPECT_TRUE(broken(spans, expected).empty());
}

TEST(TraceInvariants, SpansThatTouchWithinRoundingDoNotOverlap) {
  Trace spans = correct_trace();
  spans[3].start_s = 1.5 - 1e-9;  // the CSV's ninth decimal
  EXPECT_TRUE(broken(spans).empty());
}

}  // namespace
}  // namespace zkpipe::trace
