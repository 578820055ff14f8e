// GPU-group ids (actors/scheduler/core/gpu_group_ids.hpp): the ids the session makes for devices of
// running fraction pods that name no group reach the log through later decisions, so replay needs the
// same text from every build.
#include "actors/scheduler/core/gpu_group_ids.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using kai::core::format_gpu_group_id;
using kai::core::unnamed_gpu_group_id;

TEST(GpuGroupIds, AnUnnamedDeviceIdIsFixedByThePodsUidAndTheDevicesIndex) {
  // Pinned values: a change of hash or layout would make replay of recorded cycles differ.
  EXPECT_EQ(unnamed_gpu_group_id("uid-run-1", 0), "c663541f-2fbc-40bb-8735-544c8808ceba");
  EXPECT_EQ(unnamed_gpu_group_id("uid-run-1", 1), "a7688d16-24cd-469a-a630-1b5592f818db");
  EXPECT_EQ(unnamed_gpu_group_id("", 0), "a8c7f832-281a-49c5-b83d-40c4ccf67c1a");
}

TEST(GpuGroupIds, IdsAreVersionFourUuidsAndDistinctAcrossPodsAndDevices) {
  std::set<std::string> seen;
  for (int pod = 0; pod < 500; ++pod) {
    for (size_t device = 0; device < 4; ++device) {
      const std::string id = unnamed_gpu_group_id("pod-uid-" + std::to_string(pod), device);
      ASSERT_EQ(id.size(), 36U) << id;
      EXPECT_EQ(id[14], '4') << id;  // version
      EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;  // RFC 4122 variant
      EXPECT_TRUE(seen.insert(id).second) << "repeated: " << id;
    }
  }
  EXPECT_EQ(format_gpu_group_id(0, 0), "00000000-0000-4000-8000-000000000000");
}

}  // namespace
