#include "k8s/apiserver/table.hpp"

#include <ctime>

#include "k8s/model/time.hpp"

namespace kai::apiserver {
namespace {

std::string age(const Json& obj) {
  const std::string ts = obj["metadata"].value("creationTimestamp", "");
  auto t = model::parse_rfc3339(ts);
  if (!t.is_ok()) return "<unknown>";
  return human_duration(static_cast<int64_t>(std::time(nullptr)) - t.value());
}

/// Evaluates a simple JSONPath such as ".spec.resources.gpu.quota"; null when absent.
Json at_path(const Json& obj, const std::string& path) {
  const Json* cur = &obj;
  size_t pos = path.empty() || path[0] != '.' ? 0 : 1;
  while (pos < path.size()) {
    size_t dot = path.find('.', pos);
    const std::string key = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &(*cur)[key];
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return *cur;
}

Json column(const std::string& name, const std::string& type, int priority = 0,
            const std::string& format = "") {
  return Json{
      {"name", name}, {"type", type}, {"format", format}, {"description", ""}, {"priority", priority}};
}

Json columns(const ResourceInfo& r) {
  Json cols = Json::array({column("Name", "string", 0, "name")});
  if (r.kind == "Pod" && r.group.empty()) {
    for (const char* c : {"Ready", "Status"}) cols.push_back(column(c, "string"));
    cols.push_back(column("Restarts", "string"));
    cols.push_back(column("Age", "string"));
    cols.push_back(column("IP", "string", 1));
    cols.push_back(column("Node", "string", 1));
    cols.push_back(column("Nominated Node", "string", 1));
  } else if (r.kind == "Node" && r.group.empty()) {
    for (const char* c : {"Status", "Roles", "Age", "Version"}) cols.push_back(column(c, "string"));
  } else if (r.printer_columns.is_array()) {
    for (const auto& c : r.printer_columns) {
      const std::string type = c.value("type", "string");
      cols.push_back(column(c.value("name", ""), type == "date" ? "string" : type, c.value("priority", 0)));
    }
  } else {
    cols.push_back(column("Age", "string"));
  }
  return cols;
}

Json cells(const ResourceInfo& r, const Json& obj) {
  Json row = Json::array({obj["metadata"].value("name", "")});
  const Json status = obj.value("status", Json::object());
  if (r.kind == "Pod" && r.group.empty()) {
    const Json statuses = status.value("containerStatuses", Json::array());
    int ready = 0, restarts = 0;
    for (const auto& c : statuses) {
      ready += c.value("ready", false) ? 1 : 0;
      restarts += c.value("restartCount", 0);
    }
    const size_t total = obj.contains("spec") ? obj["spec"].value("containers", Json::array()).size() : 0;
    row.push_back(std::to_string(ready) + "/" + std::to_string(total));
    const bool terminating = obj["metadata"].contains("deletionTimestamp");
    row.push_back(terminating ? "Terminating" : status.value("phase", "Unknown"));
    row.push_back(std::to_string(restarts));
    row.push_back(age(obj));
    row.push_back(status.value("podIP", "<none>"));
    row.push_back(obj.contains("spec") ? obj["spec"].value("nodeName", "<none>") : "<none>");
    row.push_back(status.value("nominatedNodeName", "<none>"));
  } else if (r.kind == "Node" && r.group.empty()) {
    std::string st = "Unknown";
    for (const auto& c : status.value("conditions", Json::array())) {
      if (c.value("type", "") == "Ready") st = c.value("status", "") == "True" ? "Ready" : "NotReady";
    }
    if (obj.contains("spec") && obj["spec"].value("unschedulable", false)) st += ",SchedulingDisabled";
    row.push_back(st);
    row.push_back("<none>");
    row.push_back(age(obj));
    row.push_back(status.contains("nodeInfo") ? status["nodeInfo"].value("kubeletVersion", "") : "");
  } else if (r.printer_columns.is_array()) {
    for (const auto& c : r.printer_columns) {
      Json v = at_path(obj, c.value("jsonPath", ""));
      if (c.value("type", "") == "date" && v.is_string()) {
        auto t = model::parse_rfc3339(v.get<std::string>());
        v = t.is_ok() ? Json(human_duration(static_cast<int64_t>(std::time(nullptr)) - t.value()))
                      : Json(nullptr);
      }
      row.push_back(v);
    }
  } else {
    row.push_back(age(obj));
  }
  return row;
}

}  // namespace

std::string human_duration(int64_t s) {
  if (s < 0) s = 0;
  const int64_t m = s / 60, h = s / 3600, d = s / 86400;
  if (s < 120) return std::to_string(s) + "s";
  if (m < 10) return std::to_string(m) + "m" + (s % 60 ? std::to_string(s % 60) + "s" : "");
  if (m < 180) return std::to_string(m) + "m";
  if (h < 8) return std::to_string(h) + "h" + (m % 60 ? std::to_string(m % 60) + "m" : "");
  if (h < 48) return std::to_string(h) + "h";
  if (h < 24 * 8) return std::to_string(d) + "d" + (h % 24 ? std::to_string(h % 24) + "h" : "");
  if (h < 24 * 365 * 2) return std::to_string(d) + "d";
  return std::to_string(d / 365) + "y";
}

Json to_table(const ResourceInfo& r, const Json& object_or_list) {
  Json rows = Json::array();
  const bool is_list = object_or_list.contains("items");
  Json meta = is_list ? object_or_list["metadata"]
                      : Json{{"resourceVersion", object_or_list["metadata"].value("resourceVersion", "")}};
  auto add = [&](const Json& obj) { rows.push_back(Json{{"cells", cells(r, obj)}, {"object", obj}}); };
  if (is_list) {
    for (const auto& o : object_or_list["items"]) add(o);
  } else {
    add(object_or_list);
  }
  return Json{{"kind", "Table"},
              {"apiVersion", "meta.k8s.io/v1"},
              {"metadata", meta},
              {"columnDefinitions", columns(r)},
              {"rows", rows}};
}

}  // namespace kai::apiserver
