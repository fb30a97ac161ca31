#include "invariants.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <fmt/format.h>

namespace zkpipe::trace {

namespace {

// The CSV keeps nine decimals: spans that touch may appear to overlap by a rounding step.
constexpr double tolerance_s = 2e-9;

// Order of phases within one attempt; the GPU compute phases share one rank.
int phase_rank(Phase phase) {
  if (is_gpu_compute(phase)) return 4;
  switch (phase) {
    case Phase::synth: return 1;
    case Phase::h2d: return 2;
    case Phase::witness_split: return 3;
    case Phase::d2h: return 5;
    case Phase::assemble: return 6;
    case Phase::verify: return 7;
    default: return 4;
  }
}

struct Holding {
  double start_s = 0;
  double end_s = 0;
  std::uint64_t bytes = 0;
  std::string copy_link;  // the first copy's link ("pcie0"): the GPU whose pool held it; empty: not copied
};

// One attempt of a partition as its spans arrive in time order: the latest end of each rank, of
// its MSMs and batch additions, whether it synthesized and copied, and what it held.
struct Attempt {
  std::map<int, double> end_by_rank;
  double msm_end_s = -1;
  bool synthesized = false, copied = false;
  std::optional<Holding> holding;

  // The span's rank in the attempt. A copy within an MSM or a batch addition of the attempt is a
  // chunk of the key's points streamed into it, part of the compute section; a copy after the
  // witness split is the split's own upload of the witness (the CUDA backend's stage_witness),
  // part of that step.
  int rank_of(const Span& span) const {
    if (span.phase == Phase::h2d && span.end_s <= msm_end_s + tolerance_s) return phase_rank(Phase::ntt);
    if (span.phase == Phase::h2d && end_by_rank.contains(phase_rank(Phase::witness_split)))
      return phase_rank(Phase::witness_split);
    return phase_rank(span.phase);
  }

  void add(const Span& span, int rank) {
    if (is_gpu_compute(span.phase) && span.phase != Phase::ntt) msm_end_s = std::max(msm_end_s, span.end_s);
    double& end_s = end_by_rank[rank];
    end_s = std::max(end_s, span.end_s);
    if (span.phase == Phase::synth) {
      synthesized = true;
      holding = Holding{span.start_s, span.end_s, span.bytes, {}};
    }
    if (span.phase == Phase::h2d && holding && !copied) {
      copied = true;
      holding->end_s = span.end_s;
      holding->copy_link = span.resource.substr(0, span.resource.find(':'));
    }
  }
};

class Checker {
 public:
  explicit Checker(const RunExpectations& expected) : expected_(expected) {}

  void report(Invariant invariant, std::string detail) { violations_.push_back({invariant, std::move(detail)}); }

  // Walks one partition's spans in time order, attempt by attempt; collects its holdings.
  void check_partition(std::uint32_t partition, std::vector<const Span*> spans) {
    // At one instant, phases in their order, but a copy after the kernels: a copy that starts with
    // an MSM or a batch addition (the model starts a streamed key's first chunk as its kernel
    // starts) is one of its chunks.
    auto rank_at_one_instant = [](Phase phase) {
      return phase == Phase::h2d ? 2 * phase_rank(Phase::msm_a) + 1 : 2 * phase_rank(phase);
    };
    std::ranges::stable_sort(spans, [&](const Span* a, const Span* b) {
      return a->start_s != b->start_s ? a->start_s < b->start_s : rank_at_one_instant(a->phase) < rank_at_one_instant(b->phase);
    });
    Attempt attempt;
    bool assembled = false;
    for (const Span* span : spans) {
      // A wait is the waiting thread's: it may begin while the partition's previous attempt runs.
      if (span->phase == Phase::wait_budget || span->phase == Phase::wait_pool) continue;
      const int rank = attempt.rank_of(*span);
      if (rank == 1 && attempt.synthesized) {
        close(attempt);
        if (expected_.proofs_may_be_rejected) assembled = false;  // that proof failed verification
      }
      if (assembled && rank == 1)
        report(Invariant::phases_in_order, fmt::format("partition {}: {} at {:.9f} s after its proof was assembled",
                                                       partition, phase_name(span->phase), span->start_s));
      check_order(partition, *span, rank, attempt);
      attempt.add(*span, rank);
      if (span->phase == Phase::assemble) {
        if (assembled) report(Invariant::ends_exactly_once, fmt::format("partition {}: assembled twice", partition));
        assembled = true;
      }
    }
    close(attempt);
    if (assembled) ++assembled_;
    if (partition >= expected_.partitions)
      report(Invariant::ends_exactly_once,
             fmt::format("partition {} is not one of the job's {} partitions", partition, expected_.partitions));
  }

  // Synthesis first, then each rank after every earlier one has ended.
  void check_order(std::uint32_t partition, const Span& span, int rank, const Attempt& attempt) {
    if (rank >= 2 && !attempt.synthesized)
      report(Invariant::phases_in_order, fmt::format("partition {}: {} at {:.9f} s without a synthesis before it",
                                                     partition, phase_name(span.phase), span.start_s));
    for (const auto& [earlier_rank, end_s] : attempt.end_by_rank) {
      if (earlier_rank < rank && span.start_s < end_s - tolerance_s)
        report(Invariant::phases_in_order,
               fmt::format("partition {}: {} starts at {:.9f} s before an earlier phase ended at {:.9f} s", partition,
                           phase_name(span.phase), span.start_s, end_s));
      if (earlier_rank > rank)
        report(Invariant::phases_in_order, fmt::format("partition {}: {} at {:.9f} s after a later phase", partition,
                                                       phase_name(span.phase), span.start_s));
    }
  }

  // The attempt ends: its holding is kept, and the next attempt starts afresh.
  void close(Attempt& attempt) {
    if (attempt.holding) holdings_.push_back(*attempt.holding);
    attempt = Attempt{};
  }

  void check_outcomes() {
    // Where proofs may be rejected, a last attempt may assemble a proof that then fails
    // verification: every proved partition assembled, but not every assembled one was proved.
    const bool consistent = expected_.proofs_may_be_rejected ? assembled_ >= expected_.proved : assembled_ == expected_.proved;
    if (!consistent)
      report(Invariant::ends_exactly_once,
             fmt::format("{} partitions assembled a proof but the run reported {} proved", assembled_, expected_.proved));
    if (expected_.proved + expected_.failed != expected_.partitions)
      report(Invariant::ends_exactly_once,
             fmt::format("{} proved + {} failed != {} partitions (lost or duplicated)", expected_.proved,
                         expected_.failed, expected_.partitions));
  }

  void check_gpu_compute(std::span<const Span> spans) {
    std::map<std::string, std::vector<const Span*>> by_gpu;
    for (const Span& span : spans)
      if (is_gpu_kernel(span)) by_gpu[gpu_of_resource(span.resource)].push_back(&span);
    for (auto& [gpu, compute] : by_gpu) {
      std::ranges::sort(compute, {}, &Span::start_s);
      const Span* latest = nullptr;
      for (const Span* span : compute) {
        if (latest && span->start_s < latest->end_s - tolerance_s)
          report(Invariant::gpu_compute_exclusive,
                 fmt::format("{}: partition {} {} [{:.9f}, {:.9f}] overlaps partition {} {} [{:.9f}, {:.9f}]", gpu,
                             span->partition, phase_name(span->phase), span->start_s, span->end_s, latest->partition,
                             phase_name(latest->phase), latest->start_s, latest->end_s));
        if (!latest || span->end_s > latest->end_s) latest = span;
      }
    }
  }

  // Sweeps holding starts and ends in time order (ends first at equal times: a release and an
  // admission at one instant do not overlap).
  void check_holdings() {
    struct Change {
      double time_s;
      bool starts;  // false sorts first: ends before starts at one instant
      std::uint64_t bytes;
      const std::string* copy_link;
    };
    std::vector<Change> changes;
    for (const Holding& holding : holdings_) {
      changes.push_back({holding.end_s, false, holding.bytes, &holding.copy_link});
      changes.push_back({holding.start_s + tolerance_s, true, holding.bytes, &holding.copy_link});
    }
    std::ranges::stable_sort(changes, {}, [](const Change& change) {
      return std::tie(change.time_s, change.starts, change.bytes);
    });
    std::uint64_t bytes = 0;
    std::uint32_t holders = 0;
    std::map<std::string, std::uint32_t> holders_by_link;
    // Each limit is reported at its first excess only.
    std::array<bool, 4> reported{};
    auto report_once = [&](std::size_t limit, bool exceeded, auto&& detail) {
      if (!exceeded || reported[limit]) return;
      reported[limit] = true;
      report(Invariant::holdings_within_limits, detail());
    };
    for (const auto& [time_s, starts, change_bytes, copy_link] : changes) {
      std::uint32_t& link_holders = holders_by_link[*copy_link];
      if (!starts) {
        bytes -= change_bytes;
        --holders;
        --link_holders;
        continue;
      }
      bytes += change_bytes;
      ++holders;
      ++link_holders;
      report_once(0, expected_.host_budget_bytes && bytes > expected_.host_budget_bytes, [&] {
        return fmt::format("at {:.9f} s {} bytes held, above the budget of {}", time_s, bytes, expected_.host_budget_bytes);
      });
      report_once(1, expected_.partitions_in_flight_max && holders > expected_.partitions_in_flight_max, [&] {
        return fmt::format("at {:.9f} s {} partitions held, above the in-flight limit of {}", time_s, holders,
                           expected_.partitions_in_flight_max);
      });
      if (!expected_.pool_slabs) continue;
      report_once(2, holders > expected_.pools * *expected_.pool_slabs, [&] {
        return fmt::format("at {:.9f} s {} partitions held pinned slabs, above {} pool(s) of {}", time_s, holders,
                           expected_.pools, *expected_.pool_slabs);
      });
      report_once(3, expected_.pools > 1 && !copy_link->empty() && link_holders > *expected_.pool_slabs, [&] {
        return fmt::format("at {:.9f} s {} partitions copied to {} held its pool's slabs, above its {}", time_s,
                           link_holders, *copy_link, *expected_.pool_slabs);
      });
    }
  }

  std::vector<Violation> take() { return std::move(violations_); }

 private:
  const RunExpectations& expected_;
  std::vector<Violation> violations_;
  std::vector<Holding> holdings_;
  std::uint32_t assembled_ = 0;
};

}  // namespace

std::string_view invariant_name(Invariant invariant) { return zk::name_of(invariant_names, invariant); }

std::vector<Violation> check_invariants(std::span<const Span> spans, const RunExpectations& expected) {
  Checker checker(expected);
  std::map<std::uint32_t, std::vector<const Span*>> by_partition;
  for (const Span& span : spans) by_partition[span.partition].push_back(&span);
  for (auto& [partition, partition_spans] : by_partition) checker.check_partition(partition, std::move(partition_spans));
  checker.check_outcomes();
  checker.check_gpu_compute(spans);
  checker.check_holdings();
  return checker.take();
}

std::string format_violations(std::span<const Violation> violations) {
  std::string text;
  for (const Violation& violation : violations)
    text += fmt::format("{}: {}\n", invariant_name(violation.invariant), violation.detail);
  return text;
}

}  // namespace zkpipe::trace
