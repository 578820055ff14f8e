#pragma once
// The daemon's Prometheus metrics: KAI's scheduler metric names (docs/kai-compatibility.md "Metrics, events and conditions") where they
// apply, plus cycle, ingest, log and API-call figures of our own. prometheus-cpp stays inside
// metrics.cpp; callers see plain methods. Thread-safe.

#include <boost/core/noncopyable.hpp>

#include "actors/scheduler/core/queue_controller_figures.hpp"
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kai::endpoints {

/// One queue's figures from the proportion plugin (cpu in cores, memory in GB, gpu in devices;
/// usage a share of the cluster's capacity).
struct QueueShare {
  std::string name;
  std::string display_name;
  double fair_cpu = 0, fair_memory_gb = 0, fair_gpu = 0;
  double usage_cpu = 0, usage_memory = 0, usage_gpu = 0;
};

class SchedulerMetrics : private boost::noncopyable {
 public:
  /// `prefix` is KAI's --metrics-namespace (default "kai"): names become `<prefix>_<name>`.
  explicit SchedulerMetrics(std::string prefix = "kai");
  ~SchedulerMetrics();

  /// One scheduling cycle: KAI's latency gauges (last value) and our cycle histogram.
  void observe_cycle(double e2e_ms, double open_session_ms, double close_session_ms,
                     const std::vector<std::pair<std::string, double>>& action_ms);
  /// From a pod's creation (or first pending sight) to its bind decision.
  void observe_task_scheduling(double ms);
  /// From a bind decision to the API server's answer.
  void observe_task_bind(double ms);
  void podgroup_scheduled(const std::string& action);
  void podgroup_acted_on(const std::string& action);
  void preemption_attempt();
  void pod_group_evicted_pods(const std::string& podgroup, const std::string& ns, const std::string& uid,
                              const std::string& nodepool, const std::string& action, uint64_t pods);
  /// KAI's proportion plugin metrics for exactly `queues` (a queue no longer listed loses its
  /// series): queue_fair_share_{cpu_cores,memory_gb,gpu} and the time-based fair share usage
  /// queue_{cpu,memory,gpu}_usage (a share of the cluster's capacity; 0 without usageDBConfig),
  /// labelled queue_name, queue_metadata_name and queue_display_name.
  void set_queue_shares(const std::vector<QueueShare>& queues);

  /// KAI's queue-controller metrics (queue_info, queue_deserved_gpus, queue_quota_*,
  /// queue_allocated_*), labelled queue_name, queue_metadata_name and queue_display_name, for exactly
  /// `queues`: a queue no longer listed loses its series.
  void set_queue_controller(const std::vector<core::QueueControllerFigures>& queues);

  /// Watch events appended to the event log, by kind.
  void events_ingested(const std::string& kind, uint64_t n = 1);
  void set_log_size_bytes(uint64_t bytes);
  /// One API call made by the daemon, by verb ("create"), resource ("pods/binding") and HTTP code.
  void api_call(const std::string& verb, const std::string& resource, int code);
  /// 1 while this replica leads (or when leader election is off), 0 on a standby.
  void set_leader(bool leader);

  /// The Prometheus text exposition format (version 0.0.4).
  std::string text() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kai::endpoints
