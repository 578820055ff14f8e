// Codec unit: nlohmann's SAX parser reads watch objects' metadata.
#include "tools/kai-log/dump_filter.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

namespace kai::kailog {
namespace {

using json = nlohmann::json;

/// Collects the keys of the objects of a watch event without building a DOM: a pod is several KB, a
/// relisted kind many MB, and dump only needs two strings per object.
class MetadataSax : public nlohmann::json_sax<json> {
 public:
  std::vector<std::string> keys;

  bool start_object(std::size_t) override {
    Frame f;
    if (stack_.empty()) {
      f.object_level = true;  // the object itself, or a List
    } else if (const Frame& parent = stack_.back(); parent.array) {
      // Elements of a top-level array, or of the top-level object's `items`, are objects.
      f.object_level = stack_.size() == 1 || (stack_.size() == 2 && parent.key == "items");
    } else {
      f.metadata = parent.object_level && key_ == "metadata";
    }
    f.key = std::exchange(key_, {});
    stack_.push_back(std::move(f));
    return true;
  }
  bool end_object() override {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.object_level && !f.name.empty()) keys.push_back(f.ns.empty() ? f.name : f.ns + "/" + f.name);
    return true;
  }
  bool start_array(std::size_t) override {
    Frame f;
    f.array = true;
    f.key = std::exchange(key_, {});
    stack_.push_back(std::move(f));
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool string(string_t& v) override {
    if (stack_.size() >= 2 && stack_.back().metadata) {
      Frame& object = stack_[stack_.size() - 2];
      if (key_ == "name") object.name = v;
      if (key_ == "namespace") object.ns = v;
    }
    return true;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;  // keep what was read; dump never fails on a bad object
  }

 private:
  struct Frame {
    bool array = false;
    bool object_level = false;  ///< An object whose metadata names it.
    bool metadata = false;      ///< The `metadata` of an object-level frame.
    std::string key;            ///< The key this container was reached by ("" in arrays).
    std::string ns, name;       ///< Object-level frames: from their metadata.
  };
  std::vector<Frame> stack_;
  std::string key_;  ///< The last key read: the key of the value that follows.
};

}  // namespace

std::vector<std::string> metadata_keys(std::string_view object_json) {
  MetadataSax sax;
  (void)json::sax_parse(object_json, &sax);
  return std::move(sax.keys);
}

std::vector<std::string> object_keys(const events::Event& e) {
  std::vector<std::string> keys;
  auto add = [&](const std::string& k) {
    if (!k.empty()) keys.push_back(k);
  };
  if (const auto* w = std::get_if<events::WatchEvent>(&e.payload)) {
    keys = metadata_keys(w->object_json);
  } else if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload)) {
    add(d->decision.pod);
    add(d->decision.by);
    add(d->decision.node);
    add(d->decision.queue);
  } else if (const auto* u = std::get_if<events::UnschedulableEvent>(&e.payload)) {
    add(u->pod_group);
    add(u->queue);
    for (const auto& p : u->pods) add(p.pod);
  } else if (const auto* b = std::get_if<events::BinderOutcome>(&e.payload)) {
    add(b->pod);
  } else if (const auto* j = std::get_if<events::JobStateChange>(&e.payload)) {
    add(j->group);
  } else if (const auto* w = std::get_if<events::PodGroupWrite>(&e.payload)) {
    add(w->group);
    for (const auto& p : w->pods) add(p.pod);
  } else if (const auto* w = std::get_if<events::StatusWrite>(&e.payload)) {
    add(w->object);
  } else if (const auto* a = std::get_if<events::AllocationChange>(&e.payload)) {
    for (const auto& q : a->queues) add(q.queue);
  }
  return keys;
}

bool names_object(const events::Event& e, std::string_view key) {
  const auto keys = object_keys(e);
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::optional<uint64_t> cycle_of(const events::Event& e) {
  if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload)) return d->cycle_id;
  if (const auto* u = std::get_if<events::UnschedulableEvent>(&e.payload)) return u->cycle_id;
  if (const auto* s = std::get_if<events::CycleStart>(&e.payload)) return s->cycle_id;
  if (const auto* c = std::get_if<events::CycleEnd>(&e.payload)) return c->cycle_id;
  if (const auto* j = std::get_if<events::JobStateChange>(&e.payload)) return j->cycle_id;
  if (const auto* a = std::get_if<events::AssumedSettled>(&e.payload)) return a->cycle_id;
  if (const auto* w = std::get_if<events::PodGroupWrite>(&e.payload)) return w->cycle_id;
  if (const auto* w = std::get_if<events::StatusWrite>(&e.payload)) return w->cycle_id;
  if (const auto* a = std::get_if<events::AllocationChange>(&e.payload)) return a->cycle_id;
  return std::nullopt;
}

}  // namespace kai::kailog
