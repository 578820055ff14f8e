#include "actors/daemon/ingest.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include <utility>

#include "actors/daemon/wall_clock.hpp"
#include "k8s/model/log_redaction.hpp"

namespace kai::daemon {

events::WatchType watch_type(k8s::ReflectorEventType t) {
  switch (t) {
    case k8s::ReflectorEventType::kAdded:
      return events::WatchType::kAdded;
    case k8s::ReflectorEventType::kModified:
      return events::WatchType::kModified;
    case k8s::ReflectorEventType::kDeleted:
      return events::WatchType::kDeleted;
    case k8s::ReflectorEventType::kBookmark:
      return events::WatchType::kBookmark;
  }
  return events::WatchType::kModified;
}

void IngestCore::drop(const std::string& kind, const std::string& why) {
  if (!log_refusing) {
    spdlog::error("event log takes no watch events ({}); they are dropped and listed again once it does", why);
  }
  log_refusing = true;
  failed_since_cut = true;
  dropped_kinds.insert(kind);
}

void IngestCore::settle(PendingWatch& p, const Forward& forward) {
  auto r = p.appended.get();
  if (!r.is_ok()) return drop(p.event->kind, r.message());
  if (p.list_end) relisting_kinds.erase(p.event->kind);
  forward(p.event);
}

void IngestCore::reap(const Forward& forward, bool wait) {
  while (!pending.empty() &&
         (wait || pending.front().appended.wait_for(std::chrono::seconds(0)) == std::future_status::ready)) {
    settle(pending.front(), forward);
    pending.pop_front();
  }
}

void IngestCore::on_watch(const k8s::ReflectorEvent& ev, const Forward& forward) {
  events::Event e;
  e.timestamp_us = wall_us();
  spdlog::trace("watch {} {} ({} bytes, resourceVersion {})", ev.kind, events::to_string(watch_type(ev.type)),
                ev.object_json.size(), ev.resource_version);
  // What scheduling never reads and may be secret (env values, managedFields) is not logged.
  e.payload = events::WatchEvent{ev.kind, watch_type(ev.type), model::redact_for_log(ev.object_json),
                                 ev.resource_version};
  if (ev.type == k8s::ReflectorEventType::kBookmark && ev.from_list && unlisted_kinds.erase(ev.kind) &&
      unlisted_kinds.empty()) {
    spdlog::info("every kind listed");
  }
  if (metrics) metrics->events_ingested(ev.kind);
  if (log_refusing) {
    dropped_kinds.insert(ev.kind);
  } else {
    PendingWatch p;
    // Lazy: a restart after a power loss lists again what the lost tail held (event_log.hpp Durability).
    p.appended = log->append_async({e}, nullptr, storage::Durability::kLazy);
    p.event = std::make_shared<const events::WatchEvent>(std::get<events::WatchEvent>(std::move(e.payload)));
    p.list_end = ev.type == k8s::ReflectorEventType::kBookmark && ev.from_list;
    pending.push_back(std::move(p));
  }
  reap(forward, false);
}

std::set<std::string> IngestCore::recover(const Forward& forward) {
  if (log_refusing) {
    if (!log->probe().writable()) return {};
    log_refusing = false;
    spdlog::info("event log takes appends again: listing {} kind(s) again", dropped_kinds.size());
  }
  reap(forward, true);  // the stores hold every logged event before they are asked what they hold
  if (log_refusing) return {};
  std::set<std::string> kinds;
  kinds.swap(dropped_kinds);
  relisting_kinds.insert(kinds.begin(), kinds.end());
  return kinds;
}

bool EarlyCycleTrigger::admit(const k8s::ReflectorEvent& ev, const std::function<void(uint64_t)>& enqueue,
                              uint64_t& number) {
  std::lock_guard lock(mu_);
  number = ++last_number_;
  enqueue(number);
  if (ev.type == k8s::ReflectorEventType::kBookmark) {
    return ev.from_list && unlisted_.erase(ev.kind) > 0 && unlisted_.empty();
  }
  // Only what makes new work or frees room counts: objects added and deleted. The updates a burst of
  // binds brings back (bound, then running: two per pod) would otherwise start a cycle every few
  // hundred binds, each costing a whole session while the decisions it finds were already made.
  if (ev.type != k8s::ReflectorEventType::kAdded && ev.type != k8s::ReflectorEventType::kDeleted) return false;
  // The first lists hand every object over as an addition. A cut taken before the last of them ends
  // schedules nothing (it is not `listed`) yet builds a view of every store: at 150,000 pods those
  // cuts cost a quarter of the cold start. So they ask for none; the end of the last one does.
  if (early_after_ == 0 || !unlisted_.empty()) return false;
  counted_.push_back(number);
  const uint64_t changes = counted_.size();
  if (!full_asked_ && changes >= early_after_) {
    full_asked_ = true;
    return true;
  }
  if (hungry_asked_ || !binder_short_ || changes < std::min<uint64_t>(early_after_, kHungryAfter)) return false;
  if (Clock::now() - last_ended_ < 4 * last_took_ || !binder_short_()) return false;
  hungry_asked_ = true;
  return true;
}

bool EarlyCycleTrigger::cut_taken(uint64_t upto) {
  std::lock_guard lock(mu_);
  // Changes admitted after the cut's last event are not in it: they stay counted, or a change that
  // came while a cut was on its way would wait a whole period for its cycle.
  while (!counted_.empty() && counted_.front() <= upto) counted_.pop_front();
  hungry_asked_ = false;
  full_asked_ = early_after_ > 0 && counted_.size() >= early_after_;
  return full_asked_;
}

void EarlyCycleTrigger::cycle_ran(Clock::duration took, Clock::time_point ended) {
  std::lock_guard lock(mu_);
  last_took_ = took;
  last_ended_ = ended;
}

}  // namespace kai::daemon
