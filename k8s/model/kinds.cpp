#include "k8s/model/kinds.hpp"

namespace kai::model {

ObjectRefs ObjectRefs::of(const ClusterObjects& objects) {
  ObjectRefs refs;
  for_each_kind([&](auto kind) {
    using K = decltype(kind);
    const auto& from = K::in(objects);
    auto& to = K::in(refs);
    to.reserve(from.size());
    for (const auto& x : from) to.push_back(&x);
  });
  refs.served_owner_kinds = objects.served_owner_kinds;
  return refs;
}

}  // namespace kai::model
