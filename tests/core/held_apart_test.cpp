// HeldApart (actors/scheduler/core/held_apart.hpp): unset reads as a default value without making
// one, copies are deep, equality compares values (unset equals set-to-default).
#include "actors/scheduler/core/held_apart.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kai::core {
namespace {

struct Fields {
  std::string text;
  std::vector<int> numbers;
  bool operator==(const Fields&) const = default;
};

TEST(HeldApart, UnsetReadsAsADefaultValueAndIsMadeOnlyWhenChanged) {
  HeldApart<Fields> a;
  EXPECT_TRUE(a->text.empty());
  EXPECT_TRUE(a->numbers.empty());
  HeldApart<Fields> b;
  EXPECT_EQ(&*a, &*b) << "unset values read one shared default";
  a.mut().text = "x";
  EXPECT_NE(&*a, &*b);
  EXPECT_EQ(a->text, "x");
  EXPECT_TRUE(b->text.empty()) << "the shared default was written through";
}

TEST(HeldApart, CopiesAreDeepAndMovesTakeTheValue) {
  HeldApart<Fields> a;
  a.mut().numbers = {1, 2};
  HeldApart<Fields> copy = a;
  copy.mut().numbers.push_back(3);
  EXPECT_EQ(a->numbers, (std::vector<int>{1, 2}));
  EXPECT_EQ(copy->numbers, (std::vector<int>{1, 2, 3}));
  HeldApart<Fields> assigned;
  assigned = copy;
  EXPECT_EQ(assigned->numbers, copy->numbers);
  HeldApart<Fields> moved = std::move(copy);
  EXPECT_EQ(moved->numbers, (std::vector<int>{1, 2, 3}));
  HeldApart<Fields> unset;
  assigned = unset;
  EXPECT_TRUE(assigned->numbers.empty()) << "assigning an unset value unsets";
}

TEST(HeldApart, EqualityComparesValuesSetOrNot) {
  HeldApart<Fields> unset;
  HeldApart<Fields> set_to_default;
  set_to_default.mut();
  EXPECT_TRUE(unset == set_to_default);
  set_to_default.mut().text = "y";
  EXPECT_FALSE(unset == set_to_default);
  HeldApart<Fields> same;
  same.mut().text = "y";
  EXPECT_TRUE(same == set_to_default);
}

}  // namespace
}  // namespace kai::core
