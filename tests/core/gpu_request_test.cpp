#include "actors/scheduler/core/gpu_request.hpp"

#include <gtest/gtest.h>

namespace {

using namespace kai::core;

kai::model::Pod pod_with(kai::model::StringMap annotations) {
  kai::model::Pod p;
  p.meta.name = "p";
  p.meta.annotations = std::move(annotations);
  return p;
}

TEST(GpuRequest, FractionIsParsedInMilli) {
  auto r = parse_gpu_request(pod_with({{"gpu-fraction", "0.5"}}), 0, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, GpuRequestKind::kFraction);
  EXPECT_EQ(r->fraction_milli, 500);
}

TEST(GpuRequest, BadFractionsAreRejectedWithTheAnnotationNamed) {
  for (const char* v : {"abc", "0", "1.5", "-0.2", "", "0.5.1", "1e-1"}) {
    auto r = parse_gpu_request(pod_with({{"gpu-fraction", v}}), 0, false);
    ASSERT_FALSE(r) << v;
    EXPECT_NE(r.message().find("gpu-fraction"), std::string::npos) << r.message();
  }
}

TEST(GpuRequest, MemoryMustBeAPositiveInteger) {
  EXPECT_TRUE(parse_gpu_request(pod_with({{"gpu-memory", "20000"}}), 0, false));
  EXPECT_FALSE(parse_gpu_request(pod_with({{"gpu-memory", "x"}}), 0, false));
  EXPECT_FALSE(parse_gpu_request(pod_with({{"gpu-memory", "0"}}), 0, false));
}

TEST(GpuRequest, FractionAndMemoryTogetherAreRejected) {
  auto r = parse_gpu_request(pod_with({{"gpu-fraction", "0.5"}, {"gpu-memory", "100"}}), 0, false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("together"), std::string::npos);
}

TEST(GpuRequest, NumDevicesNeedsASharedRequest) {
  auto ok =
      parse_gpu_request(pod_with({{"gpu-fraction", "0.5"}, {"gpu-fraction-num-devices", "2"}}), 0, false);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->num_devices, 2);
  EXPECT_FALSE(parse_gpu_request(pod_with({{"gpu-fraction-num-devices", "2"}}), 2000, false));
}

TEST(GpuRequest, WholeGpus) {
  auto r = parse_gpu_request(pod_with({}), 2000, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, GpuRequestKind::kWhole);
  EXPECT_FALSE(parse_gpu_request(pod_with({{"gpu-fraction", "0.5"}}), 1000, false));
}

TEST(GpuRequest, MemoryToFractionRoundsUpToHundredths) {
  EXPECT_EQ(memory_to_fraction_milli(20000, 40000), 500);
  EXPECT_EQ(memory_to_fraction_milli(10000, 81900), 130);  // 0.1221 -> 0.13
  EXPECT_EQ(memory_to_fraction_milli(40000, 40000), 1000);
}

}  // namespace
