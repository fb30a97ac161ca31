#include "trace_attempts.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "trace/summary.hpp"

namespace zkpipe::model {

namespace {

using trace::Phase;

// One worker's kernels for one attempt at a partition, in start order: an attempt begins again
// where one of its kernels repeats (batch_add aside: it runs once per MSM).
struct Attempt {
  std::vector<std::size_t> spans;  // indices into the trace
  std::uint64_t ones = 0;          // the largest batch_add's items: the 1-scalars over all of z
  std::uint64_t significant = 0;   // msm_a items: the scalars neither 0 nor 1 over all of z
  bool has_msm_a = false;
  // The witness's (L's, over z without ONE and the public inputs): the batch_add before msm_l and
  // msm_l's items; none where the attempt ran no msm_l. B's alike, before and of msm_b1.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> witness_ones_and_significant, b_ones_and_significant;
};

// The partition's constraints: items of its a/b/c copy or of its synthesis (both carry them).
std::map<PartitionKey, std::uint64_t> constraints_by_partition(const trace::Trace& spans) {
  std::map<PartitionKey, std::uint64_t> constraints;
  for (const trace::Span& span : spans)
    if ((span.phase == Phase::h2d || span.phase == Phase::synth) && span.items > 0)
      constraints.try_emplace({span.run, span.partition}, span.items);
  return constraints;
}

// The last of a partition's `copies` that ends before `kernel` starts; null when none does.
const trace::Span* last_copy_before(const std::vector<const trace::Span*>& copies, const trace::Span& kernel) {
  const trace::Span* last = nullptr;
  for (const trace::Span* copy : copies)
    if (copy->end_s <= kernel.start_s && (!last || copy->end_s > last->end_s)) last = copy;
  return last;
}

std::vector<Attempt> gpu_attempts(const trace::Trace& spans) {
  std::map<std::pair<PartitionKey, std::string>, std::vector<std::size_t>> by_worker;
  for (std::size_t i = 0; i < spans.size(); ++i)
    if (trace::is_gpu_kernel(spans[i])) by_worker[{{spans[i].run, spans[i].partition}, spans[i].resource}].push_back(i);
  std::vector<Attempt> attempts;
  for (auto& [key, indices] : by_worker) {
    std::ranges::stable_sort(indices, {}, [&](std::size_t i) { return spans[i].start_s; });
    std::set<Phase> phases_run;  // by the current attempt, batch_add aside
    for (std::size_t n = 0; n < indices.size(); ++n) {
      const std::size_t i = indices[n];
      if (n == 0 || phases_run.contains(spans[i].phase)) {
        attempts.emplace_back();
        phases_run.clear();
      }
      if (spans[i].phase != Phase::batch_add) phases_run.insert(spans[i].phase);
      Attempt& attempt = attempts.back();
      attempt.spans.push_back(i);
      if (spans[i].phase == Phase::batch_add) attempt.ones = std::max(attempt.ones, spans[i].items);
      if (spans[i].phase == Phase::msm_a) {
        attempt.significant = spans[i].items;
        attempt.has_msm_a = true;
      }
      const bool after_batch_add = n > 0 && spans[indices[n - 1]].phase == Phase::batch_add;
      if (spans[i].phase == Phase::msm_l && after_batch_add)
        attempt.witness_ones_and_significant = {spans[indices[n - 1]].items, spans[i].items};
      if (spans[i].phase == Phase::msm_b1 && after_batch_add)
        attempt.b_ones_and_significant = {spans[indices[n - 1]].items, spans[i].items};
    }
  }
  return attempts;
}

}  // namespace

std::map<PartitionKey, std::vector<const trace::Span*>> copies_by_partition(const trace::Trace& spans, bool itemless_only) {
  std::map<PartitionKey, std::vector<const trace::Span*>> copies;
  for (const trace::Span& span : spans)
    if (span.phase == Phase::h2d && (!itemless_only || (span.items == 0 && span.bytes > 0)))
      copies[{span.run, span.partition}].push_back(&span);
  return copies;
}

std::vector<double> compute_section_idle_s(const trace::Trace& spans) {
  std::vector<double> idle;
  for (const Attempt& attempt : gpu_attempts(spans)) {
    double begin_s = spans[attempt.spans.front()].start_s, end_s = begin_s, busy_s = 0;
    for (std::size_t i : attempt.spans) {
      end_s = std::max(end_s, spans[i].end_s);
      busy_s += spans[i].duration_s();
    }
    idle.push_back(std::max(0.0, end_s - begin_s - busy_s));
  }
  return idle;
}

std::vector<double> witness_split_s(const trace::Trace& spans) {
  // Version 2 traces time the split itself.
  std::vector<double> splits;
  for (const trace::Span& span : spans)
    if (span.phase == Phase::witness_split) splits.push_back(span.duration_s());
  if (!splits.empty()) return splits;
  // Version 1: per GPU, when each attempt held it: its first kernel's start to its last kernel's end or,
  // when later, the end of its partition's assembly (which may hold the section).
  struct Holding {
    PartitionKey partition;
    double begin_s, end_s;
  };
  std::map<PartitionKey, double> assembled_s;
  for (const trace::Span& span : spans)
    if (span.phase == Phase::assemble) assembled_s[{span.run, span.partition}] = span.end_s;
  auto copies = copies_by_partition(spans);
  const std::vector<Attempt> attempts = gpu_attempts(spans);
  std::map<std::pair<std::string, std::string>, std::vector<Holding>> holdings_by_gpu;  // run, gpu
  for (const Attempt& attempt : attempts) {
    const trace::Span& first = spans[attempt.spans.front()];
    Holding holding{{first.run, first.partition}, first.start_s, first.end_s};
    for (std::size_t i : attempt.spans) holding.end_s = std::max(holding.end_s, spans[i].end_s);
    if (const auto assembly = assembled_s.find(holding.partition); assembly != assembled_s.end())
      holding.end_s = std::max(holding.end_s, assembly->second);
    holdings_by_gpu[{first.run, trace::gpu_of_resource(first.resource)}].push_back(holding);
  }
  for (const Attempt& attempt : attempts) {
    const trace::Span& first = spans[attempt.spans.front()];
    const PartitionKey partition{first.run, first.partition};
    const trace::Span* copy = last_copy_before(copies[partition], first);
    if (!copy) continue;
    const auto& holdings = holdings_by_gpu[{first.run, trace::gpu_of_resource(first.resource)}];
    const bool gpu_was_free = std::ranges::none_of(holdings, [&](const Holding& other) {
      return other.partition != partition && other.begin_s < first.start_s && other.end_s > copy->end_s;
    });
    if (gpu_was_free) splits.push_back(first.start_s - copy->end_s);
  }
  return splits;
}

std::optional<WorkloadShape> measured_shape(const trace::Trace& measured, std::uint64_t variables,
                                           std::uint32_t public_inputs) {
  const auto constraints = constraints_by_partition(measured);
  auto copies = copies_by_partition(measured, true);
  std::vector<std::uint64_t> sizes, witness_uploads, public_ones, public_zeros;
  std::vector<double> one_shares, zero_shares, b_absent_one_shares, b_absent_significant_shares;
  for (const Attempt& attempt : gpu_attempts(measured)) {
    const trace::Span& first = measured[attempt.spans.front()];
    // The witness upload: its partition's last itemless copy before its first kernel (a streamed
    // key's chunks, itemless too, cross the link inside the kernels; version 1 traces have none).
    if (const trace::Span* upload = last_copy_before(copies[{first.run, first.partition}], first))
      witness_uploads.push_back(upload->bytes);
    const auto size = constraints.find({first.run, first.partition});
    if (!attempt.has_msm_a || size == constraints.end()) continue;
    const double n = double(variables > 0 ? variables : size->second);  // z's length
    sizes.push_back(size->second);
    const double ones = std::min(1.0, double(attempt.ones) / n);
    one_shares.push_back(ones);
    zero_shares.push_back(std::clamp(1 - double(attempt.ones + attempt.significant) / n, 0.0, 1 - ones));
    if (const auto& b = attempt.b_ones_and_significant) {
      b_absent_one_shares.push_back(double(attempt.ones - std::min(attempt.ones, b->first)) / n);
      b_absent_significant_shares.push_back(double(attempt.significant - std::min(attempt.significant, b->second)) / n);
    }
    if (const auto& witness = attempt.witness_ones_and_significant) {  // z's scalars that L lacks: ONE and the public inputs
      const std::uint64_t one = std::min<std::uint64_t>(attempt.ones - std::min(attempt.ones, witness->first + 1), public_inputs);
      const std::uint64_t significant = std::min(attempt.significant - std::min(attempt.significant, witness->second),
                                                 public_inputs - one);
      public_ones.push_back(one);
      public_zeros.push_back(public_inputs - one - significant);
    }
  }
  if (sizes.empty()) return std::nullopt;
  using trace::upper_median;
  const double ones = upper_median(one_shares);
  const std::uint64_t public_one = public_ones.empty() ? 0 : upper_median(public_ones);
  const double zeros = std::min(upper_median(zero_shares), 1 - ones);
  const auto b_absent = [](std::vector<double>& shares, double most) {
    return shares.empty() ? 0.0 : std::min(upper_median(shares), most);
  };
  return WorkloadShape{upper_median(sizes),
                       variables,
                       ones,
                       zeros,
                       b_absent(b_absent_one_shares, ones),
                       b_absent(b_absent_significant_shares, 1 - zeros - ones),
                       witness_uploads.empty() ? 0 : upper_median(witness_uploads),
                       std::uint32_t(public_one),
                       std::uint32_t(public_zeros.empty() ? 0 : std::min(upper_median(public_zeros), public_inputs - public_one))};
}

}  // namespace zkpipe::model
