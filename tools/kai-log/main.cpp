// kai-log: inspect and check an event log directory (docs/event-log-format.md). Opens the log read-only except for
// `import`, so it can run next to a live daemon, and never crashes on a damaged database: every
// record that fails its checksum or decoding is reported with its sequence number.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "actors/scheduler/core/export_job_state.hpp"
#include "events/event_json.hpp"
#include "events/projection.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/time.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"
#include "tools/common/guarded_main.hpp"
#include "tools/common/huge_pages.hpp"
#include "tools/common/read_file.hpp"
#include "tools/kai-log/counterfactual_command.hpp"
#include "tools/kai-log/dump_filter.hpp"
#include "tools/kai-log/replay.hpp"
#include "tools/kai-log/usage_report.hpp"

namespace {

using kai::events::Event;
using kai::storage::EventLog;

std::unique_ptr<EventLog> open_log(const std::string& dir, bool read_only) {
  kai::storage::EventLogOptions o;
  o.read_only = read_only;
  o.create_if_missing = !read_only;
  auto r = EventLog::open(dir, o);
  if (!r) {
    std::cerr << "kai-log: " << r.message() << "\n";
    return nullptr;
  }
  return std::move(r).value();
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int cmd_stats(const std::string& dir) {
  auto log = open_log(dir, true);
  if (!log) return 2;
  auto st = log->stats();
  if (!st) return std::cerr << "kai-log: " << st.message() << "\n", 2;
  nlohmann::json j;
  j["records"] = st->records;
  j["bytes"] = st->bytes;
  j["firstSeq"] = st->first_seq;
  j["lastSeq"] = st->last_seq;
  j["undecodable"] = st->undecodable;
  nlohmann::json k = nlohmann::json::object();
  for (const auto& [name, n] : st->by_kind) k[name] = n;
  j["byKind"] = k;
  j["retainedFrom"] = st->retained_from;
  nlohmann::json snaps = nlohmann::json::array();
  for (const auto& s : st->snapshots) snaps.push_back({{"seq", s.seq}, {"bytes", s.bytes}});
  j["snapshots"] = snaps;
  for (const char* m : {"leader_epoch", "schema", "config_hash"}) {
    auto v = log->get_meta(m);
    if (v && !v->empty()) j["meta"][m] = *v;
  }
  std::cout << j.dump() << "\n";
  return 0;
}

int cmd_dump(const std::string& dir, uint64_t from, uint64_t to, const std::vector<std::string>& kinds,
             const std::string& object, uint64_t cycle) {
  auto log = open_log(dir, true);
  if (!log) return 2;
  int bad = 0;
  auto st = log->read(from, to, [&](uint64_t seq, const kai::model::Result<Event>& e) {
    if (!e) {
      ++bad;
      std::cerr << "kai-log: record " << seq << ": " << e.message() << "\n";
      return true;
    }
    if (!kinds.empty() &&
        std::find(kinds.begin(), kinds.end(), kai::events::kind_name(e->payload)) == kinds.end())
      return true;
    if (cycle != 0 && kai::kailog::cycle_of(*e) != cycle) return true;
    if (!object.empty() && !kai::kailog::names_object(*e, object)) return true;
    std::cout << kai::events::to_json_line(*e) << "\n";
    return true;
  });
  if (!st) return std::cerr << "kai-log: " << st.message() << "\n", 2;
  return bad ? 1 : 0;
}

int cmd_verify(const std::string& dir) {
  auto log = open_log(dir, true);
  if (!log) return 2;
  auto v = log->verify();
  if (!v) return std::cerr << "kai-log: " << v.message() << "\n", 2;
  for (const auto& c : v->corrupt) std::cout << "corrupt record " << c.seq << ": " << c.message << "\n";
  for (const auto& [a, b] : v->gaps) std::cout << "gap: records " << a + 1 << ".." << b - 1 << " missing\n";
  for (const auto& k : v->bad_keys) std::cout << "bad key " << k << "\n";
  for (const auto& c : v->corrupt_snapshots)
    std::cout << "corrupt snapshot " << c.seq << ": " << c.message << "\n";
  if (v->retained_from > 1)
    std::cout << "records before " << v->retained_from << " were deleted by retention\n";
  std::cout << (v->ok() ? "ok" : "FAILED") << ": " << v->records << " records, sequence " << v->first_seq
            << ".." << v->last_seq << ", " << v->corrupt.size() << " corrupt, " << v->gaps.size() << " gaps, "
            << v->snapshots << " snapshots (" << v->corrupt_snapshots.size() << " corrupt)\n";
  return v->ok() ? 0 : 1;
}

/// The state after event `at` (newest snapshot at or before it + the events after it) as a List.
int cmd_snapshot_export(const std::string& dir, uint64_t at) {
  auto log = open_log(dir, true);
  if (!log) return 2;
  auto r = kai::storage::restore_state(*log, at);
  if (!r) return std::cerr << "kai-log: " << r.message() << "\n", 2;
  for (const auto& w : r->warnings) std::cerr << "kai-log: " << w << "\n";
  std::cerr << "kai-log: state at " << r->state.seq << " from snapshot " << r->snapshot_seq << " + "
            << r->tail_events << " events\n";
  // Job state the log holds goes out as KAI keeps it, on PodGroups (synthesised ones included).
  kai::model::ClusterObjects objects = r->state.to_objects();
  kai::core::export_job_state(objects, r->state.records, r->state.records.scheduler_name, "default-queue");
  std::cout << kai::model::encode_snapshot_json(objects) << "\n";
  return r->skipped_records > 0 ? 1 : 0;
}

/// The stored snapshots, oldest first (JSON lines).
int cmd_snapshot_list(const std::string& dir) {
  auto log = open_log(dir, true);
  if (!log) return 2;
  auto snaps = log->snapshots();
  if (!snaps) return std::cerr << "kai-log: " << snaps.message() << "\n", 2;
  for (const auto& s : *snaps) std::cout << nlohmann::json{{"seq", s.seq}, {"bytes", s.bytes}}.dump() << "\n";
  return 0;
}

/// One record `why` prints, with the UID of the pod it is about ("" when it names no pod).
struct WhyLine {
  uint64_t seq = 0;
  std::string uid;
  std::string text;
};

/// The UID a record gives `pod`, and its line.
std::optional<WhyLine> why_line(const kai::storage::EventLog& log, const std::string& pod, uint64_t seq,
                                const kai::model::Result<Event>& e) {
  std::ostringstream o;
  WhyLine line{seq, "", ""};
  if (!e) {
    o << "#" << seq << " unreadable: " << e.message();
  } else if (const auto* d = std::get_if<kai::events::DecisionEvent>(&e->payload)) {
    if (d->decision.pod == pod) line.uid = d->decision.pod_uid;
    o << "#" << seq << " cycle " << d->cycle_id << ": " << d->decision.action << " "
      << kai::events::to_string(d->decision.kind) << " on " << d->decision.node;
    if (!d->decision.by.empty()) o << " by " << d->decision.by;
    if (!d->decision.reason.empty()) o << " (" << d->decision.reason << ")";
  } else if (const auto* u = std::get_if<kai::events::UnschedulableEvent>(&e->payload)) {
    for (const auto& p : u->pods) {
      if (p.pod == pod) line.uid = p.uid;
    }
    o << "#" << seq << " cycle " << u->cycle_id << ": pod group " << u->pod_group << " in queue " << u->queue
      << " is unschedulable";
    for (const auto& r : u->reasons) o << "\n    " << r.reason << ": " << r.message;
  } else if (const auto* b = std::get_if<kai::events::BinderOutcome>(&e->payload)) {
    // The outcome names the pod; its decision names the UID.
    (void)log.read(b->decision_seq, b->decision_seq, [&](uint64_t, const kai::model::Result<Event>& de) {
      if (de) {
        if (const auto* d = std::get_if<kai::events::DecisionEvent>(&de->payload)) line.uid = d->decision.pod_uid;
      }
      return true;
    });
    o << "#" << seq << " binder: " << kai::events::to_string(b->outcome)
      << (b->reason.empty() ? "" : " (" + b->reason + ")") << " for decision #" << b->decision_seq;
  } else {
    return std::nullopt;
  }
  line.text = o.str();
  return line;
}

/// A pod's records (its decisions, the binder's outcomes, the unschedulable reasons of its group,
/// whatever the group's name) or a pod group's, newest first. A pod recreated under the same name
/// is another pod: only the newest UID's records are shown unless `uid` names another.
int cmd_why(const std::string& dir, const std::string& pod, const std::string& uid, size_t limit) {
  auto log = open_log(dir, true);
  if (!log) return 2;
  auto pod_seqs = log->audit(kai::storage::AuditKey::kPod, pod);
  if (!pod_seqs) return std::cerr << "kai-log: " << pod_seqs.message() << "\n", 2;
  std::vector<uint64_t> seqs = pod_seqs.value();
  auto group_seqs = log->audit(kai::storage::AuditKey::kPodGroup, pod);
  if (group_seqs) seqs.insert(seqs.end(), group_seqs.value().begin(), group_seqs.value().end());
  std::sort(seqs.begin(), seqs.end(), std::greater<>());
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  std::vector<WhyLine> lines;
  for (uint64_t s : seqs) {
    auto st = log->read(s, s, [&](uint64_t seq, const kai::model::Result<Event>& e) {
      if (auto line = why_line(*log, pod, seq, e)) lines.push_back(std::move(*line));
      return true;
    });
    if (!st) return std::cerr << "kai-log: " << st.message() << "\n", 2;
  }
  std::string shown = uid;
  for (const auto& l : lines) {
    if (shown.empty() && !l.uid.empty()) shown = l.uid;  // the newest pod of that name
  }
  std::set<std::string> others;
  size_t printed = 0, hidden = 0;
  for (const auto& l : lines) {
    if (!l.uid.empty() && l.uid != shown) {
      others.insert(l.uid);
      ++hidden;
      continue;
    }
    if (printed++ < limit) std::cout << l.text << "\n";
  }
  if (printed == 0) std::cout << "no decision recorded for " << pod << (uid.empty() ? "" : " uid " + uid) << "\n";
  if (hidden != 0) {
    std::cout << hidden << " records of other pods named " << pod << " not shown (uid";
    for (const auto& o : others) std::cout << " " << o;
    std::cout << "; --uid UID shows them)\n";
  }
  return 0;
}

/// Re-runs the recorded cycles from `from_cycle` (tools/kai-log/replay.hpp): from the newest snapshot
/// at or before the first one's position, streaming the log after it.
int cmd_replay(const std::string& dir, uint64_t from_cycle) {
  auto log = open_log(dir, true);
  if (!log) return 2;
  kai::kailog::ReplayOptions options;
  options.from_cycle = from_cycle;
  return kai::kailog::replay(*log, options, std::cout, std::cerr);
}

/// Records that touched a queue, newest first, from the audit index: the decisions on its pods (an
/// eviction is listed under the victim's queue, `by` names the evicting group) and its unschedulable
/// pod groups. `limit` counts the records printed, after the --since filter.
int cmd_audit(const std::string& dir, const std::string& queue, const std::string& since, size_t limit) {
  int64_t since_us = 0;
  if (!since.empty()) {
    auto t = kai::model::parse_rfc3339(since);
    if (!t) return std::cerr << "kai-log: --since: " << t.message() << "\n", 2;
    since_us = *t * 1'000'000;
  }
  auto log = open_log(dir, true);
  if (!log) return 2;
  auto seqs = log->audit(kai::storage::AuditKey::kQueue, queue);
  if (!seqs) return std::cerr << "kai-log: " << seqs.message() << "\n", 2;
  size_t printed = 0;
  for (uint64_t s : *seqs) {
    if (printed >= limit) break;
    auto st = log->read(s, s, [&](uint64_t seq, const kai::model::Result<Event>& e) {
      if (!e) {
        std::cerr << "kai-log: record " << seq << ": " << e.message() << "\n";
      } else if (e->timestamp_us >= since_us) {
        std::cout << kai::events::to_json_line(*e) << "\n";
        ++printed;
      }
      return true;
    });
    if (!st) return std::cerr << "kai-log: " << st.message() << "\n", 2;
  }
  return 0;
}

/// Appends every object of a Kubernetes List (JSON or YAML) as an ADDED watch event: a way to seed a
/// log from a `kubectl get -o json` dump or kai-gen output.
int cmd_import(const std::string& dir, const std::string& file) {
  auto read = kai::tools::read_file(file);
  if (!read) return std::cerr << file << ": cannot be read\n", 2;
  std::string text = std::move(*read);
  std::vector<nlohmann::json> docs;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return std::cerr << file << ": not JSON\n", 2;
    docs.push_back(std::move(j));
  } else {
    auto y = kai::model::yaml_documents_to_json(text);
    if (!y) return std::cerr << file << ": " << y.message() << "\n", 2;
    docs = std::move(y).value();
  }
  std::vector<Event> evs;
  auto add = [&](const nlohmann::json& o) {
    if (!o.is_object() || !o.contains("kind") || !o["kind"].is_string()) return;
    Event e;
    e.timestamp_us = now_us();
    kai::events::WatchEvent w;
    w.kind = o["kind"].get<std::string>();
    w.type = kai::events::WatchType::kAdded;
    w.object_json = o.dump();
    if (auto m = o.find("metadata"); m != o.end() && m->is_object() && m->contains("resourceVersion") &&
                                     (*m)["resourceVersion"].is_string())
      w.resource_version = (*m)["resourceVersion"].get<std::string>();
    e.payload = std::move(w);
    evs.push_back(std::move(e));
  };
  for (const auto& d : docs) {
    const nlohmann::json* items = &d;
    if (d.is_object() && d.contains("items")) items = &d["items"];
    if (items->is_array()) {
      for (const auto& o : *items) add(o);
    } else {
      add(*items);
    }
  }
  auto log = open_log(dir, false);
  if (!log) return 2;
  if (evs.empty()) return std::cout << "nothing to import\n", 0;
  auto r = log->append(std::move(evs));
  if (!r) return std::cerr << "kai-log: " << r.message() << "\n", 2;
  std::cout << "imported records " << r->first_seq << ".." << r->last_seq << "\n";
  return 0;
}

int cmd_usage(const std::string& dir, kai::kailog::UsageReportOptions options, const std::string& since) {
  if (!since.empty()) {
    auto t = kai::model::parse_rfc3339(since);
    if (!t) return std::cerr << "kai-log: --since: " << t.message() << "\n", 2;
    options.since_ms = *t * 1000;
  }
  auto log = open_log(dir, true);
  if (!log) return 2;
  return kai::kailog::report_usage(*log, options, std::cout, std::cerr);
}

}  // namespace

static int run_tool(int argc, char** argv) {
  CLI::App app{"kai-log: inspect, check and export a kai-scheduler event log"};
  app.require_subcommand(1);
  std::string dir;
  app.add_option("--log-dir,-d", dir, "The event log directory (the daemon's --log-dir)")->required();

  auto* stats = app.add_subcommand("stats", "Record counts per kind, sequence range, bytes (JSON)");
  uint64_t from = 1, to = UINT64_MAX, cycle = 0;
  std::vector<std::string> kinds;
  std::string object;
  auto* dump = app.add_subcommand("dump", "Records as JSON lines");
  dump->add_option("--from", from, "First sequence number")->capture_default_str();
  dump->add_option("--to", to, "Last sequence number");
  dump->add_option(
      "--kind", kinds,
      "Only these kinds: watch, decision, unschedulable, cycle_start, cycle_end, outcome, leadership, "
      "config");
  dump->add_option("--object", object,
                   "Only records naming exactly this object: namespace/name (pods, pod groups), name "
                   "(nodes, queues); watch objects by their metadata, decisions by pod, group, node and "
                   "queue, unschedulable records by group and queue, binder outcomes by pod");
  dump->add_option("--cycle", cycle, "Only the decisions, unschedulable records and markers of this cycle");
  auto* verify =
      app.add_subcommand("verify", "Check every record's checksum and decoding, and sequence gaps");
  auto* snapshot = app.add_subcommand("snapshot", "Snapshots of the projected state");
  snapshot->require_subcommand(1);
  uint64_t at = UINT64_MAX;
  auto* exp = snapshot->add_subcommand("export", "The state at a sequence number as a Kubernetes List");
  exp->add_option("--at", at, "Sequence number (default: the end of the log)");
  auto* list = snapshot->add_subcommand("list", "The stored snapshots, oldest first (JSON lines)");
  std::string pod;
  size_t limit = 50;
  auto* why = app.add_subcommand(
      "why", "The decisions, binder outcomes and unschedulable reasons of a pod or pod group, newest first");
  why->add_option("pod", pod, "namespace/name of a pod or a pod group")->required();
  why->add_option("--limit", limit, "At most this many records")->capture_default_str();
  std::string why_uid;
  why->add_option("--uid", why_uid, "The pod's UID (default: the newest pod of that name)");
  std::string queue, since;
  auto* audit = app.add_subcommand(
      "audit",
      "Records that touched a queue, newest first (JSON lines): binds, pipelines and evictions of its "
      "pods (an eviction under the victim's queue; `by` names the evicting group) and its unschedulable "
      "pod groups");
  audit->add_option("--queue", queue, "Queue name")->required();
  audit->add_option("--since", since, "Only records at or after this time (RFC 3339)");
  audit->add_option("--limit", limit, "At most this many records")->capture_default_str();
  uint64_t from_cycle = 0;
  auto* replay = app.add_subcommand(
      "replay",
      "Re-run the recorded cycles, each with its logged clock, seed and configuration, and report "
      "decisions that differ; starts from the newest snapshot at or before the first cycle's position");
  replay->add_option("--from-cycle", from_cycle,
                     "First cycle to replay (default: the first one whose position a snapshot or the "
                     "untrimmed log can restore)");
  bool counterfactual = false;
  kai::kailog::CounterfactualArgs cf;
  auto* cf_flag = replay->add_flag(
      "--counterfactual", counterfactual,
      "Re-run the recorded arrivals (pods as they came, completed and were deleted) instead of comparing "
      "decisions, and report per queue what happened and what would have (implied by --config and --queues)");
  auto* cf_config = replay->add_option("--config", cf.config_path, "Another KAI scheduler configuration for every cycle");
  auto* cf_queues = replay->add_option("--queues", cf.queues_path,
                                       "Queues (YAML or JSON List) replacing the recorded ones of the same name");
  auto* cf_from = replay->add_option("--from", cf.from, "Counterfactual window start (RFC 3339; default: the first cycle)");
  auto* cf_to = replay->add_option("--to", cf.to, "Counterfactual window end (RFC 3339; default: the last cycle)");
  auto* cf_runtime = replay->add_option(
      "--default-runtime", cf.default_runtime,
      "Run time of pods the recording gives none (evicted, running at the end, never bound); default: to the "
      "window's end");
  auto* cf_format = replay->add_option("--format", cf.format, "Counterfactual report: table, csv or json")
                        ->check(CLI::IsMember({"table", "csv", "json"}))
                        ->capture_default_str();
  auto* cf_progress = replay->add_flag("--progress", cf.progress, "Show the share of cycles run (stderr)");
  auto* from_cycle_opt = replay->get_option("--from-cycle");
  for (auto* o : {cf_flag, cf_config, cf_queues, cf_from, cf_to, cf_runtime, cf_format, cf_progress})
    from_cycle_opt->excludes(o);
  std::string usage_since;
  kai::kailog::UsageReportOptions usage_options;
  auto* usage = app.add_subcommand(
      "usage",
      "Time-based fair share: each queue's usage over time (JSON lines, one per queue and fetch step at "
      "which a cycle ran), as the cycles computed it from the allocation history in the log");
  usage->add_option("--queue", usage_options.queue, "Only this queue");
  usage->add_option("--since", usage_since, "Only fetch steps at or after this time (RFC 3339)");
  std::string file;
  auto* import =
      app.add_subcommand("import", "Append the objects of a List (JSON/YAML) as ADDED watch events");
  import->add_option("file", file, "The List")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*stats) return cmd_stats(dir);
  if (*dump) return cmd_dump(dir, from, to, kinds, object, cycle);
  if (*verify) return cmd_verify(dir);
  if (*exp) return cmd_snapshot_export(dir, at);
  if (*list) return cmd_snapshot_list(dir);
  if (*why) return cmd_why(dir, pod, why_uid, limit);
  if (*replay) {
    if (counterfactual || *cf_config || *cf_queues) {
      auto log = open_log(dir, true);
      if (!log) return 2;
      return kai::kailog::counterfactual_command(*log, cf, std::cout, std::cerr);
    }
    for (auto* o : {cf_from, cf_to, cf_runtime, cf_format, cf_progress}) {
      if (*o) return std::cerr << "kai-log: replay " << o->get_name() << " needs --counterfactual, --config or --queues\n", 2;
    }
    return cmd_replay(dir, from_cycle);
  }
  if (*audit) return cmd_audit(dir, queue, since, limit);
  if (*import) return cmd_import(dir, file);
  if (*usage) return cmd_usage(dir, usage_options, usage_since);
  return 2;
}

int main(int argc, char** argv) {
  kai::tools::run_with_huge_pages(argv);
  return kai::tools::guarded_main("kai-log", [&] { return run_tool(argc, argv); });
}
