#include "actors/daemon/pod_group_writer.hpp"

#include <spdlog/spdlog.h>

#include "actors/scheduler/core/grouping.hpp"
#include "k8s/model/time.hpp"

namespace kai::daemon {

PodGroupWriter::PodGroupWriter(PodGroupApi& api, std::function<bool()> may_act)
    : api_(api), may_act_(std::move(may_act)) {
  start([this] { work(); });
}

PodGroupWriter::~PodGroupWriter() { stop(); }

void PodGroupWriter::write(const events::JobStateChange& change) {
  const char* annotation = change.field == events::JobField::kLastStart ? model::kLastStartAnnotation
                                                                        : model::kStaleSinceAnnotation;
  std::optional<std::string> value;
  if (change.value) value = model::format_rfc3339(*change.value);
  {
    std::lock_guard lock(mu_);
    pending_[change.group][annotation] = std::move(value);
  }
  cv_.notify_one();
}

void PodGroupWriter::work() {
  for (;;) {
    std::string group;
    std::map<std::string, std::optional<std::string>> annotations;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;
      auto first = pending_.begin();
      group = first->first;
      annotations = std::move(first->second);
      pending_.erase(first);
    }
    if (!may_act_()) continue;  // the new leader writes its own
    const size_t slash = group.find('/');
    const model::Status r =
        api_.patch_pod_group_annotations(group.substr(0, slash), group.substr(slash + 1), annotations);
    if (!r.is_ok() && r.code() != model::Code::kNotFound) {
      // The record stands: the next change of this group writes again, and the cycle keeps reading
      // the logged value, not the annotation.
      spdlog::warn("PodGroup {}: job state annotations not written: {}", group, r.message());
    }
    std::lock_guard lock(mu_);
    ++written_;
  }
}

}  // namespace kai::daemon
