#include "tools/kai-sim/what_if.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "actors/scheduler/core/simulation.hpp"

namespace kai::sim {
namespace {

/// The cluster without the pods finished by then, plus the workload.
model::ClusterObjects world_at(const WhatIfInput& in, const std::set<std::string>& finished) {
  model::ClusterObjects w = in.cluster;
  std::erase_if(w.pods, [&](const model::Pod& p) { return finished.count(p.meta.namespace_ + "/" + p.meta.name) != 0; });
  w.pods.insert(w.pods.end(), in.workload.pods.begin(), in.workload.pods.end());
  w.pod_groups.insert(w.pod_groups.end(), in.workload.pod_groups.begin(), in.workload.pod_groups.end());
  return w;
}

/// GPUs, in milli-devices, of one task as the queue counts them. A GPU-memory request counts as a
/// whole device each: its portion depends on the node it lands on.
int64_t task_gpu_milli(const core::TaskInfo& t) {
  switch (t.gpu.kind) {
    case core::GpuRequestKind::kWhole: return t.gpu.whole_milli;
    case core::GpuRequestKind::kFraction: return t.gpu.fraction_milli * t.gpu.num_devices;
    case core::GpuRequestKind::kMemory: return 1000LL * t.gpu.num_devices;
    case core::GpuRequestKind::kMig: return static_cast<int64_t>(t.mig_gpus * 1000);
    case core::GpuRequestKind::kNone: return 0;
  }
  return 0;
}

/// The GPUs the job's minimum gang needs: its min_member smallest requests.
int64_t gang_gpu_milli(const core::Session& ssn, const core::JobInfo& job) {
  std::vector<int64_t> gpus;
  for (uint32_t t : job.tasks) gpus.push_back(task_gpu_milli(ssn.tasks[t]));
  std::sort(gpus.begin(), gpus.end());
  const size_t n = std::min(gpus.size(), static_cast<size_t>(std::max(1, job.min_member)));
  int64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += gpus[i];
  return sum;
}

/// The idle GPUs the job could take: idle devices of ready, schedulable nodes, within what the
/// limits of its queue and the queue's parents leave.
int64_t usable_gpu_milli(const core::Session& ssn, const core::JobInfo& job) {
  int64_t idle = 0;
  for (const core::NodeInfo& n : ssn.nodes) {
    if (n.ready && !n.unschedulable) idle += n.idle.milli_gpu;
  }
  for (int32_t q = job.queue; q != core::kNoQueue; q = ssn.queues[q].parent) {
    const core::QueueInfo& queue = ssn.queues[q];
    if (queue.max_allowed.gpu == -1) continue;  // unlimited
    idle = std::min(idle, static_cast<int64_t>((queue.max_allowed.gpu - queue.allocated.gpu) * 1000));
  }
  return std::max<int64_t>(0, idle);
}

Point evaluate(const core::SimulationResult& r, const WhatIfInput& in, int64_t at) {
  const core::Session& ssn = *r.session;
  std::set<std::string> uids;
  for (const model::Pod& p : in.workload.pods) uids.insert(p.meta.uid);
  Point point;
  point.at = at;
  std::set<uint32_t> jobs;
  std::set<std::string> in_session;
  for (const core::TaskInfo& t : ssn.tasks) {
    if (t.ghost || uids.count(t.uid) == 0) continue;
    jobs.insert(t.job);
    in_session.insert(t.uid);
  }
  std::set<std::string> groups;
  std::map<std::string, const core::JobInfo*> waiting;  // by key: a stable order
  for (uint32_t j : jobs) {
    const core::JobInfo& job = ssn.jobs[j];
    groups.insert(job.key);
    if (ssn.active_allocated_count(job) < job.min_member) waiting[job.key] = &job;
  }
  for (const auto& [key, job] : waiting) {
    Waiting w{job->key, job->queue_name, {}, 1};
    for (const auto& e : job->fit_errors) w.reasons.push_back(e.message);
    const int64_t lack = gang_gpu_milli(ssn, *job) - usable_gpu_milli(ssn, *job);
    w.missing_gpus = std::max<int64_t>(1, (lack + 999) / 1000);
    point.waiting.push_back(std::move(w));
  }
  // A pod the session does not schedule (another scheduler's) never runs here.
  for (const model::Pod& p : in.workload.pods) {
    if (in_session.count(p.meta.uid) != 0) continue;
    point.waiting.push_back(Waiting{p.meta.namespace_ + "/" + p.meta.name, "",
                                    {"not scheduled by " + in.options.scheduler_name + " (spec.schedulerName is \"" +
                                     p.scheduler_name + "\")"},
                                    1});
  }
  point.fits = point.waiting.empty();
  for (const events::Decision& d : r.decisions) {
    if (d.kind == events::DecisionKind::kEvict) {
      if (groups.count(d.by) != 0) point.victims.push_back(Victim{d.pod, d.queue, d.action, d.by, d.reason});
    } else if (uids.count(d.pod_uid) != 0) {
      point.placements.push_back(
          Placement{d.pod, d.node, events::to_string(d.kind), d.gpu_groups, d.gpu_fraction});
    }
  }
  std::sort(point.placements.begin(), point.placements.end(),
            [](const Placement& a, const Placement& b) { return a.pod < b.pod; });
  return point;
}

Point simulate_at(const WhatIfInput& in, const std::set<std::string>& finished, int64_t at,
                  std::vector<std::string>* warnings) {
  core::SessionOptions options = in.options;
  options.now = at;
  options.now_ms = 0;  // simulate sets it from `now`
  const core::SimulationResult r = core::simulate(world_at(in, finished), options, 1, 0, in.records);
  if (warnings != nullptr) *warnings = r.session->warnings;
  return evaluate(r, in, at);
}

}  // namespace

WhatIfAnswer what_if(const WhatIfInput& in) {
  WhatIfAnswer answer;
  answer.now = in.options.now;
  answer.ends = in.ends;
  answer.first = simulate_at(in, {}, in.options.now, &answer.warnings);
  if (answer.first.fits) return answer;
  // The completions in time order; one already overdue ends now (the kubelet ends it at once).
  std::map<int64_t, std::vector<std::string>> by_time;
  for (const ExpectedEnd& e : in.ends) {
    if (e.at) by_time[std::max(*e.at, in.options.now)].push_back(e.pod);
  }
  if (by_time.empty()) return answer;
  std::vector<int64_t> moments;
  moments.reserve(by_time.size());
  for (const auto& [at, pods] : by_time) moments.push_back(at);
  const auto finished_by = [&](size_t i) {
    std::set<std::string> finished;
    for (auto it = by_time.begin(); it != by_time.end() && it->first <= moments[i]; ++it)
      finished.insert(it->second.begin(), it->second.end());
    return finished;
  };
  const auto point_at = [&](size_t i) { return simulate_at(in, finished_by(i), moments[i], nullptr); };
  const auto answer_with = [&](size_t i, Point point, bool fits) {
    for (const auto& [at, pods] : by_time) {
      if (at > moments[i]) break;
      answer.finished.insert(answer.finished.end(), pods.begin(), pods.end());
    }
    (fits ? answer.earliest : answer.last) = std::move(point);
  };
  // Each moment is a whole cycle on the cluster (about a second at 5,000 nodes), so the moments are
  // searched, not walked: more finished pods leave at least as much room, so once the workload fits
  // it keeps fitting. Galloping from the first moment, then halving the last gap, finds the first
  // moment it fits in about 2 log2(n) cycles.
  const size_t last = moments.size() - 1;
  Point at_last = point_at(last);
  if (!at_last.fits) {
    answer_with(last, std::move(at_last), false);
    return answer;
  }
  size_t lo = 0, hi = last;  // hi fits; every index below lo is known not to
  std::optional<Point> at_hi = std::move(at_last);
  for (size_t step = 1; lo < hi;) {
    const size_t probe = std::min(hi, lo + step - 1);
    if (probe == hi) break;
    Point p = point_at(probe);
    if (p.fits) {
      hi = probe;
      at_hi = std::move(p);
      break;
    }
    lo = probe + 1;
    step *= 2;
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    Point p = point_at(mid);
    if (p.fits) {
      hi = mid;
      at_hi = std::move(p);
    } else {
      lo = mid + 1;
    }
  }
  answer_with(hi, std::move(*at_hi), true);
  return answer;
}

}  // namespace kai::sim
