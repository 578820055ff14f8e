// Store: get and list, with paginated lists (continue tokens read the snapshot of the first page).
#include <cstdint>

#include "k8s/apiserver/store_internal.hpp"

namespace kai::apiserver {
namespace {

// The real server's token is {"v", "rv", "start"}; ours adds "remaining" (the unfiltered items
// after `start` in the snapshot, -1 when filtered), which clients never read: tokens are opaque.
std::string encode_continue(uint64_t rv, const std::string& start, int64_t remaining) {
  // base64 "RawURLEncoding", as the real server: safe in a query string without escaping.
  static const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  Json token{{"v", "meta.k8s.io/v1"}, {"rv", rv}, {"start", start}};
  if (remaining >= 0) token["remaining"] = remaining;
  const std::string in = token.dump();
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

bool decode_continue(const std::string& token, uint64_t& rv, std::string& start, int64_t& remaining) {
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
  remaining = j.contains("remaining") && j["remaining"].is_number_integer() ? j["remaining"].get<int64_t>() : -1;
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

Store::ListPage Store::list_page(const ResourceInfo& r, const std::string& ns, const ListOptions& opt) const {
  const LabelSelector labels = LabelSelector::parse(opt.label_selector);
  const FieldSelector fields = FieldSelector::parse(opt.field_selector, r.kind);
  std::lock_guard lock(mu_);
  uint64_t list_rv = rv_;
  std::string start;
  int64_t carried_remaining = -1;
  if (!opt.continue_token.empty()) {
    if (!decode_continue(opt.continue_token, list_rv, start, carried_remaining)) {
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
  const bool unfiltered = labels.empty() && fields.empty();
  ListPage page;
  std::string last_key;
  auto objs = objects_.find(r.storage_key());
  static const Objects kNone;
  const Objects& current = objs == objects_.end() ? kNone : objs->second;
  // A continuation reads the snapshot at the first page's resourceVersion, as etcd does: the
  // current objects, with the state at list_rv of each key changed since (newest change undone
  // last, so the oldest wins; null: the key did not exist then). Only the changed keys are held,
  // so that a page costs its own items, not the whole resource.
  Objects then;
  for (auto e = history_.rbegin(); e != history_.rend() && e->rv > list_rv; ++e) {
    if (e->storage_key != r.storage_key()) continue;
    const std::string key = obj_key(r.namespaced ? str_at(*e->object, "metadata", "namespace") : "",
                                    str_at(*e->object, "metadata", "name"));
    then[key] = e->type == "ADDED" ? nullptr : e->old;
  }
  const std::string prefix = r.namespaced && !ns.empty() ? ns + "/" : "";
  auto from = [&](const Objects& m) { return start.empty() ? m.lower_bound(prefix) : m.upper_bound(start); };
  auto now_it = from(current);
  auto then_it = from(then);
  // The next object of the snapshot in key order, or null at the end of the prefix.
  auto next = [&]() -> const std::pair<const std::string, std::shared_ptr<const Json>>* {
    while (now_it != current.end() || then_it != then.end()) {
      const bool take_then =
          then_it != then.end() && (now_it == current.end() || then_it->first <= now_it->first);
      const auto& entry = take_then ? *then_it : *now_it;
      if (take_then) {
        if (now_it != current.end() && now_it->first == then_it->first) ++now_it;
        ++then_it;
      } else {
        ++now_it;
      }
      if (!prefix.empty() && entry.first.compare(0, prefix.size(), prefix) != 0) return nullptr;
      if (entry.second) return &entry;
    }
    return nullptr;
  };
  bool more = false;
  while (const auto* entry = next()) {
    const Json& o = *entry->second;
    if (!labels.matches(o) || !fields.matches(o)) continue;
    if (limit > 0 && static_cast<int64_t>(page.items.size()) >= limit) {
      more = true;
      break;
    }
    page.items.push_back(entry->second);
    last_key = entry->first;
  }
  // remainingItemCount (unfiltered lists only, as the real server): the first page counts what
  // follows it once; its token carries the count on, and each page takes its items off, which is
  // exact because every page reads the same snapshot.
  int64_t remaining = 0;
  if (more && unfiltered) {
    if (carried_remaining >= 0) {
      remaining = carried_remaining - static_cast<int64_t>(page.items.size());
    } else {
      for (remaining = 1; next() != nullptr;) ++remaining;
    }
  }
  page.resource_version = list_rv;
  if (more) {
    page.continue_token = encode_continue(list_rv, last_key, unfiltered ? remaining : -1);
    if (unfiltered) page.remaining_items = remaining;
  }
  return page;
}

Json Store::ListPage::metadata() const {
  Json meta = {{"resourceVersion", std::to_string(resource_version)}};
  if (!continue_token.empty()) meta["continue"] = continue_token;
  if (remaining_items >= 0) meta["remainingItemCount"] = remaining_items;
  return meta;
}

Json Store::list(const ResourceInfo& r, const std::string& ns, const ListOptions& opt) const {
  ListPage page = list_page(r, ns, opt);
  Json items = Json::array();
  for (const auto& o : page.items) items.push_back(output(r, *o));
  return Json{{"kind", r.list_kind},
              {"apiVersion", r.api_version()},
              {"metadata", page.metadata()},
              {"items", std::move(items)}};
}

std::string Store::list_body(const ResourceInfo& r, const std::string& ns, const ListOptions& opt) const {
  const ListPage page = list_page(r, ns, opt);
  // The members in the order `list`'s object dumps them (sorted keys), so both answers are the same bytes.
  std::string out = "{\"apiVersion\":" + Json(r.api_version()).dump() + ",\"items\":[";
  for (size_t i = 0; i < page.items.size(); ++i) {
    if (i != 0) out += ',';
    const Json& o = *page.items[i];
    out += served_as_stored(r, o) ? o.dump() : output(r, o).dump();
  }
  out += "],\"kind\":" + Json(r.list_kind).dump() + ",\"metadata\":" + page.metadata().dump() + "}";
  return out;
}

}  // namespace kai::apiserver
