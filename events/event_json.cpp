// Codec unit: nlohmann renders dumps.
#include "events/event_json.hpp"

#include <nlohmann/json.hpp>

namespace kai::events {
namespace {

using json = nlohmann::json;

struct Render {
  json& j;
  void operator()(const WatchEvent& w) {
    j["objectKind"] = w.kind;
    j["type"] = to_string(w.type);
    j["resourceVersion"] = w.resource_version;
    json obj = json::parse(w.object_json, nullptr, false);
    if (obj.is_discarded()) {
      j["object"] = w.object_json;
    } else {
      j["object"] = std::move(obj);
    }
  }
  void operator()(const DecisionEvent& d) {
    j["cycle"] = d.cycle_id;
    j["decisionSeq"] = d.decision.seq;
    j["action"] = d.decision.action;
    j["decision"] = to_string(d.decision.kind);
    j["pod"] = d.decision.pod;
    j["podUid"] = d.decision.pod_uid;
    j["node"] = d.decision.node;
    j["gpuGroups"] = d.decision.gpu_groups;
    if (d.decision.gpu_fraction != 0) j["gpuFraction"] = d.decision.gpu_fraction;
    j["reason"] = d.decision.reason;
    j["by"] = d.decision.by;
    j["queue"] = d.decision.queue;
    if (d.leader_epoch != 0) j["leaderEpoch"] = d.leader_epoch;
  }
  void operator()(const UnschedulableEvent& u) {
    j["cycle"] = u.cycle_id;
    j["podGroup"] = u.pod_group;
    j["queue"] = u.queue;
    json rs = json::array();
    for (const auto& r : u.reasons) rs.push_back({{"reason", r.reason}, {"message", r.message}});
    j["reasons"] = std::move(rs);
    if (!u.pods.empty()) {
      json ps = json::array();
      for (const auto& p : u.pods) ps.push_back({{"pod", p.pod}, {"uid", p.uid}});
      j["pods"] = std::move(ps);
    }
  }
  void operator()(const CycleStart& c) {
    j["cycle"] = c.cycle_id;
    j["configHash"] = c.config_hash;
    j["logPosition"] = c.log_position;
    j["now"] = c.now;
    j["seed"] = c.seed;
    j["schedulerName"] = c.scheduler_name;
    if (c.leader_epoch != 0) j["leaderEpoch"] = c.leader_epoch;
    if (c.now_ms != 0) j["nowMs"] = c.now_ms;
  }
  void operator()(const CycleEnd& c) {
    j["cycle"] = c.cycle_id;
    j["totalUs"] = c.total_us;
    json a = json::object();
    for (const auto& [name, us] : c.action_us) a[name] = us;
    j["actionUs"] = std::move(a);
  }
  void operator()(const BinderOutcome& b) {
    j["decisionSeq"] = b.decision_seq;
    j["pod"] = b.pod;
    j["outcome"] = to_string(b.outcome);
    j["reason"] = b.reason;
  }
  void operator()(const LeadershipChange& l) {
    j["epoch"] = l.epoch;
    j["holder"] = l.holder;
    j["acquired"] = l.acquired;
  }
  void operator()(const ConfigChange& c) {
    j["configHash"] = c.hash;
    j["text"] = c.text;
    j["behaviourVersion"] = c.behaviour_version;
    if (!c.flags.empty()) j["flags"] = c.flags;
  }
  void operator()(const JobStateChange& c) {
    j["cycle"] = c.cycle_id;
    j["groupUid"] = c.group_uid;
    j["podGroup"] = c.group;
    j["field"] = to_string(c.field);
    j["value"] = c.value ? json(*c.value) : json(nullptr);
    if (c.seen) j["seen"] = *c.seen;
    j["source"] = to_string(c.source);
  }
  void operator()(const AssumedSettled& a) {
    j["cycle"] = a.cycle_id;
    j["decisionSeqs"] = a.decision_seqs;
  }
  void operator()(const StatusWrite& w) {
    j["cycle"] = w.cycle_id;
    j["kind"] = w.kind;
    j["object"] = w.object;
    if (w.settled) {
      j["settled"] = true;
      return;
    }
    j["uid"] = w.uid;
    j["patch"] = json::parse(w.patch_json, nullptr, false);  // a discarded value if not JSON
  }
  static json step_json(const AllocationStep& s) {
    return {{"at_ms", s.at_ms}, {"gpu", s.gpu}, {"cpu", s.cpu}, {"memory", s.memory}};
  }
  void operator()(const AllocationChange& a) {
    j["cycle"] = a.cycle_id;
    json queues = json::object();
    for (const auto& q : a.queues) queues[q.queue] = step_json(q.step);
    j["queues"] = std::move(queues);
    if (a.capacity) j["capacity"] = step_json(*a.capacity);
    j["replacesAfterMs"] = a.replaces_after_ms;
    j["keepFromMs"] = a.keep_from_ms;
  }
  void operator()(const PodGroupWrite& w) {
    j["cycle"] = w.cycle_id;
    j["podGroup"] = w.group;
    if (w.settled) {
      j["settled"] = true;
      return;
    }
    if (!w.object_json.empty()) {
      j["object"] = json::parse(w.object_json, nullptr, false);  // a discarded value if not JSON
      j["exists"] = w.exists;
    }
    json pods = json::array();
    for (const auto& p : w.pods) {
      json o = {{"pod", p.pod}, {"uid", p.uid}};
      if (!p.sub_group.empty()) o["subGroup"] = p.sub_group;
      pods.push_back(std::move(o));
    }
    j["pods"] = std::move(pods);
  }
};

}  // namespace

std::string to_json_line(const Event& e) {
  json j;
  j["seq"] = e.seq;
  j["ts"] = e.timestamp_us;
  j["v"] = e.schema_version;
  j["kind"] = kind_name(e.payload);
  std::visit(Render{j}, e.payload);
  // Replace invalid UTF-8 rather than throw: dump must work on any record that decoded.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace kai::events
