// The entity actors' store (docs/determinism-and-replay.md "The projection"): the same objects as the pure projection for the same events,
// views that are immutable (a later event does not change a view already handed out) and reused
// while their kind is unchanged, and cuts that find pods by key.
#include "actors/daemon/entity_store.hpp"

#include <gtest/gtest.h>

#include "events/state_codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "tools/kai-gen/generator.hpp"

namespace kai::daemon {
namespace {

template <class T>
events::WatchEvent watch(events::WatchType type, const std::string& kind, const T& obj) {
  return events::WatchEvent{kind, type, model::encode(obj).dump(), obj.meta.resource_version};
}

std::vector<events::WatchEvent> stream() {
  const model::ClusterObjects c = gen::generate(gen::ClusterSpec::scaled(0.002));
  std::vector<events::WatchEvent> out;
  for (const auto& n : c.nodes) out.push_back(watch(events::WatchType::kAdded, "Node", n));
  for (const auto& q : c.queues) out.push_back(watch(events::WatchType::kAdded, "Queue", q));
  for (const auto& g : c.pod_groups) out.push_back(watch(events::WatchType::kAdded, "PodGroup", g));
  for (const auto& p : c.pods) out.push_back(watch(events::WatchType::kAdded, "Pod", p));
  for (size_t i = 0; i < c.pods.size(); i += 3) {
    model::Pod p = c.pods[i];
    p.node_name = "moved";
    p.meta.resource_version = "m" + std::to_string(i);
    out.push_back(watch(events::WatchType::kModified, "Pod", p));
  }
  for (size_t i = 1; i < c.pods.size(); i += 5)
    out.push_back(watch(events::WatchType::kDeleted, "Pod", c.pods[i]));
  out.push_back(events::WatchEvent{"Pod", events::WatchType::kBookmark, "", "999"});
  out.push_back(events::WatchEvent{"Pod", events::WatchType::kAdded, "{not json", "1000"});  // refused
  return out;
}

std::vector<std::unique_ptr<EntityStore>> sharded() {
  std::vector<std::unique_ptr<EntityStore>> stores;
  stores.push_back(std::make_unique<EntityStore>(std::set<std::string, std::less<>>{"Node"}));
  stores.push_back(std::make_unique<EntityStore>(std::set<std::string, std::less<>>{"Queue", "PriorityClass"}));
  stores.push_back(std::make_unique<EntityStore>(std::set<std::string, std::less<>>{"Pod", "PodGroup", "BindRequest"}));
  return stores;
}

ClusterCut cut_of(std::vector<std::unique_ptr<EntityStore>>& stores, uint64_t seq) {
  ClusterCut cut;
  cut.seq = seq;
  for (auto& s : stores) cut.views.push_back(s->view(seq));
  return cut;
}

TEST(EntityStore, ShardsHoldWhatTheProjectionHolds) {
  auto stores = sharded();
  events::ClusterState projected;
  for (const auto& w : stream()) {
    events::Event e;
    e.payload = w;
    const bool projection_ok = events::apply(projected, e).is_ok();
    int owners = 0;
    for (auto& s : stores) {
      if (!s->owns(w.kind)) continue;
      ++owners;
      EXPECT_EQ(s->apply(w).is_ok(), projection_ok) << w.kind << " " << w.object_json.substr(0, 60);
    }
    EXPECT_EQ(owners, 1) << w.kind;
  }
  // The assembled snapshot of the stores is the projection's, byte for byte.
  events::StateSections sections;
  std::map<std::string, std::string> rvs;
  ClusterCut cut = cut_of(stores, 42);
  for (auto& s : stores) s->encode(sections);
  for (const auto& v : cut.views) rvs.insert(v->resource_versions.begin(), v->resource_versions.end());
  EXPECT_EQ(rvs, projected.resource_versions);
  std::string from_stores, from_projection;
  events::encode_state(42, rvs, {}, sections, from_stores);
  projected.seq = 42;
  events::encode_state(projected, from_projection);
  EXPECT_EQ(from_stores, from_projection);

  // A cut addresses the same objects, in key order, and finds pods by key.
  const model::ObjectRefs refs = cut.refs();
  ASSERT_EQ(refs.pods.size(), projected.pods.size());
  ASSERT_EQ(refs.nodes.size(), projected.nodes.size());
  size_t i = 0;
  for (const auto& [key, pod] : projected.pods) {
    EXPECT_TRUE(*refs.pods[i++] == pod) << key;
    const model::Pod* found = cut.find_pod(key);
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(found->meta.name, pod.meta.name);
  }
  EXPECT_EQ(cut.find_pod("no/such-pod"), nullptr);
  EXPECT_EQ(cut.node_count(), projected.nodes.size());
}

TEST(EntityStore, ViewsAreImmutableAndReusedWhileTheirKindIsUnchanged) {
  auto stores = sharded();
  for (const auto& w : stream()) {
    for (auto& s : stores)
      if (s->owns(w.kind)) (void)s->apply(w);
  }
  EntityStore& workloads = *stores[2];
  auto first = workloads.view(1);
  auto second = workloads.view(2);
  EXPECT_EQ(first->pods, second->pods) << "no change: the same list is handed out again";
  EXPECT_EQ(second->seq, 2u);
  const size_t pods_before = first->pods->size();
  const model::Pod before = *first->pods->front();

  // A change makes a new list; the old view still shows the old objects.
  model::Pod changed = before;
  changed.node_name = "elsewhere";
  ASSERT_TRUE(workloads.apply(watch(events::WatchType::kModified, "Pod", changed)).is_ok());
  ASSERT_TRUE(workloads.apply(watch(events::WatchType::kDeleted, "Pod", *first->pods->back())).is_ok());
  auto third = workloads.view(3);
  EXPECT_NE(third->pods, first->pods);
  EXPECT_EQ(third->pod_groups, first->pod_groups) << "pod groups did not change";
  EXPECT_EQ(first->pods->size(), pods_before);
  EXPECT_TRUE(*first->pods->front() == before);
  EXPECT_EQ(third->pods->front()->node_name, "elsewhere");
  EXPECT_EQ(third->pods->size(), pods_before - 1);
  // What a reflector already holds.
  const auto known = workloads.known("Pod");
  EXPECT_EQ(known.size(), third->pods->size());
  EXPECT_TRUE(workloads.known("Node").empty());
  EXPECT_FALSE(workloads.apply(watch(events::WatchType::kAdded, "Node", model::Node{})).is_ok());
}

TEST(EntityStore, RestoreTakesItsKindsFromASnapshotState) {
  events::ClusterState projected;
  for (const auto& w : stream()) {
    events::Event e;
    e.payload = w;
    (void)events::apply(projected, e);
  }
  events::ClusterState copy = projected;
  auto stores = sharded();
  for (auto& s : stores) s->restore(copy);
  EXPECT_TRUE(copy.pods.empty() && copy.nodes.empty() && copy.queues.empty()) << "moved out";
  ClusterCut cut = cut_of(stores, 1);
  EXPECT_EQ(cut.refs().pods.size(), projected.pods.size());
  EXPECT_EQ(stores[2]->known("Pod").size(), projected.pods.size());
}

}  // namespace
}  // namespace kai::daemon
