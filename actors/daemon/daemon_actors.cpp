// The daemon's only CAF unit (docs/architecture.md "From watch to bind"). Reflector threads send
// watch events to the ingest actor, which appends them and forwards each, once written, to the entity
// actor of its kind; binder workers and the elector send their reports to the scheduler actor. A cut
// goes scheduler -> ingest -> every store, and the stores deliver their views straight to the
// scheduler: nobody waits on a reply with a blocked mailbox, and the ingest holds no handle to the
// scheduler (the cut request carries where the views go).

#include "actors/daemon/daemon_actors.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/all.hpp>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <utility>
#include <variant>

#include "actors/daemon/wall_clock.hpp"
#include "k8s/model/kinds.hpp"

namespace kai::daemon {

/// A reflector's event and its number (EarlyCycleTrigger::admit).
struct NumberedWatch {
  k8s::ReflectorEvent event;
  uint64_t number = 0;
};
using WatchMsg = std::shared_ptr<const NumberedWatch>;
struct OutcomeMsg {
  BindJob job;
  events::BinderOutcome outcome;
};
using OutcomeMsgPtr = std::shared_ptr<const OutcomeMsg>;
using LeadershipMsg = std::shared_ptr<const events::LeadershipChange>;
/// A store's key -> resourceVersion of one kind, for a relist diffed against what was logged.
using KnownMsg = std::shared_ptr<const std::map<std::string, std::string>>;

/// One cut being assembled: each store adds its view; the last one delivers the cut to `reply_to`.
struct CutAssembly {
  std::mutex mu;
  CutResult result;
  size_t remaining = 0;
  uint64_t request = 0;  ///< The scheduler's number for the request, so a late cut is told apart.
  caf::actor reply_to;
};
using CutAssemblyPtr = std::shared_ptr<CutAssembly>;
/// Set once the snapshot at stop was handed over (true) or not taken (false).
using LastSnapshotDone = std::shared_ptr<std::promise<DaemonActors::StopSnapshot>>;

}  // namespace kai::daemon

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::WatchMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::OutcomeMsgPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::LeadershipMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::WatchEventPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::CutPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::CutAssemblyPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::KnownMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::LastSnapshotDone)

namespace kai::daemon {
namespace {

using watch_atom = caf::atom_constant<caf::atom("watch")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using outcome_atom = caf::atom_constant<caf::atom("outcome")>;
using leader_atom = caf::atom_constant<caf::atom("leader")>;
using cut_atom = caf::atom_constant<caf::atom("cut")>;
using cut_late_atom = caf::atom_constant<caf::atom("cutlate")>;
using early_atom = caf::atom_constant<caf::atom("early")>;
using known_atom = caf::atom_constant<caf::atom("known")>;
using probe_atom = caf::atom_constant<caf::atom("probe")>;
using last_atom = caf::atom_constant<caf::atom("last")>;
/// A cut not delivered this long after it was asked for (stores encoding a snapshot take a fraction
/// of a second at 150k pods) is given up, and the scheduler goes on with its next tick.
constexpr std::chrono::seconds kCutTimeout{60};
/// How often the ingest looks whether the log takes appends again while it drops watch events.
constexpr std::chrono::milliseconds kLogProbePeriod{200};

/// An entity actor: owns one store (nodes; queues and priority classes; pod groups with their pods
/// and bind requests), applies its kinds' watch events, and adds its view to the cuts.
caf::behavior store_actor(caf::event_based_actor* /*self*/, EntityStore* store, size_t index) {
  return {
      [=](watch_atom, const WatchEventPtr& w) {
        if (auto s = store->apply(*w); !s.is_ok()) {
          spdlog::warn("{} {}: skipped: {}", w->kind, events::to_string(w->type), s.message());
        }
      },
      [=](known_atom, const std::string& kind) -> KnownMsg {
        return std::make_shared<const std::map<std::string, std::string>>(store->known(kind));
      },
      [=](cut_atom, uint64_t seq, bool encode, const CutAssemblyPtr& a) {
        std::shared_ptr<const StoreView> view = store->view(seq);
        events::StateSections sections;
        if (encode) store->encode(sections);
        std::lock_guard lock(a->mu);
        a->result.cut.views[index] = view;
        for (const auto& [kind, rv] : view->resource_versions) a->result.resource_versions[kind] = rv;
        model::for_each_kind([&](auto kind) {
          auto& part = decltype(kind)::in(sections);
          if (!part.empty()) decltype(kind)::in(a->result.sections) = std::move(part);
        });
        if (--a->remaining == 0) {
          caf::anon_send(a->reply_to, cut_atom::value, CutPtr(std::make_shared<const CutResult>(std::move(a->result))),
                         a->request);
        }
      },
  };
}

/// The ingest actor: reflectors -> the log -> the store of each event's kind. It also starts cuts:
/// every event it appended up to the cut was sent to its store before the cut (one sender, one
/// mailbox order), so each store's view reflects exactly the log up to the cut's position.
caf::behavior ingest_actor(caf::event_based_actor* self, IngestCore* core, EarlyCycleTrigger* trigger,
                           const std::map<std::string, caf::actor>& store_of_kind,
                           const std::vector<caf::actor>& stores, const RelistFn& relist) {
  auto probing = std::make_shared<bool>(false);  // a probe tick is on its way
  const IngestCore::Forward forward = [self, store_of_kind](const WatchEventPtr& w) {
    if (auto it = store_of_kind.find(std::string(model::table_kind(w->kind))); it != store_of_kind.end()) self->send(it->second, watch_atom::value, w);
  };
  // While the log refuses watch events, look every kLogProbePeriod whether it takes them again; then
  // list the kinds that lost events again, diffed against what their stores hold (= what was logged).
  auto keep_probing = [=] {
    if (*probing || (!core->log_refusing && core->dropped_kinds.empty())) return;
    *probing = true;
    self->delayed_send(self, kLogProbePeriod, probe_atom::value);
  };
  auto recover = [=] {
    for (const std::string& kind : core->recover(forward)) {
      auto it = store_of_kind.find(std::string(model::table_kind(kind)));
      if (it == store_of_kind.end()) continue;
      self->request(it->second, kCutTimeout, known_atom::value, kind)
          .then([=](const KnownMsg& known) { relist(kind, *known); },
                [=](caf::error& err) {
                  // Asked again at the next probe: without its list the kind would block every cycle.
                  spdlog::warn("relist of {}: no answer from its store: {}", kind, caf::to_string(err));
                  core->relisting_kinds.erase(kind);
                  core->dropped_kinds.insert(kind);
                  keep_probing();
                });
    }
  };
  return {
      [=](watch_atom, const WatchMsg& m) {
        core->last_event_number = m->number;
        core->on_watch(m->event, forward);
        if (!core->dropped_kinds.empty() && !core->log_refusing) recover();
        keep_probing();
      },
      [=](probe_atom) {
        *probing = false;
        recover();
        keep_probing();
      },
      [=](cut_atom, bool encode, uint64_t request) {
        auto a = std::make_shared<CutAssembly>();
        a->reply_to = caf::actor_cast<caf::actor>(self->current_sender());
        a->request = request;
        core->reap(forward, true);  // the cut holds only persisted events, each in its store
        CutResult& r = a->result;
        r.appends_failed = std::exchange(core->failed_since_cut, false);
        r.cut.seq = core->log->last_assigned_seq();
        r.last_event_number = core->last_event_number;
        r.early_due = trigger->cut_taken(r.last_event_number);
        r.listed = core->current();
        r.encoded = encode;
        r.cut.views.resize(stores.size());
        a->remaining = stores.size();
        for (const caf::actor& store : stores) self->send(store, cut_atom::value, r.cut.seq, encode, a);
      },
  };
}

/// The scheduler actor: ticks, asks for cuts and runs the cycle driver on them. While a cut is on
/// its way, outcomes and leadership changes wait here, in order, so that nothing the driver appends
/// falls between the cut's position and the cycle (its records stay the projection's at the cut).
caf::behavior scheduler_actor(caf::event_based_actor* self, CycleDriver* driver, const caf::actor& ingest,
                             EarlyCycleTrigger* trigger) {
  struct State {
    std::chrono::steady_clock::time_point asked_at;  ///< When the cut being waited for was asked.
    uint64_t generation = 0;  ///< Ticks carry one; an early cycle starts a new one.
    uint64_t request = 0;     ///< The last cut asked for.
    bool busy = false;        ///< A cut is asked for and not yet handled.
    CycleDriver::Plan plan;
    std::deque<std::variant<OutcomeMsgPtr, LeadershipMsg>> deferred;
    /// An early-cycle request that came while busy (the number of its watch event).
    std::optional<uint64_t> deferred_early;
    /// The snapshot at stop was asked for (its cut is asked once no other is on its way).
    LastSnapshotDone last_snapshot;
    bool last_cut = false;  ///< The cut on its way is the one for the snapshot at stop.
  };
  auto st = std::make_shared<State>();
  auto ask_cut = [=](bool encode) {
    st->busy = true;
    st->asked_at = std::chrono::steady_clock::now();
    self->send(ingest, cut_atom::value, encode, ++st->request);
    self->delayed_send(self, kCutTimeout, cut_late_atom::value, st->request);
  };
  // The snapshot at stop, once no cut is on its way: a cut without a cycle, encoded.
  auto ask_last = [=] {
    st->plan = driver->plan_last_snapshot();
    if (!st->plan.snapshot) {
      st->last_snapshot->set_value(st->plan.up_to_date ? DaemonActors::StopSnapshot::kNotNeeded
                                                       : DaemonActors::StopSnapshot::kNotTaken);
      st->last_snapshot.reset();
      return;
    }
    st->last_cut = true;
    ask_cut(true);
  };
  // Ends the snapshot at stop when the cut just handled was its own.
  auto end_last = [=](bool handed_over) {
    if (!std::exchange(st->last_cut, false) || !st->last_snapshot) return;
    st->last_snapshot->set_value(handed_over ? DaemonActors::StopSnapshot::kTaken : DaemonActors::StopSnapshot::kNotTaken);
    st->last_snapshot.reset();
  };
  auto next = [=] {
    // A deadline before the period's end (a stale gang's grace, a min-runtime) brings the next cycle
    // forward: it must decide even if nothing else changed.
    auto delay = std::chrono::duration_cast<std::chrono::milliseconds>(driver->schedule_period());
    if (auto deadline = driver->next_deadline()) {
      const int64_t ms = *deadline * 1000 - wall_us() / 1000;
      delay = std::clamp(std::chrono::milliseconds(ms), std::chrono::milliseconds(10), delay);
    }
    self->delayed_send(self, delay, tick_atom::value, ++st->generation);
  };
  auto settle = [=] {
    st->busy = false;
    while (!st->deferred.empty()) {
      auto m = std::move(st->deferred.front());
      st->deferred.pop_front();
      if (auto* o = std::get_if<OutcomeMsgPtr>(&m)) {
        driver->on_outcome((*o)->job, (*o)->outcome);
      } else {
        driver->on_leadership(*std::get<LeadershipMsg>(m));
      }
    }
    next();
    // Changes after the cut just handled still want their early cycle.
    if (auto early = std::exchange(st->deferred_early, std::nullopt); early && *early > driver->last_cut_event_number()) {
      self->send(self, tick_atom::value, ++st->generation);
    }
    if (st->last_snapshot) ask_last();
  };
  self->send(self, tick_atom::value, st->generation);
  return {
      [=](outcome_atom, const OutcomeMsgPtr& m) {
        if (st->busy) {
          st->deferred.emplace_back(m);
          return;
        }
        driver->on_outcome(m->job, m->outcome);
      },
      [=](leader_atom, const LeadershipMsg& m) {
        if (st->busy) {
          st->deferred.emplace_back(m);
          return;
        }
        driver->on_leadership(*m);
      },
      [=](early_atom, uint64_t event_number) {
        // A cut that already holds the event served the request.
        if (st->busy) {
          st->deferred_early = std::max(st->deferred_early.value_or(0), event_number);
          return;
        }
        if (event_number <= driver->last_cut_event_number()) return;
        self->send(self, tick_atom::value, ++st->generation);
      },
      [=](tick_atom, uint64_t gen) {
        // A tick of an older generation was overtaken by an early cycle: dropped, so that there is
        // one chain of ticks.
        if (gen != st->generation || st->busy) return;
        st->plan = driver->plan();
        if (!st->plan.cycle && !st->plan.snapshot) return next();
        ask_cut(st->plan.snapshot);
      },
      [=](last_atom, const LastSnapshotDone& done) {
        st->last_snapshot = done;
        if (!st->busy) ask_last();  // else settle() asks once the cut on its way is handled
      },
      [=](cut_atom, const CutPtr& cut, uint64_t request) {
        if (!st->busy || request != st->request) return;  // given up already
        // Changes that came while the cut was on its way want their cycle as an early request would.
        if (cut->early_due) st->deferred_early = std::max(st->deferred_early.value_or(0), cut->last_event_number + 1);
        driver->on_cut(cut, st->plan);
        const auto ended = std::chrono::steady_clock::now();
        trigger->cycle_ran(ended - st->asked_at, ended);
        end_last(true);
        settle();
      },
      [=](cut_late_atom, uint64_t request) {
        if (!st->busy || request != st->request) return;
        spdlog::error("cycle skipped: no cut from the stores within {} s", kCutTimeout.count());
        end_last(false);
        settle();
      },
  };
}

}  // namespace

struct DaemonActors::Impl {
  EarlyCycleTrigger* trigger = nullptr;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  caf::actor scheduler;
  caf::actor ingest;
  std::vector<caf::actor> stores;
  bool stopped = false;
};

DaemonActors::DaemonActors(IngestCore& ingest, EarlyCycleTrigger& trigger, const std::vector<EntityStore*>& stores,
                           CycleDriver& driver, RelistFn relist)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.trigger = &trigger;
  m.cfg.set("scheduler.max-threads", 2);
  // Work sharing: idle workers wait on a condition variable. CAF's default, work stealing, polls its
  // queues with 50 µs sleeps between messages, which cost about a core while watch events trickle in
  // (bench/README.md "Binds at the ceiling") and left the API server's process less of the machine.
  m.cfg.set("scheduler.policy", caf::atom("sharing"));
  m.system = std::make_unique<caf::actor_system>(m.cfg);
  std::map<std::string, caf::actor> store_of_kind;
  for (size_t i = 0; i < stores.size(); ++i) {
    m.stores.push_back(m.system->spawn(store_actor, stores[i], i));
    model::for_each_kind([&](auto kind) {
      if (stores[i]->owns(decltype(kind)::kName)) store_of_kind[std::string(decltype(kind)::kName)] = m.stores.back();
    });
  }
  m.ingest = m.system->spawn(ingest_actor, &ingest, &trigger, store_of_kind, m.stores, std::move(relist));
  m.scheduler = m.system->spawn(scheduler_actor, &driver, m.ingest, &trigger);
}

DaemonActors::~DaemonActors() {
  stop();
}

void DaemonActors::watch(k8s::ReflectorEvent event) {
  auto msg = std::make_shared<NumberedWatch>();
  msg->event = std::move(event);
  uint64_t number = 0;
  const bool early = impl_->trigger->admit(msg->event, [&](uint64_t n) {
    msg->number = n;
    caf::anon_send(impl_->ingest, watch_atom::value, WatchMsg(msg));
  }, number);
  // Sent after the event: the cut this early cycle asks for is queued behind it at the ingest.
  if (early) caf::anon_send(impl_->scheduler, early_atom::value, number);
}

void DaemonActors::outcome(const BindJob& job, events::BinderOutcome outcome) {
  caf::anon_send(impl_->scheduler, outcome_atom::value,
                 std::make_shared<const OutcomeMsg>(OutcomeMsg{job, std::move(outcome)}));
}

void DaemonActors::leadership(const events::LeadershipChange& change) {
  caf::anon_send(impl_->scheduler, leader_atom::value, std::make_shared<const events::LeadershipChange>(change));
}

DaemonActors::StopSnapshot DaemonActors::snapshot_at_stop(std::chrono::milliseconds timeout) {
  auto done = std::make_shared<std::promise<StopSnapshot>>();
  auto outcome = done->get_future();
  caf::anon_send(impl_->scheduler, last_atom::value, LastSnapshotDone(done));
  return outcome.wait_for(timeout) == std::future_status::ready ? outcome.get() : StopSnapshot::kNotTaken;
}

void DaemonActors::stop() {
  Impl& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  {
    // The scheduler first, and wait for it: no cycle runs once the ingest and the stores are going.
    caf::scoped_actor self{*m.system};
    self->send_exit(m.scheduler, caf::exit_reason::user_shutdown);
    self->wait_for(m.scheduler);
  }
  caf::anon_send_exit(m.ingest, caf::exit_reason::user_shutdown);
  for (auto& a : m.stores) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  m.system.reset();  // waits for the actors to finish their current message
}

}  // namespace kai::daemon
