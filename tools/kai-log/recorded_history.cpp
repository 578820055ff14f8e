#include "tools/kai-log/recorded_history.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "k8s/model/kinds.hpp"

namespace kai::kailog {
namespace {

class HistoryReader {
 public:
  explicit HistoryReader(std::ostream& err) : err_(err) {}

  bool on_event(uint64_t seq, const model::Result<events::Event>& e) {
    h_.last_seq = seq;
    if (!e) {
      if (h_.unreadable++ == 0) err_ << "kai-log: record " << seq << " skipped: " << e.message() << "\n";
      return true;
    }
    const LogMoment at{seq, e->timestamp_us / 1000};
    h_.last_ms = at.ms;
    if (const auto* w = std::get_if<events::WatchEvent>(&e->payload)) {
      if (w->kind == "Pod") on_pod_event(*w, at);
    } else if (const auto* d = std::get_if<events::DecisionEvent>(&e->payload)) {
      on_decision(*d, at);
    } else if (const auto* c = std::get_if<events::CycleStart>(&e->payload)) {
      h_.cycles.push_back({*c, seq});
      cycle_ms_[c->cycle_id] = c->now_ms;
    } else if (const auto* c = std::get_if<events::ConfigChange>(&e->payload)) {
      h_.configs.push_back(*c);
    }
    return true;
  }

  RecordedHistory finish() {
    // Recreated after an eviction: the same owner, created within kRecreatedWithinMs after it.
    std::map<std::string, std::vector<int64_t>> evictions_by_owner;
    for (auto& [uid, p] : h_.pods)
      if (p.evicted && !p.deleted) p.evicted.reset();  // the eviction did not happen (its call failed)
    for (const auto& [uid, p] : h_.pods)
      if (p.evicted && !p.owner_uid.empty()) evictions_by_owner[p.owner_uid].push_back(p.evicted->ms);
    for (auto& [uid, p] : h_.pods) {
      auto it = evictions_by_owner.find(p.owner_uid);
      if (p.owner_uid.empty() || it == evictions_by_owner.end()) continue;
      for (int64_t ms : it->second) {
        if (p.created_ms >= ms - 999 && p.created_ms <= ms + kRecreatedWithinMs) p.recreated_after_eviction = true;
      }
    }
    return std::move(h_);
  }

 private:
  void on_pod_event(const events::WatchEvent& w, const LogMoment& at) {
    if (w.type == events::WatchType::kBookmark) return;
    auto j = nlohmann::json::parse(w.object_json, nullptr, false);
    if (j.is_discarded()) return;  // the projection reports undecodable objects; nothing to learn here
    if (w.type == events::WatchType::kRelist) {
      const nlohmann::json* items = j.is_array() ? &j : (j.contains("items") ? &j["items"] : nullptr);
      if (items == nullptr || !items->is_array()) return;
      std::set<std::string> listed;
      for (const auto& item : *items) {
        auto pod = model::decode_pod(item);
        if (!pod) continue;
        listed.insert(pod->meta.uid);
        on_pod(*pod, at);
      }
      for (auto& [uid, p] : h_.pods)
        if (!p.deleted && !listed.count(uid)) p.deleted = at;
      return;
    }
    auto pod = model::decode_pod(j);
    if (!pod) return;
    on_pod(*pod, at);
    if (w.type == events::WatchType::kDeleted) {
      RecordedPod& p = h_.pods[pod->meta.uid];
      if (!p.deleted) p.deleted = at;
    }
  }

  void on_pod(const model::Pod& pod, const LogMoment& at) {
    auto [it, added] = h_.pods.try_emplace(pod.meta.uid);
    RecordedPod& p = it->second;
    if (added) {
      p.key = pod.meta.namespace_ + "/" + pod.meta.name;
      p.uid = pod.meta.uid;
      if (!pod.meta.owner_references.empty()) p.owner_uid = pod.meta.owner_references.front().uid;
      p.scheduler_name = pod.scheduler_name;
      p.first_seen = at;
      p.created_ms = pod.meta.creation_timestamp != 0 ? pod.meta.creation_timestamp * 1000 : at.ms;
    }
    if (!p.bound && !pod.node_name.empty()) {
      p.bound = at;
      p.node = pod.node_name;
      auto d = last_bind_.find(pod.meta.uid);
      if (d != last_bind_.end()) {
        p.bind_cycle = d->second.first;
        p.bind_cycle_ms = cycle_ms_[d->second.first];
      }
    }
    if (!p.finished && (pod.phase == "Succeeded" || pod.phase == "Failed")) {
      p.finished = at;
      p.final_phase = pod.phase;
    }
  }

  void on_decision(const events::DecisionEvent& d, const LogMoment& at) {
    const std::string& uid = d.decision.pod_uid;
    if (uid.empty()) return;
    auto known = h_.pods.find(uid);
    if (known != h_.pods.end()) known->second.decisions.push_back({d.cycle_id, d.decision.kind, d.decision.node});
    if (d.decision.kind == events::DecisionKind::kBind) {
      last_bind_[uid] = {d.cycle_id, d.decision.node};
    } else if (d.decision.kind == events::DecisionKind::kEvict) {
      auto it = h_.pods.find(uid);
      if (it == h_.pods.end() || it->second.evicted) return;
      RecordedPod& p = it->second;
      if (p.deleted) {  // decided on a cut that still had it: its user's deletion came first
        if (p.evict_cycle == 0) p.evict_cycle = d.cycle_id;
        return;
      }
      p.evicted = at;
      p.evict_cycle = d.cycle_id;
      auto bind = last_bind_.find(uid);
      if (!p.bound && bind != last_bind_.end()) {
        // Evicted while its bind was still in flight: the scheduler held its place from the bind
        // decision on, as the cycles counted it (the bind itself then fails: the pod is gone).
        p.bound = at;
        p.node = bind->second.second;
        p.bind_cycle = bind->second.first;
        p.bind_cycle_ms = cycle_ms_[bind->second.first];
      }
    }
  }

  std::ostream& err_;
  RecordedHistory h_;
  std::map<std::string, std::pair<uint64_t, std::string>> last_bind_;  // pod UID -> its last bind decision's cycle, node
  std::map<uint64_t, int64_t> cycle_ms_;       // cycle -> its clock
};

}  // namespace

int64_t RecordedHistory::eviction_latency_ms() const {
  std::vector<int64_t> latencies;
  for (const auto& [uid, p] : pods)
    if (p.evicted && p.deleted) latencies.push_back(std::max<int64_t>(0, p.deleted->ms - p.evicted->ms));
  if (latencies.empty()) return 0;
  std::nth_element(latencies.begin(), latencies.begin() + static_cast<std::ptrdiff_t>(latencies.size() / 2),
                   latencies.end());
  return latencies[latencies.size() / 2];
}

model::Result<RecordedHistory> read_recorded_history(const storage::EventLog& log, std::ostream& err) {
  HistoryReader reader(err);
  auto st = log.read(log.retained_from(), UINT64_MAX,
                     [&](uint64_t seq, const model::Result<events::Event>& e) { return reader.on_event(seq, e); });
  if (!st) return st;
  return reader.finish();
}

}  // namespace kai::kailog
