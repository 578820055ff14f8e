#include "events/projection.hpp"

#include <gtest/gtest.h>

namespace kai::events {
namespace {

Event watch(const std::string& kind, WatchType t, const std::string& json, const std::string& rv,
            uint64_t seq) {
  Event e;
  e.seq = seq;
  e.payload = WatchEvent{kind, t, json, rv};
  return e;
}

const char* kNode = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","resourceVersion":"1"},
  "status":{"allocatable":{"cpu":"8","nvidia.com/gpu":"8"}}})";
const char* kPod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"ns","uid":"u1"},
  "spec":{"schedulerName":"kai-scheduler","containers":[{"name":"c"}]}})";

TEST(Projection, AddModifyDelete) {
  ClusterState s;
  ASSERT_TRUE(apply(s, watch("Node", WatchType::kAdded, kNode, "1", 1)));
  ASSERT_TRUE(apply(s, watch("Pod", WatchType::kAdded, kPod, "2", 2)));
  EXPECT_EQ(s.nodes.size(), 1u);
  ASSERT_EQ(s.pods.count("ns/p1"), 1u);
  EXPECT_EQ(s.pods.at("ns/p1").meta.uid, "u1");
  std::string modified = kPod;
  modified.replace(modified.find("\"u1\""), 4, "\"u2\"");
  ASSERT_TRUE(apply(s, watch("Pod", WatchType::kModified, modified, "3", 3)));
  EXPECT_EQ(s.pods.at("ns/p1").meta.uid, "u2");
  ASSERT_TRUE(apply(s, watch("Pod", WatchType::kDeleted, kPod, "4", 4)));
  EXPECT_TRUE(s.pods.empty());
  EXPECT_EQ(s.resource_versions.at("Pod"), "4");
  EXPECT_EQ(s.seq, 4u);
  ASSERT_TRUE(apply(s, watch("Pod", WatchType::kBookmark, "", "9", 5)));
  EXPECT_EQ(s.resource_versions.at("Pod"), "9");
}

TEST(Projection, RelistReplacesTheKind) {
  ClusterState s;
  ASSERT_TRUE(apply(s, watch("Node", WatchType::kAdded, kNode, "1", 1)));
  std::string list = R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})";
  ASSERT_TRUE(apply(s, watch("Node", WatchType::kRelist, list, "7", 2)));
  EXPECT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes.count("n1"), 0u);
  EXPECT_EQ(s.to_objects().nodes.size(), 2u);
}

TEST(Projection, BadObjectIsAnErrorAndChangesNothing) {
  ClusterState s;
  ASSERT_TRUE(apply(s, watch("Node", WatchType::kAdded, kNode, "1", 1)));
  EXPECT_FALSE(apply(s, watch("Node", WatchType::kAdded, "{not json", "2", 2)));
  EXPECT_FALSE(apply(s, watch("Node", WatchType::kAdded, "[1,2]", "3", 3)));
  EXPECT_EQ(s.nodes.size(), 1u);
  Event d;
  d.seq = 4;
  d.payload = CycleStart{};
  EXPECT_TRUE(apply(s, d));
  EXPECT_EQ(s.nodes.size(), 1u);
}

}  // namespace
}  // namespace kai::events
