#include "k8s/model/log_redaction.hpp"

#include <simdjson.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/model/json_codec.hpp"

namespace kai::model {
namespace {

using nlohmann::json;

constexpr const char* kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

/// Drops `value` from every env entry of the containers in `list` (containers, initContainers, ...).
bool drop_env_values(json& list) {
  bool changed = false;
  if (!list.is_array()) return false;
  for (json& container : list) {
    if (!container.is_object()) continue;
    auto env = container.find("env");
    if (env == container.end() || !env->is_array()) continue;
    for (json& var : *env) {
      if (var.is_object()) changed = var.erase("value") > 0 || changed;
    }
  }
  return changed;
}

/// The DOM way: parse, erase, dump (keys come out sorted). Used when the text way meets anything it
/// does not expect.
std::string redact_through_dom(std::string object_json) {
  json object = json::parse(object_json, nullptr, false);
  if (object.is_discarded() || !object.is_object()) return object_json;
  bool changed = false;
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    changed = meta->erase("managedFields") > 0 || changed;
    if (auto ann = meta->find("annotations"); ann != meta->end() && ann->is_object()) {
      changed = ann->erase(kLastApplied) > 0 || changed;
    }
  }
  if (auto spec = object.find("spec"); spec != object.end() && spec->is_object()) {
    for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
      if (auto it = spec->find(list); it != spec->end()) changed = drop_env_values(*it) || changed;
    }
  }
  return changed ? object.dump() : object_json;
}

// ------------------------------------------------------------------ the text way (every watch event)

namespace od = simdjson::ondemand;

/// Byte ranges [first, second) of `text` to cut: whole members, key to the end of the value.
using Cuts = std::vector<std::pair<size_t, size_t>>;

/// Where `field`'s member starts in `text` (its key's opening quote).
size_t member_start(od::field& field, std::string_view text) {
  return static_cast<size_t>(field.key().raw() - text.data()) - 1;
}

/// The end of `value` in `text` when it is consumed whole; false on an error.
bool value_end(od::value value, std::string_view text, size_t& end) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return false;
  std::string_view raw;
  simdjson::error_code e = simdjson::SUCCESS;
  if (type == od::json_type::object) {
    od::object o;
    e = value.get_object().get(o);
    if (!e) e = o.raw_json().get(raw);
  } else if (type == od::json_type::array) {
    od::array a;
    e = value.get_array().get(a);
    if (!e) e = a.raw_json().get(raw);
  } else {
    raw = value.raw_json_token();
  }
  if (e) return false;
  end = static_cast<size_t>(raw.data() + raw.size() - text.data());
  return true;
}

/// Cuts `field`'s whole member (its key's opening quote to the end of its value); false on an error.
bool cut_member(od::field& field, std::string_view text, Cuts& cuts) {
  const size_t start = member_start(field, text);
  size_t end = 0;
  if (!value_end(field.value(), text, end)) return false;
  cuts.emplace_back(start, end);
  return true;
}

/// Cuts the "value" member of every env entry of each container in `list`.
bool cut_env_values(od::value list, std::string_view text, Cuts& cuts) {
  od::array containers;
  if (list.get_array().get(containers) != simdjson::SUCCESS) return true;  // not an array: nothing to cut
  for (auto container : containers) {
    od::object c;
    if (container.get_object().get(c) != simdjson::SUCCESS) continue;
    for (auto member : c) {
      od::field f;
      if (std::move(member).get(f) != simdjson::SUCCESS) return false;
      if (f.key() != "env") continue;
      od::array env;
      if (f.value().get_array().get(env) != simdjson::SUCCESS) continue;
      for (auto var : env) {
        od::object v;
        if (var.get_object().get(v) != simdjson::SUCCESS) continue;
        for (auto vm : v) {
          od::field vf;
          if (std::move(vm).get(vf) != simdjson::SUCCESS) return false;
          if (vf.key() == "value" && !cut_member(vf, text, cuts)) return false;
        }
      }
    }
  }
  return true;
}

/// Finds what redact_for_log drops, as members of `text`; false when the text is not an object or
/// anything failed to parse.
bool find_cuts(std::string_view text, size_t capacity, Cuts& cuts) {
  thread_local od::parser parser;
  od::document doc;
  if (parser.iterate(text.data(), text.size(), capacity).get(doc) != simdjson::SUCCESS) return false;
  od::object top;
  if (doc.get_object().get(top) != simdjson::SUCCESS) return false;
  for (auto member : top) {
    od::field f;
    if (std::move(member).get(f) != simdjson::SUCCESS) return false;
    if (f.key() == "metadata") {
      od::object meta;
      if (f.value().get_object().get(meta) != simdjson::SUCCESS) continue;
      for (auto mm : meta) {
        od::field mf;
        if (std::move(mm).get(mf) != simdjson::SUCCESS) return false;
        if (mf.key() == "managedFields") {
          if (!cut_member(mf, text, cuts)) return false;
        } else if (mf.key() == "annotations") {
          od::object ann;
          if (mf.value().get_object().get(ann) != simdjson::SUCCESS) continue;
          for (auto am : ann) {
            od::field af;
            if (std::move(am).get(af) != simdjson::SUCCESS) return false;
            if (af.key() == kLastApplied && !cut_member(af, text, cuts)) return false;
          }
        }
      }
    } else if (f.key() == "spec") {
      od::object spec;
      if (f.value().get_object().get(spec) != simdjson::SUCCESS) continue;
      for (auto sm : spec) {
        od::field sf;
        if (std::move(sm).get(sf) != simdjson::SUCCESS) return false;
        if (sf.key() == "containers" || sf.key() == "initContainers" || sf.key() == "ephemeralContainers") {
          if (!cut_env_values(sf.value(), text, cuts)) return false;
        }
      }
    }
  }
  return true;
}

/// `text` without the cut members and without the commas the cuts left dangling (",}" ",]" ",,"
/// "{," "[,"). The cuts are whole members, so a dangling comma can only stand where a cut was: each
/// junction is mended as the pieces are joined, and the rest of the text is copied in bulk.
std::string splice(std::string_view text, Cuts cuts) {
  std::sort(cuts.begin(), cuts.end());
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  auto join = [&](std::string_view piece, bool after_cut) {
    if (after_cut) {
      size_t tail = out.size();
      while (tail > 0 && is_space(out[tail - 1])) --tail;
      size_t head = 0;
      while (head < piece.size() && is_space(piece[head])) ++head;
      const char before = tail > 0 ? out[tail - 1] : '\0';
      const char next = head < piece.size() ? piece[head] : '\0';
      if (before == ',' && (next == '}' || next == ']' || next == ',')) {
        out.resize(tail - 1);  // the member after the comma was cut
      } else if (next == ',' && (before == '{' || before == '[')) {
        piece.remove_prefix(head + 1);  // the member before the comma was cut
        while (!piece.empty() && is_space(piece.front())) piece.remove_prefix(1);
      }
    }
    out.append(piece);
  };
  for (const auto& [first, second] : cuts) {
    if (first < at) return "";  // overlapping members cannot happen in valid JSON
    join(text.substr(at, first - at), at != 0);
    at = second;
  }
  join(text.substr(at), at != 0);
  return out;
}

}  // namespace

std::string redact_for_log(std::string object_json) {
  // Most objects hold none of it (nodes, queues, pod groups from controllers): skip the parse.
  const std::string_view text(object_json);
  if (text.find("\"managedFields\"") == std::string_view::npos &&
      text.find("\"env\"") == std::string_view::npos && text.find(kLastApplied) == std::string_view::npos) {
    return object_json;
  }
  // The members are cut out of the text as received (about ten times cheaper than a parse and a dump
  // of the whole object, for every pod event); the DOM way when that meets anything unexpected.
  const size_t size = object_json.size();
  object_json.reserve(size + simdjson::SIMDJSON_PADDING);
  Cuts cuts;
  if (!find_cuts(std::string_view(object_json.data(), size), object_json.capacity(), cuts)) {
    return redact_through_dom(std::move(object_json));
  }
  if (cuts.empty()) return object_json;
  std::string out = splice(std::string_view(object_json.data(), size), std::move(cuts));
  return out.empty() ? redact_through_dom(std::move(object_json)) : out;
}

}  // namespace kai::model

namespace kai::model {

std::string owner_for_log(const std::string& object_json, const std::string& group_kind,
                          const std::string& api_version) {
  json j = json::parse(object_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return object_json;
  if (!j.contains("kind")) j["kind"] = group_kind;
  if (!j.contains("apiVersion") && !api_version.empty()) {
    j["apiVersion"] = api_version;
    j["kind"] = group_kind.substr(0, group_kind.find('.'));
  }
  auto owner = decode_workload_owner(j);
  if (!owner) return object_json;
  return encode(*owner).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace kai::model
