// Codec unit: JSON rendering of a session's result with nlohmann.
#include "tools/kai-sim/sim_report.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace kai::sim {
namespace {

using nlohmann::ordered_json;

ordered_json quantities(const core::QueueQuantities& q) {
  return ordered_json{{"gpu", q.gpu}, {"cpu", q.cpu}, {"memory", q.memory}};
}

std::vector<uint32_t> sorted_task_ids(const core::Session& ssn) {
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < ssn.tasks.size(); ++i) {
    if (!ssn.tasks[i].ghost) ids.push_back(i);
  }
  std::sort(ids.begin(), ids.end(),
            [&](uint32_t a, uint32_t b) { return ssn.tasks[a].key < ssn.tasks[b].key; });
  return ids;
}

double gpu_fraction(const core::TaskInfo& t) {
  if (t.placed_portion > 0) return static_cast<double>(t.placed_portion) / 1000.0;
  if (t.gpu.kind == core::GpuRequestKind::kFraction)
    return static_cast<double>(t.gpu.fraction_milli) / 1000.0;
  return 0;
}

/// The node a pod is on or ran on. The session places only active pods (finished ones use no capacity),
/// so a Succeeded or Failed pod's node comes from its spec.nodeName.
std::string node_name(const core::Session& ssn, const core::TaskInfo& t) {
  if (t.node != core::kNoNode) return ssn.nodes[t.node].name;
  const bool finished = t.status == core::PodStatus::kSucceeded || t.status == core::PodStatus::kFailed;
  return finished ? t.pod->node_name : std::string();
}

/// Why a pod is where it is: the unschedulable reason of a pending pod, or who evicted it and why.
std::string pod_reason(const core::Session& ssn, const core::TaskInfo& t) {
  if (t.status == core::PodStatus::kReleasing) {
    for (auto it = ssn.decisions.rbegin(); it != ssn.decisions.rend(); ++it) {
      if (it->kind == events::DecisionKind::kEvict && it->pod == t.key) {
        return "evicted by " + it->action + " for " + it->by + ": " + it->reason;
      }
    }
    return {};
  }
  if (t.status != core::PodStatus::kPending && t.status != core::PodStatus::kGated) return {};
  const core::JobInfo& job = ssn.jobs[t.job];
  return job.fit_errors.empty() ? std::string() : job.fit_errors.front().message;
}

}  // namespace

bool is_unschedulable(const core::Session& ssn, const core::JobInfo& job) {
  return !job.fit_errors.empty() && ssn.active_allocated_count(job) < job.min_member;
}

namespace {

/// Writes the report as `ordered_json(...).dump(2)` would, one element at a time: at 150,000 pods the
/// whole document as a JSON tree cost more than the session build. Each element is dumped on its own
/// and indented to its depth; JSON strings hold no raw newline, so every newline of a dump starts a
/// line of the element.
class ReportWriter {
 public:
  void begin_array(const char* key) {
    out_ += first_section_ ? "{\n" : ",\n";
    first_section_ = false;
    out_.append("  \"").append(key).append("\": [");
    empty_ = true;
  }
  void element(const ordered_json& value) {
    out_ += empty_ ? "\n    " : ",\n    ";
    empty_ = false;
    const std::string text = value.dump(2);
    for (char c : text) {
      out_ += c;
      if (c == '\n') out_ += "    ";
    }
  }
  void end_array() { out_ += empty_ ? "]" : "\n  ]"; }
  std::string finish() {
    out_ += first_section_ ? "{}\n" : "\n}\n";
    return std::move(out_);
  }

 private:
  std::string out_;
  bool first_section_ = true;
  bool empty_ = true;
};

}  // namespace

std::string render_json(const core::Session& ssn, const std::vector<events::Decision>* all_decisions) {
  ReportWriter w;
  w.begin_array("pods");
  for (uint32_t id : sorted_task_ids(ssn)) {
    // A pod consolidation moved is reported where it was pipelined (its stand-in's place).
    const core::TaskInfo* moved = ssn.moved_to(id);
    const core::TaskInfo& t = moved ? *moved : ssn.tasks[id];
    ordered_json p{{"namespace", t.pod->meta.namespace_},
                   {"name", t.pod->meta.name},
                   {"status", core::to_string(t.status)},
                   {"node", node_name(ssn, t)},
                   {"gpuGroups", t.gpu_groups}};
    if (t.gpu.is_shared()) p["gpuFraction"] = gpu_fraction(t);
    if (auto r = pod_reason(ssn, t); !r.empty()) p["reason"] = r;
    w.element(p);
  }
  w.end_array();
  w.begin_array("decisions");
  for (const auto& d : all_decisions ? *all_decisions : ssn.decisions) {
    w.element(ordered_json{{"seq", d.seq},
                           {"action", d.action},
                           {"kind", events::to_string(d.kind)},
                           {"pod", d.pod},
                           {"node", d.node},
                           {"gpuGroups", d.gpu_groups},
                           {"reason", d.reason},
                           {"by", d.by}});
  }
  w.end_array();
  std::vector<const core::JobInfo*> jobs;
  for (const auto& j : ssn.jobs) jobs.push_back(&j);
  std::sort(jobs.begin(), jobs.end(), [](const auto* a, const auto* b) { return a->key < b->key; });
  w.begin_array("podGroups");
  for (const auto* j : jobs) {
    ordered_json reasons = ordered_json::array();
    for (const auto& r : j->fit_errors)
      reasons.push_back(ordered_json{{"reason", r.reason}, {"message", r.message}});
    w.element(ordered_json{{"namespace", j->namespace_},
                           {"name", j->name},
                           {"queue", j->queue_name},
                           {"minMember", j->min_member},
                           {"unschedulable", is_unschedulable(ssn, *j)},
                           {"reasons", std::move(reasons)}});
  }
  w.end_array();
  w.begin_array("queues");
  for (const auto& q : ssn.queues) {
    ordered_json queue{{"name", q.name},
                       {"parent", q.parent == core::kNoQueue ? "" : ssn.queues[q.parent].name},
                       {"fairShare", quantities(q.fair_share)},
                       {"allocated", quantities(q.allocated)},
                       {"requested", quantities(q.request)}};
    // Time-based fair share only: the historical usage the session was given (a share of capacity).
    if (ssn.options().queue_usage != nullptr) {
      queue["usage"] = ordered_json{{"gpu", q.usage.gpu}, {"cpu", q.usage.cpu}, {"memory", q.usage.memory}};
    }
    w.element(queue);
  }
  w.end_array();
  return w.finish();
}

std::string render_table(const core::Session& ssn) {
  std::vector<std::vector<std::string>> rows = {{"POD", "STATUS", "NODE", "GPU", "GPU-GROUP", "REASON"}};
  for (uint32_t id : sorted_task_ids(ssn)) {
    const core::TaskInfo* moved = ssn.moved_to(id);
    const core::TaskInfo& t = moved ? *moved : ssn.tasks[id];
    std::string gpu;
    if (t.gpu.is_shared()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%gx%d", gpu_fraction(t), t.gpu.num_devices);
      gpu = buf;
    } else if (t.req.milli_gpu > 0) {
      gpu = std::to_string(t.req.milli_gpu / 1000);
    }
    std::string groups;
    for (const auto& g : t.gpu_groups) {
      if (!groups.empty()) groups.push_back(',');
      groups.append(g, 0, 8);
    }
    std::string reason = pod_reason(ssn, t);
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    const std::string node = node_name(ssn, t);
    rows.push_back({t.key, core::to_string(t.status), node.empty() ? "-" : node, gpu.empty() ? "-" : gpu,
                    groups.empty() ? "-" : groups, reason});
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c + 1 < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      out += r[c];
      if (c + 1 < r.size()) out += std::string(width[c] - r[c].size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  return out;
}

}  // namespace kai::sim
