#pragma once
// Two cuts' lists of objects of one kind (in the same order, mostly the same objects) told apart by
// address: which objects of the first the second has not (went) and which of the second the first
// had not (came). Paired in order, an object not where the other list goes on is looked for a few
// places ahead in it; what does not pair went or came. Pairing less than could be paired only
// counts an object as gone and come again, which the callers (job_state_memo.cpp,
// session_refresh.cpp) treat as taken out and put back.

#include <cstddef>
#include <vector>

namespace kai::core {

template <class T>
struct WentAndCame {
  std::vector<const T*> went;
  std::vector<const T*> came;
};

template <class T>
WentAndCame<T> went_and_came(const std::vector<const T*>& before, const std::vector<const T*>& after) {
  constexpr size_t kLookAhead = 8;
  auto found_ahead = [](const std::vector<const T*>& list, size_t from, const T* object) -> size_t {
    for (size_t d = 1; d <= kLookAhead && from + d < list.size(); ++d) {
      if (list[from + d] == object) return d;
    }
    return 0;
  };
  auto at = [](const std::vector<const T*>& list, size_t i) {
    return list.begin() + static_cast<std::ptrdiff_t>(i);
  };
  WentAndCame<T> out;
  size_t i = 0;
  size_t k = 0;
  while (i < before.size() && k < after.size()) {
    if (before[i] == after[k]) {
      ++i;
      ++k;
    } else if (const size_t d = found_ahead(after, k, before[i]); d > 0) {
      out.came.insert(out.came.end(), at(after, k), at(after, k + d));
      k += d;
    } else if (const size_t e = found_ahead(before, i, after[k]); e > 0) {
      out.went.insert(out.went.end(), at(before, i), at(before, i + e));
      i += e;
    } else {
      out.went.push_back(before[i++]);
      out.came.push_back(after[k++]);
    }
  }
  out.went.insert(out.went.end(), at(before, i), before.end());
  out.came.insert(out.came.end(), at(after, k), after.end());
  return out;
}

}  // namespace kai::core
