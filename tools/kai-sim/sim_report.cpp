// Codec unit: a session's result as JSON (written as it goes) or as a table.
#include "tools/kai-sim/sim_report.hpp"

#include <algorithm>
#include <boost/sort/spreadsort/string_sort.hpp>
#include <cstdio>
#include <optional>
#include <string_view>

#include "tools/kai-sim/pretty_json_writer.hpp"

namespace kai::sim {
namespace {

/// The positions 0..n-1 ordered by `key_of(position)`, which are distinct. A radix sort of (key, position)
/// pairs: at 150,000 pods a std::sort of positions that read each key through its task was about a
/// tenth of kai-sim's run, most of it cache misses and shared prefixes compared again
/// (bench/README.md "kai-sim on kai-gen's 5,000-node cluster").
template <class KeyOf>
std::vector<uint32_t> order_by_key(uint32_t n, KeyOf key_of) {
  using Entry = std::pair<std::string_view, uint32_t>;
  std::vector<Entry> entries;
  entries.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (auto key = key_of(i)) entries.emplace_back(*key, i);
  }
  boost::sort::spreadsort::string_sort(
      entries.begin(), entries.end(),
      [](const Entry& e, size_t offset) { return static_cast<unsigned char>(e.first[offset]); },
      [](const Entry& e) { return e.first.size(); },
      [](const Entry& a, const Entry& b) { return a.first < b.first; });
  std::vector<uint32_t> order;
  order.reserve(entries.size());
  for (const Entry& e : entries) order.push_back(e.second);
  return order;
}

/// The session's pods (ghosts left out) by namespace/name.
std::vector<uint32_t> sorted_task_ids(const core::Session& ssn) {
  return order_by_key(static_cast<uint32_t>(ssn.tasks.size()),
                      [&](uint32_t i) -> std::optional<std::string_view> {
                        if (ssn.tasks[i].ghost) return std::nullopt;
                        return ssn.tasks[i].key;
                      });
}

double gpu_fraction(const core::TaskInfo& t) {
  if (t.placed_portion > 0) return static_cast<double>(t.placed_portion) / 1000.0;
  if (t.gpu.kind == core::GpuRequestKind::kFraction)
    return static_cast<double>(t.gpu.fraction_milli) / 1000.0;
  return 0;
}

/// The node a pod is on or ran on. The session places only active pods (finished ones use no capacity),
/// so a Succeeded or Failed pod's node comes from its spec.nodeName.
std::string_view node_name(const core::Session& ssn, const core::TaskInfo& t) {
  if (t.node != core::kNoNode) return ssn.nodes[t.node].name;
  const bool finished = t.status == core::PodStatus::kSucceeded || t.status == core::PodStatus::kFailed;
  return finished ? std::string_view(t.pod->node_name) : std::string_view();
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

void write_quantities(PrettyJsonWriter& w, const char* name, const core::QueueQuantities& q) {
  w.key(name);
  w.begin_object();
  w.member("gpu", q.gpu);
  w.member("cpu", q.cpu);
  w.member("memory", q.memory);
  w.end_object();
}

void write_pods(PrettyJsonWriter& w, const core::Session& ssn) {
  w.key("pods");
  w.begin_array();
  for (uint32_t id : sorted_task_ids(ssn)) {
    // A pod consolidation moved is reported where it was pipelined (its stand-in's place).
    const core::TaskInfo* moved = ssn.moved_to(id);
    const core::TaskInfo& t = moved ? *moved : ssn.tasks[id];
    w.begin_object();
    w.member("namespace", t.pod->meta.namespace_);
    w.member("name", t.pod->meta.name);
    w.member("status", core::to_string(t.status));
    w.member("node", node_name(ssn, t));
    w.member("gpuGroups", t.gpu_groups);
    if (t.gpu.is_shared()) {
      w.member("gpuFraction", gpu_fraction(t));
    }
    if (auto r = pod_reason(ssn, t); !r.empty()) {
      w.member("reason", r);
    }
    w.end_object();
  }
  w.end_array();
}

void write_decisions(PrettyJsonWriter& w, const std::vector<events::Decision>& decisions) {
  w.key("decisions");
  w.begin_array();
  for (const auto& d : decisions) {
    w.begin_object();
    w.member("seq", d.seq);
    w.member("action", d.action);
    w.member("kind", events::to_string(d.kind));
    w.member("pod", d.pod);
    w.member("node", d.node);
    w.member("gpuGroups", d.gpu_groups);
    w.member("reason", d.reason);
    w.member("by", d.by);
    w.end_object();
  }
  w.end_array();
}

void write_pod_groups(PrettyJsonWriter& w, const core::Session& ssn) {
  const std::vector<uint32_t> order =
      order_by_key(static_cast<uint32_t>(ssn.jobs.size()),
                   [&](uint32_t i) -> std::optional<std::string_view> { return ssn.jobs[i].key; });
  w.key("podGroups");
  w.begin_array();
  for (uint32_t id : order) {
    const core::JobInfo* j = &ssn.jobs[id];
    w.begin_object();
    w.member("namespace", j->namespace_);
    w.member("name", j->name);
    w.member("queue", j->queue_name);
    w.member("minMember", j->min_member);
    w.member("unschedulable", is_unschedulable(ssn, *j));
    w.key("reasons");
    w.begin_array();
    for (const auto& r : j->fit_errors) {
      w.begin_object();
      w.member("reason", r.reason);
      w.member("message", r.message);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

void write_queues(PrettyJsonWriter& w, const core::Session& ssn) {
  w.key("queues");
  w.begin_array();
  for (const auto& q : ssn.queues) {
    w.begin_object();
    w.member("name", q.name);
    w.member("parent", q.parent == core::kNoQueue ? std::string_view() : std::string_view(ssn.queues[q.parent].name));
    write_quantities(w, "fairShare", q.fair_share);
    write_quantities(w, "allocated", q.allocated);
    write_quantities(w, "requested", q.request);
    // Time-based fair share only: the historical usage the session was given (a share of capacity).
    if (ssn.options().queue_usage != nullptr) write_quantities(w, "usage", q.usage);
    w.end_object();
  }
  w.end_array();
}

std::string write_report(PrettyJsonWriter& w, const core::Session& ssn,
                         const std::vector<events::Decision>* all_decisions) {
  w.begin_object();
  write_pods(w, ssn);
  write_decisions(w, all_decisions ? *all_decisions : ssn.decisions);
  write_pod_groups(w, ssn);
  write_queues(w, ssn);
  w.end_object();
  return w.finish();
}

}  // namespace

std::string render_json(const core::Session& ssn, const std::vector<events::Decision>* all_decisions) {
  PrettyJsonWriter w;
  return write_report(w, ssn, all_decisions);
}

void write_json(std::ostream& out, const core::Session& ssn, const std::vector<events::Decision>* all_decisions) {
  PrettyJsonWriter w(&out);
  write_report(w, ssn, all_decisions);
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
    const std::string node(node_name(ssn, t));
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
