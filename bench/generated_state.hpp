#pragma once
// The projected state of kai-gen's default mix scaled by `percent` (100 = 5,000 nodes, ~150k pods),
// keyed as the projection keys it: the input of the snapshot and retention benchmarks.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "events/projection.hpp"
#include "tools/kai-gen/generator.hpp"

namespace kai::bench {

inline events::ClusterState generated_state(int64_t percent) {
  const model::ClusterObjects c = gen::generate(gen::ClusterSpec::scaled(static_cast<double>(percent) / 100));
  events::ClusterState s;
  auto put_all = [](const auto& from, auto& to) {
    for (const auto& x : from) {
      to.emplace(x.meta.namespace_.empty() ? x.meta.name : x.meta.namespace_ + "/" + x.meta.name, x);
    }
  };
  put_all(c.nodes, s.nodes);
  put_all(c.pods, s.pods);
  put_all(c.queues, s.queues);
  put_all(c.pod_groups, s.pod_groups);
  put_all(c.priority_classes, s.priority_classes);
  for (const char* kind : {"Node", "Pod", "Queue", "PodGroup"}) s.resource_versions[kind] = "123456789";
  return s;
}

}  // namespace kai::bench
