#include "actors/endpoints/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <array>
#include <cmath>
#include <map>
#include <mutex>

namespace kai::endpoints {

namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

/// One queue's series in a set of gauge families: kept by queue name, so that a cycle sets 1,000
/// queues' figures without building and hashing their labels again.
struct QueueSeries {
  std::string display_name;
  prometheus::Labels labels;
  std::vector<Gauge*> gauges;  ///< One per family, in the families' order.
  bool seen = false;
};

/// Sets each queue of `queues` (name, display_name) to `values_of(queue)` (one value per family),
/// adding the series of a queue new or given another display name and removing those of queues gone.
template <class Queue, class ValuesOf>
void set_queue_series(const std::vector<Family<Gauge>*>& families, std::map<std::string, QueueSeries>& series,
                      const std::vector<Queue>& queues, const ValuesOf& values_of) {
  auto remove = [&](const QueueSeries& s) {
    for (auto* family : families) family->Remove(&family->Add(s.labels));
  };
  for (auto& [name, s] : series) s.seen = false;
  for (const auto& q : queues) {
    QueueSeries& s = series[q.name];
    if (s.gauges.empty() || s.display_name != q.display_name) {
      if (!s.gauges.empty()) remove(s);
      s.display_name = q.display_name;
      // KAI keeps queue_name for older dashboards; it is the same as queue_metadata_name.
      s.labels = {
          {"queue_name", q.name}, {"queue_metadata_name", q.name}, {"queue_display_name", q.display_name}};
      s.gauges.clear();
      for (auto* family : families) s.gauges.push_back(&family->Add(s.labels));
    }
    const auto values = values_of(q);
    for (size_t i = 0; i < s.gauges.size(); ++i) s.gauges[i]->Set(values[i]);
    s.seen = true;
  }
  for (auto it = series.begin(); it != series.end();) {
    if (it->second.seen) {
      ++it;
      continue;
    }
    remove(it->second);
    it = series.erase(it);
  }
}

/// Millisecond buckets from 0.1 ms to 10 s: cycles here take milliseconds, KAI's take seconds.
Histogram::BucketBoundaries latency_buckets() {
  return {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};
}

}  // namespace

struct SchedulerMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::string p;
  Family<Gauge>* e2e;
  Family<Gauge>* open_session;
  Family<Gauge>* close_session;
  Family<Gauge>* action_latency;
  Family<Histogram>* cycle;
  Family<Histogram>* task_scheduling;
  Family<Histogram>* task_bind;
  Family<Counter>* scheduled_by_action;
  Family<Counter>* acted_on_by_action;
  Family<Counter>* preemption_attempts;
  Family<Counter>* evicted_pods;
  Family<Gauge>* fair_cpu;
  Family<Gauge>* fair_memory;
  Family<Gauge>* fair_gpu;
  Family<Gauge>* usage_cpu;
  Family<Gauge>* usage_memory;
  Family<Gauge>* usage_gpu;
  std::vector<Family<Gauge>*> shares;  ///< The six above, in the order set_queue_shares fills them.
  std::map<std::string, QueueSeries> share_series;
  /// The queue controller's, in the order set_queue_controller fills them.
  std::vector<Family<Gauge>*> queue_controller;
  std::map<std::string, QueueSeries> controller_series;
  Family<Counter>* ingested;
  Family<Gauge>* log_size;
  Family<Counter>* api_calls;
  Family<Gauge>* leader;

  template <class Builder>
  auto& make(Builder b, const std::string& name, const std::string& help) {
    return b.Name(p + "_" + name).Help(help).Register(*registry);
  }

  explicit Impl(std::string prefix) : p(std::move(prefix)) {
    e2e = &make(prometheus::BuildGauge(), "e2e_scheduling_latency_milliseconds", "Last scheduling cycle, end to end");
    open_session = &make(prometheus::BuildGauge(), "open_session_latency_milliseconds",
                         "Last cycle's session build (snapshot to session)");
    close_session = &make(prometheus::BuildGauge(), "close_session_latency_milliseconds",
                          "Last cycle's session close (decisions to the log)");
    action_latency = &make(prometheus::BuildGauge(), "action_scheduling_latency_milliseconds",
                           "Last cycle's time per action");
    cycle = &make(prometheus::BuildHistogram(), "cycle_latency_milliseconds", "Scheduling cycles, end to end");
    task_scheduling = &make(prometheus::BuildHistogram(), "task_scheduling_latency_milliseconds",
                            "From a pod's first pending sight to its bind decision");
    task_bind = &make(prometheus::BuildHistogram(), "task_bind_latency_milliseconds",
                      "From a bind decision to the API server's answer");
    scheduled_by_action = &make(prometheus::BuildCounter(), "podgroups_scheduled_by_action",
                                "Pod groups that an action scheduled");
    acted_on_by_action = &make(prometheus::BuildCounter(), "podgroups_acted_on_by_action",
                               "Pod groups that an action tried to schedule");
    preemption_attempts = &make(prometheus::BuildCounter(), "total_preemption_attempts",
                                "Attempts to make room by evicting pods");
    evicted_pods = &make(prometheus::BuildCounter(), "pod_group_evicted_pods_total", "Pods evicted, by pod group");
    for (const auto& [name, help] : std::vector<std::pair<const char*, const char*>>{
             {"queue_info", "Queues info"},
             {"queue_deserved_gpus", "Queue deserved GPUs"},
             {"queue_quota_cpu_cores", "Queue quota CPU"},
             {"queue_quota_memory_bytes", "Queue quota memory"},
             {"queue_allocated_gpus", "Queue allocated GPUs"},
             {"queue_allocated_cpu_cores", "Queue allocated CPUs"},
             {"queue_allocated_memory_bytes", "Queue allocated memory"}}) {
      queue_controller.push_back(&make(prometheus::BuildGauge(), name, help));
    }
    fair_cpu = &make(prometheus::BuildGauge(), "queue_fair_share_cpu_cores", "Queue fair share of CPU (cores)");
    fair_memory = &make(prometheus::BuildGauge(), "queue_fair_share_memory_gb", "Queue fair share of memory (GB)");
    fair_gpu = &make(prometheus::BuildGauge(), "queue_fair_share_gpu", "Queue fair share of GPUs");
    // Time-based fair share's usage (docs/time-based-fair-share.md), as KAI's proportion plugin reports it.
    usage_cpu = &make(prometheus::BuildGauge(), "queue_cpu_usage", "Queue historical CPU usage, a share of the cluster's");
    usage_memory =
        &make(prometheus::BuildGauge(), "queue_memory_usage", "Queue historical memory usage, a share of the cluster's");
    usage_gpu = &make(prometheus::BuildGauge(), "queue_gpu_usage", "Queue historical GPU usage, a share of the cluster's");
    shares = {fair_cpu, fair_memory, fair_gpu, usage_cpu, usage_memory, usage_gpu};
    ingested = &make(prometheus::BuildCounter(), "events_ingested_total", "Watch events appended to the event log");
    log_size = &make(prometheus::BuildGauge(), "event_log_size_bytes", "Size of the event log on disk");
    api_calls = &make(prometheus::BuildCounter(), "api_calls_total", "Kubernetes API calls made by the scheduler");
    leader = &make(prometheus::BuildGauge(), "leader", "1 while this replica schedules, 0 on a standby");
  }
};

SchedulerMetrics::SchedulerMetrics(std::string prefix) : impl_(std::make_unique<Impl>(std::move(prefix))) {}
SchedulerMetrics::~SchedulerMetrics() = default;

void SchedulerMetrics::observe_cycle(double e2e_ms, double open_session_ms, double close_session_ms,
                                     const std::vector<std::pair<std::string, double>>& action_ms) {
  impl_->e2e->Add({}).Set(e2e_ms);
  impl_->open_session->Add({}).Set(open_session_ms);
  impl_->close_session->Add({}).Set(close_session_ms);
  for (const auto& [action, ms] : action_ms) impl_->action_latency->Add({{"action", action}}).Set(ms);
  impl_->cycle->Add({}, latency_buckets()).Observe(e2e_ms);
}

void SchedulerMetrics::observe_task_scheduling(double ms) {
  impl_->task_scheduling->Add({}, latency_buckets()).Observe(ms);
}

void SchedulerMetrics::observe_task_bind(double ms) { impl_->task_bind->Add({}, latency_buckets()).Observe(ms); }

void SchedulerMetrics::podgroup_scheduled(const std::string& action) {
  impl_->scheduled_by_action->Add({{"action", action}}).Increment();
}

void SchedulerMetrics::podgroup_acted_on(const std::string& action) {
  impl_->acted_on_by_action->Add({{"action", action}}).Increment();
}

void SchedulerMetrics::preemption_attempt() { impl_->preemption_attempts->Add({}).Increment(); }

void SchedulerMetrics::pod_group_evicted_pods(const std::string& podgroup, const std::string& ns,
                                              const std::string& uid, const std::string& nodepool,
                                              const std::string& action, uint64_t pods) {
  impl_->evicted_pods
      ->Add({{"podgroup", podgroup}, {"namespace", ns}, {"uid", uid}, {"nodepool", nodepool}, {"action", action}})
      .Increment(static_cast<double>(pods));
}

void SchedulerMetrics::set_queue_shares(const std::vector<QueueShare>& queues) {
  set_queue_series(impl_->shares, impl_->share_series, queues, [](const QueueShare& q) {
    return std::array<double, 6>{q.fair_cpu,  q.fair_memory_gb, q.fair_gpu,
                                 q.usage_cpu, q.usage_memory,   q.usage_gpu};
  });
}

void SchedulerMetrics::set_queue_controller(const std::vector<core::QueueControllerFigures>& queues) {
  auto rounded = [](double v) { return std::round(v * 1e4) / 1e4; };  // KAI rounds to 4 decimals
  set_queue_series(impl_->queue_controller, impl_->controller_series, queues,
                   [&](const core::QueueControllerFigures& q) {
                     return std::array<double, 7>{1,
                                                  q.deserved_gpus,
                                                  q.quota_cpu_cores,
                                                  q.quota_memory_bytes,
                                                  rounded(q.allocated_gpus),
                                                  rounded(q.allocated_cpu_cores),
                                                  rounded(q.allocated_memory_bytes)};
                   });
}

void SchedulerMetrics::events_ingested(const std::string& kind, uint64_t n) {
  impl_->ingested->Add({{"kind", kind}}).Increment(static_cast<double>(n));
}

void SchedulerMetrics::set_log_size_bytes(uint64_t bytes) { impl_->log_size->Add({}).Set(static_cast<double>(bytes)); }

void SchedulerMetrics::api_call(const std::string& verb, const std::string& resource, int code) {
  impl_->api_calls->Add({{"verb", verb}, {"resource", resource}, {"code", std::to_string(code)}}).Increment();
}

void SchedulerMetrics::set_leader(bool leader) { impl_->leader->Add({}).Set(leader ? 1 : 0); }

std::string SchedulerMetrics::text() const { return prometheus::TextSerializer().Serialize(impl_->registry->Collect()); }

}  // namespace kai::endpoints
