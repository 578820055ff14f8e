#include "tools/kai-log/replay.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/cycle.hpp"
#include "events/event_json.hpp"
#include "events/projection.hpp"
#include "storage/restore.hpp"
#include "tools/kai-log/logged_configs.hpp"

namespace kai::kailog {
namespace {

using events::Event;

/// About the memory an event takes in the window: its object text dominates.
size_t approx_bytes(const Event& e) {
  size_t n = sizeof(Event);
  if (const auto* w = std::get_if<events::WatchEvent>(&e.payload)) n += w->object_json.size();
  return n;
}

std::string json_line(const events::Payload& p) {
  return events::to_json_line(Event{0, 0, events::kSchemaVersion, p});
}

/// The cycle a record of a cycle's output belongs to, or nullopt for other records.
std::optional<uint64_t> output_cycle(const events::Payload& p) {
  if (const auto* d = std::get_if<events::DecisionEvent>(&p)) return d->cycle_id;
  if (const auto* j = std::get_if<events::JobStateChange>(&p)) return j->cycle_id;
  if (const auto* s = std::get_if<events::AssumedSettled>(&p)) return s->cycle_id;
  if (const auto* w = std::get_if<events::PodGroupWrite>(&p)) return w->cycle_id;
  if (const auto* w = std::get_if<events::StatusWrite>(&p)) return w->cycle_id;
  if (const auto* a = std::get_if<events::AllocationChange>(&p)) return a->cycle_id;
  return std::nullopt;
}

class Replayer {
 public:
  Replayer(const storage::EventLog& log, const ReplayOptions& options, std::ostream& out, std::ostream& err)
      : log_(log), options_(options), out_(out), err_(err) {}

  int run() {
    retained_from_ = log_.retained_from();
    auto snaps = log_.snapshots();
    if (!snaps) return err_ << "kai-log: " << snaps.message() << "\n", 2;
    snapshots_ = std::move(snaps).value();
    model::Status st =
        log_.read(retained_from_, UINT64_MAX, [&](uint64_t seq, const model::Result<Event>& e) {
          if (!e) {
            ++bad_;
            err_ << "kai-log: record " << seq << " skipped: " << e.message() << "\n";
            return true;
          }
          return on_event(*e);
        });
    if (!st) return err_ << "kai-log: " << st.message() << "\n", 2;
    if (fatal_) return 2;
    if (rereads_ != 0)
      err_ << "kai-log: events read again from the log for " << rereads_ << " cycles (more than "
           << options_.window_bytes << " bytes of events between their positions)\n";
    if (refused_) return refuse();
    finish_cycle();
    if (!started_ && skipped_cycles_ != 0) {
      err_ << "kai-log: no recorded cycle can be replayed: the positions of all " << skipped_cycles_
           << " cycles in the log precede " << covered_from() << "\n";
      return 2;
    }
    out_ << "replayed " << cycles_ << " cycles, " << compared_ << " records, " << differences_
         << " differences";
    if (not_replayed_ != 0) out_ << ", " << not_replayed_ << " cycles not replayed";
    if (older_behaviour_ != 0)
      out_ << ", " << older_behaviour_ << " cycles skipped (recorded by an older scheduling behaviour)";
    out_ << "\n";
    return differences_ == 0 && bad_ == 0 && not_replayed_ == 0 ? 0 : 1;
  }

 private:
  /// A cycle that ran, waiting for the rest of its recorded decisions.
  struct OpenCycle {
    events::CycleStart start;
    std::vector<events::Payload> replayed;
    std::vector<std::pair<uint64_t, events::Payload>> recorded;  // (seq, record)
  };

  /// Whether the state after event `position` can be rebuilt: the log is whole, or a snapshot that
  /// retention kept (and so has every event after it) is at or before the position.
  bool restorable(uint64_t position) const {
    if (retained_from_ <= 1) return true;
    return std::any_of(snapshots_.begin(), snapshots_.end(), [&](const storage::SnapshotInfo& s) {
      return s.seq + 1 >= retained_from_ && s.seq <= position;
    });
  }

  std::string covered_from() const {
    uint64_t oldest = UINT64_MAX;
    for (const auto& s : snapshots_)
      if (s.seq + 1 >= retained_from_) oldest = std::min(oldest, s.seq);
    std::string text = "the events before " + std::to_string(retained_from_) + " were deleted by retention";
    if (oldest == UINT64_MAX) return text + " and no snapshot covers them";
    return "the oldest snapshot (" + std::to_string(oldest) + "): " + text;
  }

  /// Handles one event of the stream; false stops the stream.
  bool on_event(const Event& e) {
    if (const auto* c = std::get_if<events::ConfigChange>(&e.payload)) {
      configs_.record(*c);
    } else if (const auto* s = std::get_if<events::CycleStart>(&e.payload)) {
      if (!on_cycle_start(*s)) return false;
    } else if (auto cycle = output_cycle(e.payload)) {
      on_output(e.seq, *cycle, e.payload);
    } else if (const auto* end = std::get_if<events::CycleEnd>(&e.payload)) {
      if (open_ && open_->start.cycle_id == end->cycle_id) finish_cycle();
    }
    hold(e);
    return true;
  }

  bool on_cycle_start(const events::CycleStart& c) {
    const bool first_in_log = !seen_cycle_;
    seen_cycle_ = true;
    if (refused_) {
      // Looking for the first cycle that can be replayed, to name it in the error.
      if (!restorable(c.log_position)) return true;
      first_replayable_ = c.cycle_id;
      return false;
    }
    if (started_) {
      finish_cycle();
      if (c.cycle_id >= options_.from_cycle) run_cycle(c);
      return true;
    }
    const bool explicit_from = options_.from_cycle != 0;
    if (explicit_from && c.cycle_id < options_.from_cycle) return true;
    // The requested cycle's own start is gone when the first cycle the retained log holds is later.
    const bool requested_gone =
        explicit_from && first_in_log && c.cycle_id > options_.from_cycle && retained_from_ > 1;
    if (!requested_gone && restorable(c.log_position)) return start(c);
    if (!explicit_from) {
      ++skipped_cycles_;
      return true;
    }
    refused_ = true;
    refused_gone_ = requested_gone;
    refused_position_ = c.log_position;
    if (restorable(c.log_position)) {
      first_replayable_ = c.cycle_id;
      return false;
    }
    return true;
  }

  /// The first cycle to replay: restore the state at its position, then run it.
  bool start(const events::CycleStart& c) {
    auto restored = storage::restore_state(log_, c.log_position);
    if (!restored) {
      err_ << "kai-log: cycle " << c.cycle_id << ": the state at " << c.log_position
           << " cannot be restored: " << restored.message() << "\n";
      fatal_ = true;
      return false;
    }
    for (const auto& w : restored->warnings) err_ << "kai-log: " << w << "\n";
    if (skipped_cycles_ != 0)
      err_ << "kai-log: " << skipped_cycles_ << " earlier cycles skipped: their positions precede "
           << covered_from() << "\n";
    err_ << "kai-log: replaying from cycle " << c.cycle_id << " at " << c.log_position << ": snapshot "
         << restored->snapshot_seq << " + " << restored->tail_events << " events\n";
    state_ = std::move(restored.value().state);
    applied_ = c.log_position;
    while (!window_.empty() && window_.front().seq <= applied_) pop_window();
    started_ = true;
    run_cycle(c);
    return true;
  }

  int refuse() {
    err_ << "kai-log: cycle " << options_.from_cycle << " cannot be replayed: ";
    if (refused_gone_) {
      err_ << "it is older than the retained log (the events before " << retained_from_
           << " were deleted by retention)";
    } else {
      err_ << "its position " << refused_position_ << " precedes " << covered_from();
    }
    if (first_replayable_) {
      err_ << "; the first cycle that can be replayed is " << *first_replayable_ << " (--from-cycle "
           << *first_replayable_ << ")\n";
    } else {
      err_ << "; no later cycle in the log can be replayed\n";
    }
    return 2;
  }

  /// Brings the state to the event at `position`: the held events, and before them those that fell
  /// out of the window, read again.
  void catch_up(uint64_t position) {
    if (position <= applied_) return;  // positions do not go back; if one did, the state stays ahead
    const uint64_t reread_to = window_.empty() ? position : std::min(position, window_.front().seq - 1);
    if (reread_to > applied_) {
      model::Status st = log_.read(applied_ + 1, reread_to, [&](uint64_t, const model::Result<Event>& e) {
        if (e) (void)events::apply(state_, *e);  // unreadable records were reported by the stream
        return true;
      });
      if (!st) err_ << "kai-log: " << st.message() << "\n";
      ++rereads_;
    }
    while (!window_.empty() && window_.front().seq <= position) {
      (void)events::apply(state_, window_.front());
      pop_window();
    }
    applied_ = position;
  }

  void run_cycle(const events::CycleStart& c) {
    const LoggedConfig* config = configs_.find(c.config_hash, log_);
    if (config != nullptr && config->behaviour_version != core::kBehaviourVersion) {
      // Decided by another build's rules: a difference would say nothing about this log.
      ++older_behaviour_;
      skipped_.insert(c.cycle_id);
      return;
    }
    if (config == nullptr || !config->options) {
      ++not_replayed_;
      out_ << "cycle " << c.cycle_id << ": not replayed: configuration " << c.config_hash;
      if (config != nullptr) {
        out_ << " does not parse: " << config->options.message() << "\n";
      } else if (retained_from_ > 1) {
        out_ << " is not in the log (retention may have deleted it)\n";
      } else {
        out_ << " is not in the log\n";
      }
      return;
    }
    catch_up(c.log_position);
    const model::ClusterObjects objects = state_.to_objects();
    core::CycleInput in;
    in.objects = model::ObjectRefs::of(objects);
    in.records = &state_.records;
    in.options = config->options.value();
    in.options.now = c.now;
    in.options.now_ms = c.now_ms;
    in.options.seed = c.seed;
    in.options.scheduler_name = c.scheduler_name;
    in.cycle_id = c.cycle_id;
    in.usage_memo = &usage_memo_;
    const core::CycleResult result = core::run_cycle(in);
    ++cycles_;
    open_ = OpenCycle{c, core::cycle_records(result, c.cycle_id, c.leader_epoch), {}};
  }

  void on_output(uint64_t seq, uint64_t cycle, const events::Payload& p) {
    if (skipped_.count(cycle)) return;
    if (open_ && open_->start.cycle_id == cycle) {
      open_->recorded.emplace_back(seq, p);
      return;
    }
    // A record of a cycle already compared: nothing replayed stands for it.
    auto done = finished_.find(cycle);
    if (done == finished_.end()) return;
    ++compared_;
    ++differences_;
    out_ << "cycle " << cycle << " record " << ++done->second << " (record " << seq
         << "):\n  recorded: " << json_line(p) << "\n  replayed: (none)\n";
  }

  /// Compares the open cycle's replayed decisions with the recorded ones.
  void finish_cycle() {
    if (!open_) return;
    const OpenCycle& c = *open_;
    const uint64_t id = c.start.cycle_id;
    const auto& want = c.recorded;
    const auto& got = c.replayed;
    const size_t n = std::max(want.size(), got.size());
    for (size_t i = 0; i < n; ++i) {
      ++compared_;
      std::string got_line, want_line;
      if (i < got.size()) got_line = json_line(got[i]);
      if (i < want.size()) want_line = json_line(want[i].second);
      if (got_line != want_line) {
        ++differences_;
        out_ << "cycle " << id << " record " << i + 1
             << (i < want.size() ? " (record " + std::to_string(want[i].first) + ")" : "")
             << ":\n  recorded: " << (want_line.empty() ? "(none)" : want_line)
             << "\n  replayed: " << (got_line.empty() ? "(none)" : got_line) << "\n";
      }
    }
    finished_[id] = n;
    open_.reset();
  }

  /// Keeps an event that a later cycle's position may still need.
  void hold(const Event& e) {
    if (started_ && e.seq <= applied_) return;
    window_.push_back(e);
    window_bytes_ += approx_bytes(e);
    while (window_bytes_ > options_.window_bytes && !window_.empty()) pop_window();
  }

  void pop_window() {
    window_bytes_ -= approx_bytes(window_.front());
    window_.pop_front();
  }

  const storage::EventLog& log_;
  const ReplayOptions options_;
  std::ostream& out_;
  std::ostream& err_;

  uint64_t retained_from_ = 1;
  std::vector<storage::SnapshotInfo> snapshots_;
  LoggedConfigs configs_;
  core::UsageMemo usage_memo_;                 // time-based fair share: one computation per fetch step
  std::set<uint64_t> skipped_;                 // cycles of an older behaviour version
  uint64_t older_behaviour_ = 0;

  bool seen_cycle_ = false;  // a CycleStart was read
  bool started_ = false;     // the first cycle to replay was found and its state restored
  bool fatal_ = false;
  bool refused_ = false;  // --from-cycle cannot be replayed; looking for the first that can
  bool refused_gone_ = false;
  uint64_t refused_position_ = 0;
  std::optional<uint64_t> first_replayable_;
  uint64_t skipped_cycles_ = 0;

  events::ClusterState state_;
  uint64_t applied_ = 0;  // state_ is the projection up to this event
  std::deque<Event> window_;
  size_t window_bytes_ = 0;
  uint64_t rereads_ = 0;

  std::optional<OpenCycle> open_;
  std::map<uint64_t, size_t> finished_;  // cycle -> decisions compared, to number late records

  uint64_t cycles_ = 0, compared_ = 0, differences_ = 0, not_replayed_ = 0, bad_ = 0;
};

}  // namespace

int replay(const storage::EventLog& log, const ReplayOptions& options, std::ostream& out, std::ostream& err) {
  return Replayer(log, options, out, err).run();
}

}  // namespace kai::kailog
