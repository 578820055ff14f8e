#include "actors/scheduler/core/export_job_state.hpp"

#include "actors/scheduler/core/grouping.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {

void annotate(model::PodGroup& pg, const events::JobState& st) {
  for (int f = 0; f < events::kJobFields; ++f) {
    const char* name = events::job_field_annotation(static_cast<events::JobField>(f));
    if (st.fields[f].value) {
      pg.meta.annotations[name] = model::format_rfc3339(*st.fields[f].value);
    } else {
      pg.meta.annotations.erase(name);
    }
  }
}

}  // namespace

void export_job_state(model::ClusterObjects& objects, const events::ScheduleRecords& records,
                      const std::string& scheduler_name, const std::string& default_queue) {
  if (records.job_states.empty()) return;
  std::vector<model::PodGroup> synthesised;
  for (const auto& g : group_pods(model::ObjectRefs::of(objects), scheduler_name, default_queue)) {
    const std::string& uid = g.pod_group != nullptr ? g.pod_group->meta.uid : g.uid;
    auto st = records.job_states.find(uid);
    if (st == records.job_states.end()) continue;
    if (g.pod_group != nullptr) {
      // group_pods points into objects.pod_groups, which nothing has resized yet.
      annotate(const_cast<model::PodGroup&>(*g.pod_group), st->second);
      continue;
    }
    if (g.missing_pod_group) continue;
    model::PodGroup pg;
    pg.meta.name = g.name;
    pg.meta.namespace_ = g.namespace_;
    pg.meta.uid = g.uid;
    pg.meta.creation_timestamp = g.creation_timestamp;
    pg.min_member = g.min_member;
    pg.queue = g.queue();
    pg.priority_class_name = g.priority_class_name();
    pg.preemptibility = g.preemptibility();
    annotate(pg, st->second);
    synthesised.push_back(std::move(pg));
  }
  for (auto& pg : synthesised) objects.pod_groups.push_back(std::move(pg));
}

}  // namespace kai::core
