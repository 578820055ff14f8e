// PodFinder (actors/scheduler/core/pod_finder.hpp): the key order it compares without building keys
// is the order of the keys as strings, and it finds every pod, and no pod that is not there, whether
// the pods are in key order or not.
#include "actors/scheduler/core/pod_finder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "k8s/model/kinds.hpp"

namespace kai::core {
namespace {

std::string random_name(std::mt19937_64& rng) {
  // Characters on both sides of '/', so that a namespace that is a prefix of another is ordered
  // as the whole key orders it ("a/x" against "a-b/x" and "a0/x").
  static const std::string kChars = "a-.0z";
  std::uniform_int_distribution<size_t> len(1, 3), pick(0, kChars.size() - 1);
  std::string s;
  for (size_t n = len(rng); n > 0; --n) s += kChars[pick(rng)];
  return s;
}

TEST(PodFinder, ComparesAsTheKeysStringsCompare) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    model::ObjectMeta meta;
    meta.namespace_ = random_name(rng);
    meta.name = random_name(rng);
    const std::string key = random_name(rng) + (i % 7 == 0 ? "" : "/" + random_name(rng));
    const int expected = (model::object_key(meta) > key) - (model::object_key(meta) < key);
    ASSERT_EQ(PodFinder::compare_key(meta, key), expected) << model::object_key(meta) << " against " << key;
  }
}

TEST(PodFinder, FindsEachPodInKeyOrderOrNot) {
  std::mt19937_64 rng(5);
  for (const bool sorted : {true, false}) {
    std::deque<model::Pod> pods;
    std::vector<const model::Pod*> refs;
    for (int i = 0; i < 300; ++i) {
      model::Pod p;
      p.meta.namespace_ = random_name(rng);
      p.meta.name = random_name(rng) + std::to_string(i);
      pods.push_back(p);
      refs.push_back(&pods.back());
    }
    if (sorted) {
      std::sort(refs.begin(), refs.end(), [](const model::Pod* a, const model::Pod* b) {
        return model::object_key(a->meta) < model::object_key(b->meta);
      });
    } else {
      std::shuffle(refs.begin(), refs.end(), rng);
    }
    PodFinder finder(refs);
    for (size_t i = 0; i < refs.size(); ++i) {
      ASSERT_EQ(finder.find(model::object_key(refs[i]->meta)), i) << (sorted ? "sorted" : "shuffled");
    }
    EXPECT_EQ(finder.find("nowhere/none"), PodFinder::npos);
    EXPECT_EQ(finder.find("no-slash"), PodFinder::npos);
  }
}

}  // namespace
}  // namespace kai::core
