#include "tools/kai-log/counterfactual_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "k8s/model/time.hpp"

namespace kai::kailog {
namespace {

/// Nearest-rank percentile of `values` (sorted here); 0 when empty.
double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

/// GPU-hours of one run inside [from, to].
double gpu_hours(const PodRun& r, double gpus, int64_t from, int64_t to) {
  if (!r.bind_ms) return 0;
  const int64_t a = std::max(*r.bind_ms, from);
  const int64_t b = std::min(r.end_ms, to);
  return b > a ? gpus * static_cast<double>(b - a) / 3.6e6 : 0;
}

bool holds_at(const PodRun& r, int64_t ms) {
  if (!r.bind_ms || *r.bind_ms > ms) return false;
  return r.end == PodEnd::kRunningAtEnd ? ms <= r.end_ms : ms < r.end_ms;
}

void add(QueueFigures& f, std::vector<double>& waits, const PodComparison& p, const PodRun& r, int64_t from,
         int64_t to) {
  ++f.pods;
  if (r.bind_ms) {
    ++f.bound;
    ++f.ends[r.end];
    f.gpu_hours += gpu_hours(r, p.gpus, from, to);
    if (p.pending_at_start) waits.push_back(static_cast<double>(*r.bind_ms - p.created_ms) / 1000.0);
  } else if (p.pending_at_start) {
    ++f.never_bound;
    ++f.ends[PodEnd::kNeverBound];
  }
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// GPU-hours readable at any scale: whole hours when large, three significant digits when small.
std::string hours(double v) {
  if (v >= 100) return fixed(v, 0);
  if (v >= 1 || v == 0) return fixed(v, 2);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string time_text(int64_t ms) { return model::format_rfc3339(ms / 1000); }

nlohmann::json figures_json(const QueueFigures& f) {
  nlohmann::json ends = nlohmann::json::object();
  for (const auto& [e, n] : f.ends) ends[to_string(e)] = n;
  return {{"pods", f.pods},         {"bound", f.bound},          {"neverBound", f.never_bound},
          {"gpuHours", f.gpu_hours}, {"waitP50Seconds", f.wait_p50_s}, {"waitP95Seconds", f.wait_p95_s},
          {"waits", f.waits},        {"evictions", f.ends.count(PodEnd::kEvicted) ? f.ends.at(PodEnd::kEvicted) : 0},
          {"ends", ends}};
}

nlohmann::json run_json(const PodRun& r) {
  nlohmann::json j = {{"end", to_string(r.end)}};
  if (r.bind_ms) {
    j["node"] = r.node;
    j["bindCycle"] = r.bind_cycle;
    j["bound"] = time_text(*r.bind_ms);
    j["endedAt"] = time_text(r.end_ms);
  }
  if (r.evict_cycle != 0) j["evictCycle"] = r.evict_cycle;
  return j;
}

uint64_t evictions(const QueueFigures& f) {
  auto it = f.ends.find(PodEnd::kEvicted);
  return it == f.ends.end() ? 0 : it->second;
}

}  // namespace

CounterfactualReport summarize(const CounterfactualResult& result, int samples) {
  CounterfactualReport report;
  report.result = &result;
  std::map<std::string, QueueComparison> by_queue;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> waits;
  for (const auto& p : result.pods) {
    QueueComparison& q = by_queue[p.queue];
    q.queue = p.queue;
    auto& [rec_waits, cf_waits] = waits[p.queue];
    add(q.recorded, rec_waits, p, p.recorded, result.from_ms, result.to_ms);
    add(q.counterfactual, cf_waits, p, p.counterfactual, result.from_ms, result.to_ms);
    const bool same = p.recorded.bind_ms.has_value() == p.counterfactual.bind_ms.has_value() &&
                      (!p.recorded.bind_ms ||
                       (p.recorded.node == p.counterfactual.node && p.recorded.bind_cycle == p.counterfactual.bind_cycle));
    if (!same) ++report.placed_differently;
    if (p.recreated_after_eviction) ++report.recreated_after_eviction;
    if (!p.run_time_known && p.counterfactual.bind_ms) ++report.censored;
  }
  for (auto& [name, q] : by_queue) {
    auto& [rec_waits, cf_waits] = waits[name];
    q.recorded.waits = rec_waits.size();
    q.recorded.wait_p50_s = percentile(rec_waits, 0.50);
    q.recorded.wait_p95_s = percentile(rec_waits, 0.95);
    q.counterfactual.waits = cf_waits.size();
    q.counterfactual.wait_p50_s = percentile(cf_waits, 0.50);
    q.counterfactual.wait_p95_s = percentile(cf_waits, 0.95);
    report.queues.push_back(std::move(q));
  }
  const int n = std::max(2, static_cast<int>(std::min<uint64_t>(result.cycles, static_cast<uint64_t>(samples))));
  const int64_t span = std::max<int64_t>(0, result.to_ms - result.from_ms);
  for (int i = 0; i < n; ++i) {
    AllocationSample s;
    s.ms = result.from_ms + span * i / (n - 1);
    for (const auto& q : report.queues) s.gpus[q.queue] = {0, 0};
    for (const auto& p : result.pods) {
      auto& [rec, cf] = s.gpus[p.queue];
      if (holds_at(p.recorded, s.ms)) rec += p.gpus;
      if (holds_at(p.counterfactual, s.ms)) cf += p.gpus;
    }
    report.allocation.push_back(std::move(s));
  }
  return report;
}

std::string render_table(const CounterfactualReport& report) {
  const CounterfactualResult& r = *report.result;
  std::ostringstream out;
  out << "Window " << time_text(r.from_ms) << " .. " << time_text(r.to_ms) << ", " << r.cycles << " cycles";
  if (r.added_cycles != 0) out << " (+" << r.added_cycles << " at simulated completions)";
  out << ", " << r.pods.size() << " pods (recorded -> counterfactual)\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %-21s %-14s %-14s %-8s %-9s %s\n", "QUEUE", "GPU-HOURS", "WAIT P50 (s)",
                "WAIT P95 (s)", "EVICTED", "BOUND", "NEVER BOUND");
  out << line;
  for (const auto& q : report.queues) {
    const auto pair = [](const std::string& a, const std::string& b) { return a + " -> " + b; };
    std::snprintf(line, sizeof line, "%-16s %-21s %-14s %-14s %-8s %-9s %s\n", q.queue.c_str(),
                  pair(hours(q.recorded.gpu_hours), hours(q.counterfactual.gpu_hours)).c_str(),
                  pair(fixed(q.recorded.wait_p50_s, 1), fixed(q.counterfactual.wait_p50_s, 1)).c_str(),
                  pair(fixed(q.recorded.wait_p95_s, 1), fixed(q.counterfactual.wait_p95_s, 1)).c_str(),
                  pair(std::to_string(evictions(q.recorded)), std::to_string(evictions(q.counterfactual))).c_str(),
                  pair(std::to_string(q.recorded.bound), std::to_string(q.counterfactual.bound)).c_str(),
                  pair(std::to_string(q.recorded.never_bound), std::to_string(q.counterfactual.never_bound)).c_str());
    out << line;
  }
  out << "How the pods' time ended:";
  const char* sep = " ";
  for (PodEnd e : {PodEnd::kCompleted, PodEnd::kDeletedByUser, PodEnd::kEvicted, PodEnd::kRunningAtEnd,
                   PodEnd::kNeverBound}) {
    uint64_t rec = 0, cf = 0;
    for (const auto& q : report.queues) {
      rec += q.recorded.ends.count(e) ? q.recorded.ends.at(e) : 0;
      cf += q.counterfactual.ends.count(e) ? q.counterfactual.ends.at(e) : 0;
    }
    out << sep << to_string(e) << " " << rec << " -> " << cf;
    sep = ", ";
  }
  out << "\n";
  out << "Pods placed differently (node or cycle): " << report.placed_differently << "\n";
  out << "Run times not in the recording (ran to the window's end or --default-runtime): " << report.censored
      << "\n";
  out << "Pods a controller recreated after a recorded eviction (arrive all the same): "
      << report.recreated_after_eviction << "\n";
  for (const auto& n : r.notes) out << "note: " << n << "\n";
  return out.str();
}

std::string render_csv(const CounterfactualReport& report) {
  std::ostringstream out;
  out << "queue,world,metric,time,value\n";
  for (const auto& q : report.queues) {
    for (const auto& world : {std::pair<const char*, const QueueFigures*>{"recorded", &q.recorded},
                              std::pair<const char*, const QueueFigures*>{"counterfactual", &q.counterfactual}}) {
      const QueueFigures* f = world.second;
      const auto row = [&](const char* metric, const std::string& value) {
        out << q.queue << "," << world.first << "," << metric << ",," << value << "\n";
      };
      row("pods", std::to_string(f->pods));
      row("bound", std::to_string(f->bound));
      row("never_bound", std::to_string(f->never_bound));
      row("evictions", std::to_string(evictions(*f)));
      row("gpu_hours", fixed(f->gpu_hours, 4));
      row("wait_p50_s", fixed(f->wait_p50_s, 3));
      row("wait_p95_s", fixed(f->wait_p95_s, 3));
      for (PodEnd e : {PodEnd::kCompleted, PodEnd::kDeletedByUser, PodEnd::kEvicted, PodEnd::kRunningAtEnd,
                       PodEnd::kNeverBound}) {
        std::string metric = std::string("ended_") + to_string(e);
        std::replace(metric.begin(), metric.end(), ' ', '_');
        row(metric.c_str(), std::to_string(f->ends.count(e) ? f->ends.at(e) : 0));
      }
    }
  }
  for (const auto& s : report.allocation) {
    for (const auto& [queue, gpus] : s.gpus) {
      out << queue << ",recorded,gpus_allocated," << time_text(s.ms) << "," << fixed(gpus.first, 3) << "\n";
      out << queue << ",counterfactual,gpus_allocated," << time_text(s.ms) << "," << fixed(gpus.second, 3) << "\n";
    }
  }
  return out.str();
}

std::string render_json(const CounterfactualReport& report) {
  const CounterfactualResult& r = *report.result;
  nlohmann::json j;
  j["window"] = {{"from", time_text(r.from_ms)}, {"to", time_text(r.to_ms)}, {"cycles", r.cycles},
                 {"addedCycles", r.added_cycles}};
  nlohmann::json queues = nlohmann::json::array();
  for (const auto& q : report.queues)
    queues.push_back({{"queue", q.queue},
                      {"recorded", figures_json(q.recorded)},
                      {"counterfactual", figures_json(q.counterfactual)}});
  j["queues"] = queues;
  nlohmann::json allocation = nlohmann::json::array();
  for (const auto& s : report.allocation) {
    nlohmann::json by_queue = nlohmann::json::object();
    for (const auto& [queue, gpus] : s.gpus) by_queue[queue] = {{"recorded", gpus.first}, {"counterfactual", gpus.second}};
    allocation.push_back({{"time", time_text(s.ms)}, {"gpus", by_queue}});
  }
  j["allocation"] = allocation;
  nlohmann::json pods = nlohmann::json::array();
  for (const auto& p : r.pods) {
    pods.push_back({{"pod", p.key},
                    {"uid", p.uid},
                    {"queue", p.queue},
                    {"gpus", p.gpus},
                    {"runTimeKnown", p.run_time_known},
                    {"recreatedAfterEviction", p.recreated_after_eviction},
                    {"recorded", run_json(p.recorded)},
                    {"counterfactual", run_json(p.counterfactual)}});
  }
  j["pods"] = pods;
  j["summary"] = {{"pods", r.pods.size()},
                  {"placedDifferently", report.placed_differently},
                  {"censoredRunTimes", report.censored},
                  {"recreatedAfterEviction", report.recreated_after_eviction}};
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

}  // namespace kai::kailog
