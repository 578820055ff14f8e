#include "events/event_codec.hpp"

#include <array>
#include <iterator>

#include "events/binary.hpp"
#include "k8s/model/enum_names.hpp"
#include "k8s/model/fnv1a.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::events {
namespace {

using namespace binary;

constexpr uint8_t kMinVersion = 1;

struct Encoder {
  std::string& out;
  uint8_t version;

  void operator()(const WatchEvent& w) {
    put_str(out, w.kind);
    put_u8(out, static_cast<uint8_t>(w.type));
    put_str(out, w.resource_version);
    put_str(out, w.object_json);
  }
  void operator()(const DecisionEvent& d) {
    put_varint(out, d.cycle_id);
    const Decision& x = d.decision;
    put_varint(out, x.seq);
    put_str(out, x.action);
    put_u8(out, static_cast<uint8_t>(x.kind));
    put_str(out, x.pod);
    put_str(out, x.pod_uid);
    put_str(out, x.node);
    put_varint(out, x.gpu_groups.size());
    for (const auto& g : x.gpu_groups) put_str(out, g);
    if (version >= 2) put_f64(out, x.gpu_fraction);
    put_str(out, x.reason);
    put_str(out, x.by);
    if (version >= 3) put_varint(out, d.leader_epoch);
    if (version >= 4) put_str(out, x.queue);
  }
  void operator()(const UnschedulableEvent& u) {
    put_varint(out, u.cycle_id);
    put_str(out, u.pod_group);
    put_str(out, u.queue);
    put_varint(out, u.reasons.size());
    for (const auto& r : u.reasons) {
      put_str(out, r.reason);
      put_str(out, r.message);
    }
    if (version >= 5) {
      put_varint(out, u.pods.size());
      for (const auto& p : u.pods) {
        put_str(out, p.pod);
        put_str(out, p.uid);
      }
    }
  }
  void operator()(const CycleStart& c) {
    put_varint(out, c.cycle_id);
    put_varint(out, c.config_hash);
    put_varint(out, c.log_position);
    put_i64(out, c.now);
    if (version >= 2) put_varint(out, c.seed);
    if (version >= 5) {
      put_str(out, c.scheduler_name);
      put_varint(out, c.leader_epoch);
      put_i64(out, c.now_ms);
    }
  }
  void operator()(const CycleEnd& c) {
    put_varint(out, c.cycle_id);
    put_varint(out, c.total_us);
    put_varint(out, c.action_us.size());
    for (const auto& [name, us] : c.action_us) {
      put_str(out, name);
      put_varint(out, us);
    }
  }
  void operator()(const BinderOutcome& b) {
    put_varint(out, b.decision_seq);
    put_str(out, b.pod);
    put_u8(out, static_cast<uint8_t>(b.outcome));
    put_str(out, b.reason);
  }
  void operator()(const LeadershipChange& l) {
    put_varint(out, l.epoch);
    put_str(out, l.holder);
    put_u8(out, l.acquired ? 1 : 0);
  }
  void operator()(const ConfigChange& c) {
    put_varint(out, c.hash);
    put_str(out, c.text);
    if (version >= 5) {
      put_varint(out, c.behaviour_version);
      put_str(out, c.flags);
    }
  }
  void put_optional(const std::optional<int64_t>& v) {
    put_u8(out, v ? 1 : 0);
    if (v) put_i64(out, *v);
  }
  void operator()(const JobStateChange& j) {
    put_varint(out, j.cycle_id);
    put_str(out, j.group_uid);
    put_str(out, j.group);
    put_u8(out, static_cast<uint8_t>(j.field));
    put_optional(j.value);
    put_optional(j.seen);
    put_u8(out, static_cast<uint8_t>(j.source));
  }
  void operator()(const AssumedSettled& a) {
    put_varint(out, a.cycle_id);
    put_varint(out, a.decision_seqs.size());
    for (uint64_t seq : a.decision_seqs) put_varint(out, seq);
  }
  void operator()(const PodGroupWrite& w) {
    put_varint(out, w.cycle_id);
    put_str(out, w.group);
    put_str(out, w.object_json);
    put_u8(out, w.exists ? 1 : 0);
    put_varint(out, w.pods.size());
    for (const auto& p : w.pods) {
      put_str(out, p.pod);
      put_str(out, p.uid);
      put_str(out, p.sub_group);
    }
    put_u8(out, w.settled ? 1 : 0);
  }
  void operator()(const StatusWrite& w) {
    put_varint(out, w.cycle_id);
    put_str(out, w.kind);
    put_str(out, w.object);
    put_str(out, w.uid);
    put_str(out, w.patch_json);
    put_u8(out, w.settled ? 1 : 0);
  }
  void put_step(const AllocationStep& s) {
    put_i64(out, s.at_ms);
    put_f64(out, s.gpu);
    put_f64(out, s.cpu);
    put_f64(out, s.memory);
  }
  void operator()(const AllocationChange& a) {
    put_varint(out, a.cycle_id);
    put_varint(out, a.queues.size());
    for (const auto& q : a.queues) {
      put_str(out, q.queue);
      put_step(q.step);
    }
    put_u8(out, a.capacity ? 1 : 0);
    if (a.capacity) put_step(*a.capacity);
    put_i64(out, a.replaces_after_ms);
    put_i64(out, a.keep_from_ms);
  }
};

std::optional<int64_t> get_optional(Reader& r) {
  const uint8_t present = r.u8();
  if (present > 1) r.fail();
  if (present != 1) return std::nullopt;
  return r.i64();
}

bool get_bool(Reader& r) {
  const uint8_t b = r.u8();
  if (b > 1) r.fail();
  return b == 1;
}

AllocationStep get_step(Reader& r) {
  AllocationStep s;
  s.at_ms = r.i64();
  s.gpu = r.f64();
  s.cpu = r.f64();
  s.memory = r.f64();
  return s;
}

Result<Payload> decode_payload(Reader& r, uint8_t type, uint8_t version) {
  switch (type) {
    case 1: {
      WatchEvent w;
      w.kind = r.str();
      uint8_t t = r.u8();
      if (t > static_cast<uint8_t>(WatchType::kRelist)) return Status::error("unknown watch type");
      w.type = static_cast<WatchType>(t);
      w.resource_version = r.str();
      w.object_json = r.str();
      return Payload{std::move(w)};
    }
    case 2: {
      DecisionEvent d;
      d.cycle_id = r.varint();
      Decision& x = d.decision;
      x.seq = r.varint();
      x.action = r.str();
      uint8_t k = r.u8();
      if (k > static_cast<uint8_t>(DecisionKind::kEvict)) return Status::error("unknown decision kind");
      x.kind = static_cast<DecisionKind>(k);
      x.pod = r.str();
      x.pod_uid = r.str();
      x.node = r.str();
      uint64_t n = r.count();
      x.gpu_groups.reserve(n);
      for (uint64_t i = 0; i < n && r.ok(); ++i) x.gpu_groups.push_back(r.str());
      x.gpu_fraction = version >= 2 ? r.f64() : 0.0;  // v1 upgrade: no fraction recorded.
      x.reason = r.str();
      x.by = r.str();
      d.leader_epoch = version >= 3 ? r.varint() : 0;  // v1, v2 upgrade: no leader election recorded.
      if (version >= 4) x.queue = r.str();             // v1-v3 upgrade: the queue was not recorded.
      return Payload{std::move(d)};
    }
    case 3: {
      UnschedulableEvent u;
      u.cycle_id = r.varint();
      u.pod_group = r.str();
      u.queue = r.str();
      uint64_t n = r.count();
      for (uint64_t i = 0; i < n && r.ok(); ++i) {
        UnschedulableReason reason;
        reason.reason = r.str();
        reason.message = r.str();
        u.reasons.push_back(std::move(reason));
      }
      if (version >= 5) {  // v1-v4 upgrade: the pending pods were not recorded
        const uint64_t pods = r.count();
        for (uint64_t i = 0; i < pods && r.ok(); ++i) {
          PendingPodRef p;
          p.pod = r.str();
          p.uid = r.str();
          u.pods.push_back(std::move(p));
        }
      }
      return Payload{std::move(u)};
    }
    case 4: {
      CycleStart c;
      c.cycle_id = r.varint();
      c.config_hash = r.varint();
      c.log_position = r.varint();
      c.now = r.i64();
      c.seed = version >= 2 ? r.varint() : 0;  // v1 upgrade: cycles used seed 0.
      if (version >= 5) {  // v1-v4 upgrade: the default scheduler name, no epoch recorded.
        c.scheduler_name = r.str();
        c.leader_epoch = r.varint();
        c.now_ms = r.i64();
      }
      return Payload{std::move(c)};
    }
    case 5: {
      CycleEnd c;
      c.cycle_id = r.varint();
      c.total_us = r.varint();
      uint64_t n = r.count();
      for (uint64_t i = 0; i < n && r.ok(); ++i) {
        std::string name = r.str();
        uint64_t us = r.varint();
        c.action_us.emplace_back(std::move(name), us);
      }
      return Payload{std::move(c)};
    }
    case 6: {
      BinderOutcome b;
      b.decision_seq = r.varint();
      b.pod = r.str();
      uint8_t o = r.u8();
      const auto last = version >= 8   ? Outcome::kUnconfirmed
                        : version >= 5 ? Outcome::kCancelled
                                       : Outcome::kAbandoned;
      if (o > static_cast<uint8_t>(last)) return Status::error("unknown binder outcome");
      b.outcome = static_cast<Outcome>(o);
      b.reason = r.str();
      b.settles = version < 5 && b.outcome == Outcome::kBound;
      return Payload{std::move(b)};
    }
    case 7: {
      LeadershipChange l;
      l.epoch = r.varint();
      l.holder = r.str();
      l.acquired = r.u8() != 0;
      return Payload{std::move(l)};
    }
    case 8: {
      // No earlier version wrote this kind: one that claims to is damaged, not old.
      if (version < 4)
        return Status::error("configuration record in schema version " + std::to_string(version));
      ConfigChange c;
      c.hash = r.varint();
      c.text = r.str();
      if (version >= 5) {  // v4 upgrade: unversioned, default flags
        c.behaviour_version = static_cast<uint32_t>(r.varint());
        c.flags = r.str();
      }
      return Payload{std::move(c)};
    }
    case 9: {
      if (version < 5) return Status::error("job state record in schema version " + std::to_string(version));
      JobStateChange j;
      j.cycle_id = r.varint();
      j.group_uid = r.str();
      j.group = r.str();
      const uint8_t f = r.u8();
      if (f >= kJobFields) return Status::error("unknown job state field");
      j.field = static_cast<JobField>(f);
      j.value = get_optional(r);
      j.seen = get_optional(r);
      const uint8_t src = r.u8();
      if (src > static_cast<uint8_t>(JobStateSource::kForget)) return Status::error("unknown job state source");
      j.source = static_cast<JobStateSource>(src);
      return Payload{std::move(j)};
    }
    case 10: {
      if (version < 5) return Status::error("settled record in schema version " + std::to_string(version));
      AssumedSettled a;
      a.cycle_id = r.varint();
      const uint64_t n = r.count();
      for (uint64_t i = 0; i < n && r.ok(); ++i) a.decision_seqs.push_back(r.varint());
      return Payload{std::move(a)};
    }
    case 11: {
      if (version < 6) return Status::error("PodGroup write record in schema version " + std::to_string(version));
      PodGroupWrite w;
      w.cycle_id = r.varint();
      w.group = r.str();
      w.object_json = r.str();
      w.exists = get_bool(r);
      const uint64_t n = r.count();
      for (uint64_t i = 0; i < n && r.ok(); ++i) {
        GroupedPod p;
        p.pod = r.str();
        p.uid = r.str();
        p.sub_group = r.str();
        w.pods.push_back(std::move(p));
      }
      w.settled = get_bool(r);
      return Payload{std::move(w)};
    }
    case 12: {
      if (version < 7) return Status::error("status write record in schema version " + std::to_string(version));
      StatusWrite w;
      w.cycle_id = r.varint();
      w.kind = r.str();
      w.object = r.str();
      w.uid = r.str();
      w.patch_json = r.str();
      w.settled = get_bool(r);
      return Payload{std::move(w)};
    }
    case 13: {
      if (version < 9) return Status::error("allocation record in schema version " + std::to_string(version));
      AllocationChange a;
      a.cycle_id = r.varint();
      const uint64_t n = r.count();
      for (uint64_t i = 0; i < n && r.ok(); ++i) {
        QueueAllocationStep q;
        q.queue = r.str();
        q.step = get_step(r);
        a.queues.push_back(std::move(q));
      }
      if (get_bool(r)) a.capacity = get_step(r);
      a.replaces_after_ms = r.i64();
      a.keep_from_ms = r.i64();
      return Payload{std::move(a)};
    }
  }
  return Status::error("unknown event type " + std::to_string(type));
}

}  // namespace

void encode_event(const Event& e, std::string& out, uint8_t version) {
  put_u8(out, version);
  put_u8(out, static_cast<uint8_t>(e.payload.index() + 1));
  put_i64(out, e.timestamp_us);
  std::visit(Encoder{out, version}, e.payload);
}

Result<Event> decode_event(std::string_view bytes) {
  Reader r(bytes);
  uint8_t version = r.u8();
  uint8_t type = r.u8();
  if (!r.ok()) return Status::error("record too short");
  if (version < kMinVersion || version > kSchemaVersion)
    return Status::error("unsupported schema version " + std::to_string(version));
  Event e;
  e.timestamp_us = r.i64();
  auto payload = decode_payload(r, type, version);
  if (!payload) return payload.status();
  if (!r.ok()) return Status::error("truncated record (type " + std::to_string(type) + ")");
  if (!r.at_end()) return Status::error("trailing bytes after record (type " + std::to_string(type) + ")");
  e.payload = std::move(payload).value();
  e.schema_version = kSchemaVersion;
  return e;
}

Result<int64_t> peek_timestamp(std::string_view bytes) {
  Reader r(bytes);
  const uint8_t version = r.u8();
  r.u8();  // type
  const int64_t ts = r.i64();
  if (!r.ok()) return Status::error("record too short");
  if (version < kMinVersion || version > kSchemaVersion)
    return Status::error("unsupported schema version " + std::to_string(version));
  return ts;
}

const char* kind_name(const Payload& p) {
  static constexpr const char* kNames[] = {"watch",      "decision", "unschedulable", "cycle_start",
                                           "cycle_end",  "outcome",  "leadership",    "config",
                                           "job_state", "settled", "pod_group_write", "status_write",
                                           "allocation"};
  static_assert(std::size(kNames) == std::variant_size_v<Payload>, "a name for every payload kind");
  return kNames[p.index()];
}

uint64_t config_hash(std::string_view text) {
  // Not FNV-1a's own basis (a digit short of it): logs name their configurations by this one.
  return model::fnv1a64(text, 1469598103934665603ULL);
}

uint64_t group_write_hash(const PodGroupWrite& w) {
  std::string text = w.object_json;
  text.push_back('\n');
  for (const auto& p : w.pods) text.append(p.pod).append("\n").append(p.uid).append("\n").append(p.sub_group).append("\n");
  return config_hash(text);
}

uint64_t status_write_hash(const StatusWrite& w) {
  // The patch is this build's own dump (no spaces), so each time is one "lastTransitionTime":"..." run.
  static constexpr std::string_view kTime = "\"lastTransitionTime\":\"";
  std::string text = w.kind + "\n" + w.object + "\n" + w.uid + "\n";
  std::string_view rest = w.patch_json;
  for (size_t at = rest.find(kTime); at != std::string_view::npos; at = rest.find(kTime)) {
    text.append(rest.substr(0, at));
    const size_t end = rest.find('"', at + kTime.size());
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  text.append(rest);
  return config_hash(text);
}

uint64_t config_hash(std::string_view text, uint32_t behaviour_version, std::string_view flags) {
  if (behaviour_version == 0 && flags.empty()) return config_hash(text);
  return config_hash(std::string(text) + "\n# kai-cpp behaviour " + std::to_string(behaviour_version) +
                     (flags.empty() ? "" : "\n# flags " + std::string(flags)));
}

namespace {

constexpr std::array<const char*, kJobFields> kJobFieldNames = {"last-start", "stale-since", "last-eviction"};
static_assert(model::names_every(JobField::kLastEviction, kJobFieldNames));
constexpr std::array<const char*, kJobFields> kJobFieldAnnotations = {
    model::kLastStartAnnotation, model::kStaleSinceAnnotation, model::kLastEvictionAnnotation};

}  // namespace

const char* to_string(JobField f) {
  return kJobFieldNames[static_cast<size_t>(f)];
}

const char* job_field_annotation(JobField f) {
  return kJobFieldAnnotations[static_cast<size_t>(f)];
}

namespace {

constexpr std::array<const char*, 3> kJobStateSourceNames = {"decided", "watched", "forget"};
static_assert(model::names_every(JobStateSource::kForget, kJobStateSourceNames));
constexpr std::array<const char*, 5> kWatchTypeNames = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "RELIST"};
static_assert(model::names_every(WatchType::kRelist, kWatchTypeNames));
constexpr std::array<const char*, 6> kOutcomeNames = {"bound",     "bind_failed", "reservation_timed_out",
                                                      "abandoned", "cancelled",   "unconfirmed"};
static_assert(model::names_every(Outcome::kUnconfirmed, kOutcomeNames));

}  // namespace

const char* to_string(JobStateSource s) {
  return model::enum_name(s, kJobStateSourceNames, "unknown");
}

const char* to_string(WatchType t) {
  return model::enum_name(t, kWatchTypeNames, "UNKNOWN");
}

const char* to_string(Outcome o) {
  return model::enum_name(o, kOutcomeNames, "unknown");
}

}  // namespace kai::events
