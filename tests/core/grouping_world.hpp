#pragma once
// A small cluster of pods, owners, PodGroups and priority classes changed by random steps, as the
// daemon's stores change it (objects replaced, never changed in place), for the grouping tests
// (grouping_memo_test.cpp, regrouping_test.cpp).

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actors/scheduler/core/grouping.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core::grouping_world {

/// The cluster as the daemon's stores hold it: objects by shared pointer, replaced (never changed in
/// place) when they change.
struct World {
  std::map<std::string, std::shared_ptr<const model::Pod>> pods;
  std::map<std::string, std::shared_ptr<const model::WorkloadOwner>> owners;
  std::map<std::string, std::shared_ptr<const model::PodGroup>> pod_groups;
  std::map<std::string, std::shared_ptr<const model::PriorityClass>> priority_classes;
};

/// One step's objects: what the daemon's cut is (it keeps them alive while the memo points at them).
struct Cut {
  std::vector<std::shared_ptr<const void>> held;
  model::ObjectRefs refs;
};

inline std::shared_ptr<const Cut> cut_of(const World& w) {
  auto c = std::make_shared<Cut>();
  for (const auto& [k, p] : w.pods) c->refs.pods.push_back(p.get()), c->held.push_back(p);
  for (const auto& [k, o] : w.owners) c->refs.owners.push_back(o.get()), c->held.push_back(o);
  for (const auto& [k, g] : w.pod_groups) c->refs.pod_groups.push_back(g.get()), c->held.push_back(g);
  for (const auto& [k, pc] : w.priority_classes)
    c->refs.priority_classes.push_back(pc.get()), c->held.push_back(pc);
  c->refs.served_owner_kinds = {"Job.batch", "ReplicaSet.apps", "Deployment.apps"};
  return c;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  void seed(World& w) {
    for (int i = 0; i < 4; ++i) put_owner(w, "Job", "batch", "job-" + std::to_string(i), "");
    put_owner(w, "Deployment", "apps", "web", "");
    put_owner(w, "ReplicaSet", "apps", "web-1", "web");
    for (int i = 0; i < 40; ++i) put_pod(w, "p-" + std::to_string(i));
    put_class(w, "high", 200);
  }

  void step(World& w) {
    switch (pick(9)) {
      case 0:
      case 1:
      case 2:
        put_pod(w, "p-" + std::to_string(pick(50)));  // a new pod, or a changed one
        break;
      case 3:
        if (!w.pods.empty()) w.pods.erase(std::next(w.pods.begin(), static_cast<long>(pick(w.pods.size()))));
        break;
      case 4:  // an owner appears, changes or goes
        if (pick(3) == 0) {
          w.owners.erase("Job.batch/ns/job-" + std::to_string(pick(5)));
        } else {
          put_owner(w, "Job", "batch", "job-" + std::to_string(pick(5)), "");
        }
        break;
      case 5:  // a PodGroup appears or changes (its status is written), or goes
        if (pick(3) == 0 && !w.pod_groups.empty()) {
          w.pod_groups.erase(std::next(w.pod_groups.begin(), static_cast<long>(pick(w.pod_groups.size()))));
        } else {
          put_pod_group(w);
        }
        break;
      case 6:
        if (pick(2) == 0) {
          put_class(w, "high", 200 + static_cast<int32_t>(pick(3)));
        } else {
          w.priority_classes.erase("high");
        }
        break;
      default:
        break;  // nothing changed: everything is reused
    }
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  void put_owner(World& w, const std::string& kind, const std::string& group, const std::string& name,
                 const std::string& parent) {
    auto o = std::make_shared<model::WorkloadOwner>();
    o->meta.name = name;
    o->meta.namespace_ = "ns";
    o->meta.uid = "uid-" + name;
    o->meta.resource_version = std::to_string(++version_);
    o->kind = kind;
    o->group = group;
    o->version = "v1";
    if (pick(2) == 0) o->meta.labels[model::kQueueLabel] = "q-" + std::to_string(pick(3));
    if (pick(3) == 0) o->meta.labels["priorityClassName"] = "high";
    if (!parent.empty())
      o->meta.owner_references.push_back({"apps/v1", "Deployment", parent, "uid-" + parent, true});
    w.owners[kind + "." + group + "/ns/" + name] = std::move(o);
  }

  void put_pod(World& w, const std::string& name) {
    auto p = std::make_shared<model::Pod>();
    p->meta.name = name;
    p->meta.namespace_ = "ns";
    p->meta.uid = "uid-" + name;
    p->meta.resource_version = std::to_string(++version_);
    p->meta.creation_timestamp = 1'800'000'000 + static_cast<int64_t>(pick(100));
    p->scheduler_name = pick(10) == 0 ? "other" : "kai-scheduler";
    p->meta.labels[model::kQueueLabel] = "q-" + std::to_string(pick(3));
    if (pick(4) == 0) p->meta.labels["user"] = "u" + std::to_string(pick(2));
    switch (pick(6)) {
      case 0:
      case 1:
        p->meta.owner_references.push_back({"batch/v1", "Job", "job-" + std::to_string(pick(5)), "", true});
        p->meta.owner_references.back().uid = "uid-" + p->meta.owner_references.back().name;
        break;
      case 2:
        p->meta.owner_references.push_back({"apps/v1", "ReplicaSet", "web-1", "uid-web-1", true});
        break;
      case 3:
        p->meta.annotations[model::kPodGroupNameAnnotation] = "named-" + std::to_string(pick(3));
        break;
      default:
        break;  // bare
    }
    if (pick(8) == 0) p->meta.annotations[model::kSkipPodGrouperAnnotation] = "true";
    p->phase = pick(2) == 0 ? "Running" : "Pending";  // a confirmation changes the object, not its group
    w.pods[name] = std::move(p);
  }

  void put_pod_group(World& w) {
    auto g = std::make_shared<model::PodGroup>();
    g->meta.namespace_ = "ns";
    // A Job pod's legacy per-pod group, a group pods name, or the grouper's own.
    const std::string pod = "p-" + std::to_string(pick(50));
    switch (pick(3)) {
      case 0:
        g->meta.name = "pg-" + pod + "-uid-job-" + std::to_string(pick(5));
        break;
      case 1:
        g->meta.name = "named-" + std::to_string(pick(3));
        break;
      default:
        g->meta.name = "pg-job-" + std::to_string(pick(5)) + "-uid-job-" + std::to_string(pick(5));
        break;
    }
    g->meta.uid = "uid-" + g->meta.name;
    g->meta.resource_version = std::to_string(++version_);
    g->queue = "q-0";
    g->min_member = 1;
    w.pod_groups["ns/" + g->meta.name] = std::move(g);
  }

  void put_class(World& w, const std::string& name, int32_t value) {
    auto pc = std::make_shared<model::PriorityClass>();
    pc->meta.name = name;
    pc->value = value;
    w.priority_classes[name] = std::move(pc);
  }

  std::mt19937_64 rng_;
  uint64_t version_ = 0;
};

/// Every field of the assignments, the grouper's spec included.
inline void expect_same(const std::vector<PodGroupAssignment>& a, const std::vector<PodGroupAssignment>& b,
                        const std::string& where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto& x = a[i];
    const auto& y = b[i];
    const std::string at = where + ", group " + x.namespace_ + "/" + x.name;
    EXPECT_EQ(x.namespace_, y.namespace_) << at;
    EXPECT_EQ(x.name, y.name) << at;
    EXPECT_EQ(x.pod_group, y.pod_group) << at;
    EXPECT_EQ(x.missing_pod_group, y.missing_pod_group) << at;
    EXPECT_EQ(x.pods, y.pods) << at;
    EXPECT_EQ(x.pod_sub_groups, y.pod_sub_groups) << at;
    EXPECT_EQ(x.uid, y.uid) << at;
    EXPECT_EQ(x.queue(), y.queue()) << at;
    EXPECT_EQ(x.queue_defaulted(), y.queue_defaulted()) << at;
    EXPECT_EQ(x.priority_class_name(), y.priority_class_name()) << at;
    EXPECT_EQ(x.preemptibility(), y.preemptibility()) << at;
    EXPECT_EQ(x.min_member, y.min_member) << at;
    EXPECT_EQ(x.creation_timestamp, y.creation_timestamp) << at;
    EXPECT_EQ(x.invalid, y.invalid) << at;
    ASSERT_EQ(x.spec == nullptr, y.spec == nullptr) << at;
    if (x.spec) {
      EXPECT_TRUE(*x.spec == *y.spec) << at << ": the grouper's specs differ";
    }
  }
}

}  // namespace kai::core::grouping_world
