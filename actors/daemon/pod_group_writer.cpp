#include "actors/daemon/pod_group_writer.hpp"

#include <spdlog/spdlog.h>

#include "actors/daemon/pod_group_update.hpp"
#include "k8s/model/well_known_names.hpp"
#include "k8s/model/time.hpp"

namespace kai::daemon {
namespace {

/// "namespace/name" split at its slash.
std::pair<std::string, std::string> split_key(const std::string& key) {
  const size_t slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

/// Tries of a PodGroup update that meets a newer version (someone else wrote between read and write).
constexpr int kUpdateTries = 3;

}  // namespace

PodGroupWriter::PodGroupWriter(PodGroupApi& api, std::function<bool()> may_act, StatusPacing pacing)
    : api_(api), may_act_(std::move(may_act)), pacing_(pacing) {
  start([this] { work(); });
}

PodGroupWriter::~PodGroupWriter() {
  stop();
}

void PodGroupWriter::write(const events::JobStateChange& change) {
  const char* annotation = events::job_field_annotation(change.field);
  std::optional<std::string> value;
  if (change.value) value = model::format_rfc3339(*change.value);
  {
    std::lock_guard lock(mu_);
    pending_[change.group][annotation] = std::move(value);
  }
  cv_.notify_one();
}

void PodGroupWriter::write(const events::PodGroupWrite& write) {
  if (write.settled) return;
  {
    std::lock_guard lock(mu_);
    pending_objects_[write.group] = write;
  }
  cv_.notify_one();
}

void PodGroupWriter::write(const events::StatusWrite& write) {
  if (write.settled) return;
  {
    std::lock_guard lock(mu_);
    std::string key = write.mark_key();
    auto queued = pending_statuses_.find(key);
    if (queued != pending_statuses_.end()) {
      queued->second.write = write;  // the newest, when the first one is due
    } else {
      Clock::time_point due = Clock::now() + pacing_.settle;
      if (auto last = last_status_write_.find(key); last != last_status_write_.end()) {
        const auto interval = write.kind == "Queue" ? pacing_.queue_interval : pacing_.pod_group_interval;
        due = std::max(due, last->second + interval);
      }
      status_due_.emplace(due, key);
      pending_statuses_.emplace(std::move(key), PendingStatus{write, due});
    }
  }
  cv_.notify_one();
}

std::map<std::string, PodGroupWriter::PendingStatus>::iterator PodGroupWriter::earliest_status() {
  return status_due_.empty() ? pending_statuses_.end() : pending_statuses_.find(status_due_.begin()->second);
}

void PodGroupWriter::write_object(const events::PodGroupWrite& w) {
  const auto [ns, name] = split_key(w.group);
  model::Status r = model::Status::ok();
  if (!w.exists) {
    r = api_.create_pod_group(ns, w.object_json);
    if (r.is_ok() || r.code() != model::Code::kConflict) {
      if (!r.is_ok()) spdlog::warn("PodGroup {}: not created: {}", w.group, r.message());
      return;
    }
  }
  // It exists (the cycle saw it, or it appeared since): read, and update by KAI's rules.
  for (int attempt = 0; attempt < kUpdateTries; ++attempt) {
    auto live = api_.get_pod_group(ns, name);
    if (!live.is_ok() && live.status().code() == model::Code::kNotFound) {
      r = api_.create_pod_group(ns, w.object_json);
      if (r.is_ok() || r.code() != model::Code::kConflict) break;
      continue;
    }
    if (!live.is_ok()) {
      r = live.status();
      break;
    }
    auto body = pod_group_update(live.value(), w.object_json);
    if (!body.is_ok()) {
      r = body.status();
      break;
    }
    if (!body.value()) return;  // it already says so
    r = api_.update_pod_group(ns, name, *body.value());
    if (r.is_ok() || r.code() != model::Code::kConflict) break;
  }
  // The record stands: a later cycle that still sees the object differ asks again
  // (events::kGroupWriteRetryMs); the pods wait for nothing meanwhile (the group is named as written).
  if (!r.is_ok()) spdlog::warn("PodGroup {}: not updated: {}", w.group, r.message());
}

void PodGroupWriter::annotate_pods(const events::PodGroupWrite& w) {
  const std::string& name = split_key(w.group).second;
  for (const auto& p : w.pods) {
    const auto [ns, pod] = split_key(p.pod);
    const model::Status r = api_.annotate_pod(ns, pod, p.uid, name, p.sub_group);
    if (!r.is_ok() && r.code() != model::Code::kNotFound) {
      spdlog::warn("pod {}: pod-group-name {} not written: {}", p.pod, name, r.message());
    }
  }
}

void PodGroupWriter::work() {
  for (;;) {
    std::string group;
    std::map<std::string, std::optional<std::string>> annotations;
    std::optional<events::PodGroupWrite> object;
    std::optional<events::StatusWrite> status;
    {
      std::unique_lock lock(mu_);
      // A status is ready once due; until then the loop sleeps to its time (or the next queued work).
      auto status_ready = [&] {
        auto e = earliest_status();
        return e != pending_statuses_.end() && e->second.due <= Clock::now();
      };
      auto ready = [&] { return stopping_ || !pending_.empty() || !pending_objects_.empty() || status_ready(); };
      while (!ready()) {
        auto e = earliest_status();
        if (e == pending_statuses_.end()) {
          cv_.wait(lock);
        } else {
          cv_.wait_until(lock, e->second.due);
        }
      }
      // The objects first: a job state annotation may be about a PodGroup being created.
      if (!pending_objects_.empty()) {
        auto first = pending_objects_.begin();
        object = std::move(first->second);
        pending_objects_.erase(first);
      } else if (!pending_.empty()) {
        auto first = pending_.begin();
        group = first->first;
        annotations = std::move(first->second);
        pending_.erase(first);
      } else if (!stopping_ && status_ready()) {  // the statuses last: they only report
        auto first = earliest_status();
        status = std::move(first->second.write);
        const auto now = Clock::now();
        last_status_write_[first->first] = now;
        status_due_.erase(status_due_.begin());
        pending_statuses_.erase(first);
        // The intervals of objects written long ago are over: forget them (now and then, not per write).
        if (last_status_write_.size() > 2 * pruned_at_size_ + 64) {
          const auto longest = std::max(pacing_.queue_interval, pacing_.pod_group_interval);
          std::erase_if(last_status_write_, [&](const auto& kv) { return kv.second + longest < now; });
          pruned_at_size_ = last_status_write_.size();
        }
      } else {
        return;
      }
    }
    if (!may_act_()) continue;  // the new leader writes its own
    if (object) {
      if (!object->object_json.empty()) write_object(*object);
      annotate_pods(*object);
    } else if (status) {
      const size_t slash = status->object.find('/');
      const std::string ns = slash == std::string::npos ? "" : status->object.substr(0, slash);
      const std::string name = slash == std::string::npos ? status->object : status->object.substr(slash + 1);
      const model::Status r = api_.patch_status(status->kind, ns, name, status->uid, status->patch_json);
      // The record stands: a later cycle that still sees the status differ asks again.
      if (!r.is_ok() && r.code() != model::Code::kNotFound) {
        spdlog::warn("{} {}: status not written: {}", status->kind, status->object, r.message());
      }
    } else {
      const auto [ns, name] = split_key(group);
      const model::Status r = api_.patch_pod_group_annotations(ns, name, annotations);
      if (!r.is_ok() && r.code() != model::Code::kNotFound) {
        // The record stands: the next change of this group writes again, and the cycle keeps reading
        // the logged value, not the annotation.
        spdlog::warn("PodGroup {}: job state annotations not written: {}", group, r.message());
      }
    }
    std::lock_guard lock(mu_);
    ++written_;
  }
}

}  // namespace kai::daemon
