#include "tools/kai-sim/expected_end.hpp"

#include <algorithm>
#include <array>

#include "k8s/model/enum_names.hpp"

namespace kai::sim {

namespace {
constexpr std::array<const char*, 3> kEndBasisNames = {"none", "activeDeadlineSeconds", "ownerHistory"};
static_assert(model::names_every(EndBasis::kOwnerHistory, kEndBasisNames));
}  // namespace

const char* to_string(EndBasis b) { return model::enum_name(b, kEndBasisNames, "none"); }

std::vector<ExpectedEnd> expected_ends(const model::ClusterObjects& cluster,
                                       const std::map<std::string, PodFacts>& facts,
                                       const std::map<std::string, int64_t>& median_run_seconds) {
  std::vector<ExpectedEnd> out;
  for (const model::Pod& pod : cluster.pods) {
    if (pod.node_name.empty() || pod.phase == "Succeeded" || pod.phase == "Failed") continue;
    ExpectedEnd end;
    end.pod = pod.meta.namespace_ + "/" + pod.meta.name;
    const auto fact = facts.find(end.pod);
    // A fact about another pod under the same name (recreated since) does not apply.
    const bool same_pod = fact != facts.end() && (fact->second.uid.empty() || fact->second.uid == pod.meta.uid);
    const int64_t start =
        same_pod && fact->second.start_time ? *fact->second.start_time : pod.meta.creation_timestamp;
    if (same_pod && fact->second.active_deadline_seconds) {
      end.at = start + *fact->second.active_deadline_seconds;
      end.basis = EndBasis::kActiveDeadline;
    } else if (!pod.meta.owner_references.empty()) {
      const auto run = median_run_seconds.find(pod.meta.owner_references.front().uid);
      if (run != median_run_seconds.end()) {
        end.at = start + run->second;
        end.basis = EndBasis::kOwnerHistory;
      }
    }
    out.push_back(std::move(end));
  }
  std::sort(out.begin(), out.end(), [](const ExpectedEnd& a, const ExpectedEnd& b) { return a.pod < b.pod; });
  return out;
}

}  // namespace kai::sim
