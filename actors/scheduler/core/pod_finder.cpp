#include "actors/scheduler/core/pod_finder.hpp"

namespace kai::core {
namespace {

int sign(int c) {
  return (c > 0) - (c < 0);
}

}  // namespace

int PodFinder::compare_key(const model::ObjectMeta& meta, std::string_view key) {
  const std::string_view ns = meta.namespace_;
  const size_t n = std::min(ns.size(), key.size());
  if (const int c = ns.substr(0, n).compare(key.substr(0, n)); c != 0) return sign(c);
  if (key.size() == n) return 1;  // the key is a prefix of "namespace/name"
  if (ns.size() != n) return -1;  // unreachable: n is the shorter size
  // "namespace/name" goes on with '/', the key with key[n].
  const auto slash = static_cast<unsigned char>('/');
  const auto next = static_cast<unsigned char>(key[n]);
  if (slash != next) return slash < next ? -1 : 1;
  return sign(std::string_view(meta.name).compare(key.substr(n + 1)));
}

size_t PodFinder::find(std::string_view key) {
  size_t lo = 0;
  size_t hi = pods_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (compare_key(pods_[mid]->meta, key) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < pods_.size() && compare_key(pods_[lo]->meta, key) == 0) return lo;
  if (!index_) {
    index_.emplace();
    index_->reserve(pods_.size());
    for (size_t i = 0; i < pods_.size(); ++i)
      index_->emplace(NameKey{pods_[i]->meta.namespace_, pods_[i]->meta.name}, i);
  }
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) return npos;
  auto it = index_->find(NameKey{key.substr(0, slash), key.substr(slash + 1)});
  return it == index_->end() ? npos : it->second;
}

}  // namespace kai::core
