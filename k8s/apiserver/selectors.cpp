#include "k8s/apiserver/selectors.hpp"

#include <algorithm>
#include <set>

namespace kai::apiserver {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

/// Splits on commas that are not inside parentheses ("a in (x,y),b" -> 2 terms).
std::vector<std::string> split_terms(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

bool valid_key(const std::string& k) {
  if (k.empty() || k.size() > 316) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

bool valid_value(const std::string& v) {
  if (v.size() > 63) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string label_of(const Json& obj, const std::string& key, bool& present) {
  present = false;
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return "";
  auto l = m->find("labels");
  if (l == m->end() || !l->is_object()) return "";
  auto v = l->find(key);
  if (v == l->end() || !v->is_string()) return "";
  present = true;
  return v->get<std::string>();
}

const std::set<std::string>& supported_fields(const std::string& kind) {
  static const std::set<std::string> kCommon = {"metadata.name", "metadata.namespace"};
  static const std::set<std::string> kPod = {
      "metadata.name",           "metadata.namespace", "spec.nodeName",
      "spec.schedulerName",      "status.phase",       "spec.restartPolicy",
      "spec.serviceAccountName", "status.podIP",       "status.nominatedNodeName"};
  static const std::set<std::string> kNode = {"metadata.name", "spec.unschedulable"};
  static const std::set<std::string> kNamespace = {"metadata.name", "status.phase"};
  static const std::set<std::string> kEvent = {"metadata.name",
                                               "metadata.namespace",
                                               "involvedObject.kind",
                                               "involvedObject.namespace",
                                               "involvedObject.name",
                                               "involvedObject.uid",
                                               "involvedObject.apiVersion",
                                               "involvedObject.resourceVersion",
                                               "involvedObject.fieldPath",
                                               "reason",
                                               "reportingComponent",
                                               "source",
                                               "type"};
  if (kind == "Pod") return kPod;
  if (kind == "Node") return kNode;
  if (kind == "Namespace") return kNamespace;
  if (kind == "Event") return kEvent;
  return kCommon;
}

std::string field_of(const Json& obj, const std::string& path) {
  const Json* cur = &obj;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (!cur->is_object()) return "";
    auto it = cur->find(part);
    if (it == cur->end()) return "";
    cur = &*it;
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  return "";
}

}  // namespace

LabelSelector LabelSelector::parse(const std::string& text) {
  LabelSelector sel;
  if (trim(text).empty()) return sel;
  auto fail = [&](const std::string& why) {
    return bad_request("unable to parse requirement: " + why + " in label selector \"" + text + "\"");
  };
  for (const std::string& term : split_terms(text)) {
    if (term.empty()) throw fail("empty term");
    Req r;
    if (term[0] == '!') {
      r.key = trim(term.substr(1));
      r.op = "!";
    } else if (size_t p = term.find("!="); p != std::string::npos) {
      r.key = trim(term.substr(0, p));
      r.op = "!=";
      r.values = {trim(term.substr(p + 2))};
    } else if (size_t p2 = term.find("=="); p2 != std::string::npos) {
      r.key = trim(term.substr(0, p2));
      r.op = "=";
      r.values = {trim(term.substr(p2 + 2))};
    } else if (size_t p3 = term.find('='); p3 != std::string::npos) {
      r.key = trim(term.substr(0, p3));
      r.op = "=";
      r.values = {trim(term.substr(p3 + 1))};
    } else if (size_t open = term.find('('); open != std::string::npos) {
      size_t close = term.rfind(')');
      if (close == std::string::npos || close < open || trim(term.substr(close + 1)) != "") {
        throw fail("missing ')'");
      }
      std::string head = trim(term.substr(0, open));
      size_t sp = head.find_last_of(" \t");
      if (sp == std::string::npos) throw fail("expected 'in' or 'notin'");
      r.key = trim(head.substr(0, sp));
      r.op = trim(head.substr(sp + 1));
      if (r.op != "in" && r.op != "notin") throw fail("unknown operator '" + r.op + "'");
      std::string inner = term.substr(open + 1, close - open - 1);
      size_t pos = 0;
      while (true) {
        size_t c = inner.find(',', pos);
        r.values.push_back(trim(inner.substr(pos, c == std::string::npos ? std::string::npos : c - pos)));
        if (c == std::string::npos) break;
        pos = c + 1;
      }
    } else {
      r.key = term;
      r.op = "exists";
    }
    if (!valid_key(r.key)) throw fail("invalid label key \"" + r.key + "\"");
    for (const auto& v : r.values) {
      if (!valid_value(v)) throw fail("invalid label value \"" + v + "\"");
    }
    sel.reqs_.push_back(std::move(r));
  }
  return sel;
}

bool LabelSelector::matches(const Json& object) const {
  for (const Req& r : reqs_) {
    bool present = false;
    const std::string v = label_of(object, r.key, present);
    const bool in = std::find(r.values.begin(), r.values.end(), v) != r.values.end();
    if (r.op == "=" || r.op == "in") {
      if (!present || !in) return false;
    } else if (r.op == "!=" || r.op == "notin") {
      if (present && in) return false;
    } else if (r.op == "exists") {
      if (!present) return false;
    } else if (r.op == "!") {
      if (present) return false;
    }
  }
  return true;
}

FieldSelector FieldSelector::parse(const std::string& text, const std::string& kind) {
  FieldSelector sel;
  if (trim(text).empty()) return sel;
  for (const std::string& term : split_terms(text)) {
    Req r;
    size_t p;
    if ((p = term.find("!=")) != std::string::npos) {
      r.field = trim(term.substr(0, p));
      r.equal = false;
      r.value = trim(term.substr(p + 2));
    } else if ((p = term.find("==")) != std::string::npos) {
      r.field = trim(term.substr(0, p));
      r.value = trim(term.substr(p + 2));
    } else if ((p = term.find('=')) != std::string::npos) {
      r.field = trim(term.substr(0, p));
      r.value = trim(term.substr(p + 1));
    } else {
      throw bad_request("invalid selector: '" + text + "'; can't understand '" + term + "'");
    }
    if (!supported_fields(kind).count(r.field)) {
      throw bad_request("field label not supported: " + r.field);
    }
    sel.reqs_.push_back(std::move(r));
  }
  return sel;
}

bool FieldSelector::matches(const Json& object) const {
  for (const Req& r : reqs_) {
    if ((field_of(object, r.field) == r.value) != r.equal) return false;
  }
  return true;
}

}  // namespace kai::apiserver
