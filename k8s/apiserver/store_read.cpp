// Store: get and list, with paginated lists (continue tokens read the snapshot of the first page).
#include <cstdint>

#include "k8s/apiserver/store_internal.hpp"

namespace kai::apiserver {
namespace {

std::string encode_continue(uint64_t rv, const std::string& start) {
  // base64 "RawURLEncoding", as the real server: safe in a query string without escaping.
  static const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const std::string in = Json{{"v", "meta.k8s.io/v1"}, {"rv", rv}, {"start", start}}.dump();
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kB64[(n >> k) & 63];
  }
  if (i < in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) n |= uint8_t(in[i + 1]) << 8;
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    if (i + 1 < in.size()) out += kB64[(n >> 6) & 63];
  }
  return out;
}

bool decode_continue(const std::string& token, uint64_t& rv, std::string& start) {
  std::string bin;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : token) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+' || c == '-')
      v = 62;
    else if (c == '/' || c == '_')
      v = 63;
    else if (c == '=')
      break;
    else
      return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bin += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  Json j = Json::parse(bin, nullptr, false);
  if (!j.is_object() || !j.contains("rv") || !j["rv"].is_number_unsigned() || !j.contains("start") ||
      !j["start"].is_string()) {
    return false;
  }
  rv = j["rv"].get<uint64_t>();
  start = j["start"].get<std::string>();
  return true;
}

}  // namespace

Json Store::get(const ResourceInfo& r, const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mu_);
  auto objs = objects_.find(r.storage_key());
  const std::string key = obj_key(r.namespaced ? ns : "", name);
  if (objs == objects_.end() || !objs->second.count(key)) throw not_found(r.group, r.resource, name);
  return output(r, *objs->second.at(key));
}

Json Store::list(const ResourceInfo& r, const std::string& ns, const ListOptions& opt) const {
  const LabelSelector labels = LabelSelector::parse(opt.label_selector);
  const FieldSelector fields = FieldSelector::parse(opt.field_selector, r.kind);
  std::lock_guard lock(mu_);
  uint64_t list_rv = rv_;
  std::string start;
  if (!opt.continue_token.empty()) {
    if (!decode_continue(opt.continue_token, list_rv, start)) {
      throw bad_request(
          "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
    }
    if (list_rv < history_start_) {
      throw ApiError(
          410, "Expired",
          "The provided continue parameter is too old to display a consistent list result. You can start "
          "a new list without the continue parameter, or use the continue token in this response to "
          "retrieve the remainder of the results. Continuing with the provided token results in an "
          "inconsistent list - objects that were created, modified, or deleted between the time the "
          "first chunk was returned and now may show up in the list.");
    }
  }
  // resourceVersion=0 is served from the watch cache, which ignores limit.
  const int64_t limit = opt.resource_version == "0" ? 0 : opt.limit;
  Json items = Json::array();
  std::string last_key;
  int64_t remaining = 0;
  bool more = false;
  auto objs = objects_.find(r.storage_key());
  // A continuation reads the snapshot at the first page's resourceVersion, as etcd does: the
  // current objects with every later change undone from the history (newest first).
  Objects snapshot;
  const Objects* view = objs == objects_.end() ? nullptr : &objs->second;
  if (list_rv < rv_ && view != nullptr) {
    snapshot = *view;
    for (auto e = history_.rbegin(); e != history_.rend() && e->rv > list_rv; ++e) {
      if (e->storage_key != r.storage_key()) continue;
      const std::string key = obj_key(r.namespaced ? str_at(*e->object, "metadata", "namespace") : "",
                                      str_at(*e->object, "metadata", "name"));
      if (e->type == "ADDED") {
        snapshot.erase(key);
      } else if (e->old) {
        snapshot[key] = e->old;
      }
    }
    view = &snapshot;
  }
  if (view != nullptr) {
    const std::string prefix = r.namespaced && !ns.empty() ? ns + "/" : "";
    auto it = start.empty() ? view->lower_bound(prefix) : view->upper_bound(start);
    for (; it != view->end(); ++it) {
      if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0) break;
      const Json& o = *it->second;
      if (!labels.matches(o) || !fields.matches(o)) continue;
      if (limit > 0 && static_cast<int64_t>(items.size()) >= limit) {
        more = true;
        ++remaining;
        continue;
      }
      items.push_back(output(r, o));
      last_key = it->first;
    }
  }
  Json meta = {{"resourceVersion", std::to_string(list_rv)}};
  if (more) {
    meta["continue"] = encode_continue(list_rv, last_key);
    if (labels.empty() && fields.empty()) meta["remainingItemCount"] = remaining;
  }
  return Json{{"kind", r.list_kind},
              {"apiVersion", r.api_version()},
              {"metadata", meta},
              {"items", std::move(items)}};
}

}  // namespace kai::apiserver
