#pragma once
// A node's usage as text: its idle, releasing and used resources (scalars by name) and its shared
// GPU groups by group name (their order in the node is not part of its state), for the tests that
// compare whole sessions.
#include <algorithm>
#include <ostream>

#include "actors/scheduler/core/session.hpp"

namespace kai::core::testing {

inline void print_resources(std::ostream& out, const Session& ssn, const Resources& r) {
  out << r.milli_cpu << "," << r.memory << "," << r.milli_gpu << "," << r.pods;
  for (const auto& [id, v] : r.scalars) out << "," << ssn.scalar_name(id) << ":" << v;
  out << ";";
}

inline void print_node_usage(std::ostream& out, const Session& ssn, const NodeInfo& node) {
  out << node.name << ":";
  print_resources(out, ssn, node.idle);
  print_resources(out, ssn, node.releasing);
  print_resources(out, ssn, node.used);
  auto groups = node.shared_gpus;
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.group < b.group; });
  for (const auto& g : groups) {
    out << g.group << "/" << g.used << "/" << g.releasing << "/" << g.pipelined << "/" << g.active_tasks << "/"
        << g.releasing_tasks << "/" << g.pipelined_tasks << "/" << g.reservations << "/" << g.releasing_reservations
        << ";";
  }
  out << "\n";
}

}  // namespace kai::core::testing
