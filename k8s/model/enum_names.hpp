#pragma once
// Names of enumerators, from one table per enum: the enum's enumerators run 0, 1, 2, ... in the
// table's order, and each table is checked against its enum's last enumerator where it is defined.

#include <array>
#include <cstddef>

namespace kai::model {

/// The name of `e` in `names`; `unknown` for a value outside the table (one read from damaged bytes).
template <class E, size_t N>
constexpr const char* enum_name(E e, const std::array<const char*, N>& names, const char* unknown) {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : unknown;
}

/// Whether `names` has one entry for each enumerator up to and including `last`.
template <class E, size_t N>
constexpr bool names_every(E last, const std::array<const char*, N>& /*names*/) {
  return static_cast<size_t>(last) + 1 == N;
}

}  // namespace kai::model
