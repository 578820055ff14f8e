// Codec unit: the JSON answer with nlohmann.
#include "tools/kai-sim/what_if_report.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "k8s/model/time.hpp"

namespace kai::sim {
namespace {

using nlohmann::ordered_json;

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += separator;
    out += s;
  }
  return out;
}

/// A multi-line message (KAI's reclaim reasons) indented under its line.
std::string indented(std::string text) {
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) {
    text.insert(at + 1, "    ");
  }
  return text;
}

std::string placement_line(const Placement& p) {
  std::string line = "  " + p.pod + " -> " + p.node + " (" +
                     (p.kind == "pipeline" ? std::string("pipelined: starts once the pods it waits for have left")
                                           : p.kind);
  if (!p.gpu_groups.empty()) line += ", GPU group " + join(p.gpu_groups, ",");
  if (p.gpu_fraction > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ", %g of a GPU", p.gpu_fraction);
    line += buf;
  }
  return line + ")\n";
}

/// Where it runs and what it evicts at a point it fits.
std::string where(const Point& p) {
  std::string out;
  for (const auto& placement : p.placements) out += placement_line(placement);
  if (!p.victims.empty()) {
    out += "It evicts " + std::to_string(p.victims.size()) + " pod(s):\n";
    for (const auto& v : p.victims) {
      out += "  " + v.pod + " (queue " + v.queue + "), " + v.action + " for " + v.by + ": " + indented(v.reason) + "\n";
    }
  }
  return out;
}

std::string why_not(const Point& p) {
  std::string out;
  for (const auto& w : p.waiting) {
    std::string reasons = join(w.reasons, "; ");
    std::replace(reasons.begin(), reasons.end(), '\n', ' ');
    out += "  " + w.group + (w.queue.empty() ? "" : " (queue " + w.queue + ")") + ": " +
           (reasons.empty() ? "no reason given" : reasons) + "\n";
  }
  return out;
}

ordered_json point_json(const Point& p) {
  ordered_json placements = ordered_json::array();
  for (const auto& x : p.placements) {
    ordered_json j{{"pod", x.pod}, {"node", x.node}, {"kind", x.kind}, {"gpuGroups", x.gpu_groups}};
    if (x.gpu_fraction > 0) j["gpuFraction"] = x.gpu_fraction;
    placements.push_back(std::move(j));
  }
  ordered_json victims = ordered_json::array();
  for (const auto& v : p.victims) {
    victims.push_back(ordered_json{
        {"pod", v.pod}, {"queue", v.queue}, {"action", v.action}, {"by", v.by}, {"reason", v.reason}});
  }
  ordered_json waiting = ordered_json::array();
  for (const auto& w : p.waiting) {
    waiting.push_back(ordered_json{
        {"group", w.group}, {"queue", w.queue}, {"reasons", w.reasons}, {"missingGpus", w.missing_gpus}});
  }
  return ordered_json{{"at", model::format_rfc3339(p.at)},
                      {"fits", p.fits},
                      {"placements", std::move(placements)},
                      {"victims", std::move(victims)},
                      {"waiting", std::move(waiting)}};
}

std::vector<std::string> without_end(const WhatIfAnswer& a) {
  std::vector<std::string> out;
  for (const auto& e : a.ends) {
    if (!e.at) out.push_back(e.pod);
  }
  return out;
}

}  // namespace

std::string format_span(int64_t seconds) {
  if (seconds <= 0) return "0s";
  const int64_t h = seconds / 3600, m = seconds % 3600 / 60, s = seconds % 60;
  std::string out;
  if (h > 0) out += std::to_string(h) + "h";
  if (m > 0 || (h > 0 && s > 0)) out += std::to_string(m) + "m";
  if (s > 0) out += std::to_string(s) + "s";
  return out;
}

std::string render_what_if_text(const WhatIfAnswer& a) {
  std::string out = "If submitted at " + model::format_rfc3339(a.now) + ":\n";
  if (a.first.fits) return out + "It fits now:\n" + where(a.first);
  out += "It does not fit now:\n" + why_not(a.first);
  if (a.earliest) {
    out += "Earliest at " + model::format_rfc3339(a.earliest->at) + " (in " + format_span(a.earliest->at - a.now) +
           "), after " + join(a.finished, ", ") + " finish:\n" + where(*a.earliest);
  } else {
    const Point& last = a.last ? *a.last : a.first;
    out += a.last ? "Not even after every known completion (" + join(a.finished, ", ") + ")"
                  : std::string("No running pod has an expected completion");
    for (const auto& w : last.waiting) {
      out += "; " + w.group + " runs when " + std::to_string(w.missing_gpus) +
             (w.missing_gpus == 1 ? " GPU frees" : " GPUs free") + " up in queue " + (w.queue.empty() ? "-" : w.queue);
    }
    out += ".\n";
    if (a.last) out += "At " + model::format_rfc3339(last.at) + ":\n" + why_not(last);
  }
  if (auto none = without_end(a); !none.empty()) out += "No expected end: " + join(none, ", ") + "\n";
  return out;
}

std::string render_what_if_json(const WhatIfAnswer& a) {
  ordered_json ends = ordered_json::array();
  for (const auto& e : a.ends) {
    ends.push_back(ordered_json{{"pod", e.pod},
                                {"at", e.at ? ordered_json(model::format_rfc3339(*e.at)) : ordered_json()},
                                {"basis", to_string(e.basis)}});
  }
  ordered_json out{{"now", model::format_rfc3339(a.now)},
                   {"fitsNow", a.first.fits},
                   {"current", point_json(a.first)},
                   {"earliest", a.earliest ? point_json(*a.earliest) : ordered_json()},
                   {"finishedBefore", a.first.fits ? std::vector<std::string>{} : a.finished},
                   {"lastPoint", a.last && !a.earliest ? point_json(*a.last) : ordered_json()},
                   {"expectedEnds", std::move(ends)},
                   {"warnings", a.warnings}};
  return out.dump(2) + "\n";
}

}  // namespace kai::sim
