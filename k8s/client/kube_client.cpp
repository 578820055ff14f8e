#include "k8s/client/kube_client.hpp"

#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "k8s/model/time.hpp"

namespace kai::k8s {

using Json = nlohmann::json;

std::string ApiResult::describe() const {
  if (code == 0) return "no answer: " + message;
  return std::to_string(code) + (reason.empty() ? "" : " " + reason) + (message.empty() ? "" : ": " + message);
}

model::Code ApiResult::error_code() const {
  if (ok()) return model::Code::kOk;
  switch (code) {
    case 0: case 429: return model::Code::kUnavailable;
    case 400: case 422: return model::Code::kInvalid;
    case 401: case 403: return model::Code::kForbidden;
    case 404: case 410: return model::Code::kNotFound;
    case 408: case 504: return model::Code::kTimedOut;
    case 409: return model::Code::kConflict;
    default: return code >= 500 ? model::Code::kUnavailable : model::Code::kUnknown;
  }
}

model::Status ApiResult::status(const std::string& context) const {
  if (ok()) return model::Status::ok();
  return model::Status::error(error_code(), context.empty() ? describe() : context + ": " + describe());
}

std::string core_path(const std::string& ns, const std::string& resource, const std::string& name) {
  std::string p = ns.empty() ? "/api/v1/" + resource : "/api/v1/namespaces/" + ns + "/" + resource;
  return name.empty() ? p : p + "/" + name;
}

std::string group_path(const std::string& group_version, const std::string& ns, const std::string& resource,
                       const std::string& name) {
  std::string p = "/apis/" + group_version + (ns.empty() ? "" : "/namespaces/" + ns) + "/" + resource;
  return name.empty() ? p : p + "/" + name;
}

/// "pods", "pods/binding", "queues.scheduling.run.ai/status": the resource a path names, for counting.
std::string resource_of_path(const std::string& full) {
  std::vector<std::string> seg;
  std::string path = full.substr(0, full.find('?'));
  for (size_t i = 1; i <= path.size();) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) seg.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  size_t at = 0;
  std::string group;
  if (!seg.empty() && seg[0] == "api") {
    at = 2;
  } else if (!seg.empty() && seg[0] == "apis" && seg.size() > 2) {
    group = seg[1];
    at = 3;
  }
  if (at + 1 < seg.size() && seg[at] == "namespaces" && seg.size() > at + 2) at += 2;
  if (at >= seg.size()) return path;
  std::string r = seg[at] + (group.empty() ? "" : "." + group);
  if (at + 2 < seg.size()) r += "/" + seg[at + 2];
  return r;
}

/// Keep-alive connections handed to one request at a time.
struct KubeClient::Pool {
  http::Endpoint endpoint;
  int max = 4;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::unique_ptr<http::HttpClient>> idle;
  int open = 0;

  std::unique_ptr<http::HttpClient> take() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return !idle.empty() || open < max; });
    if (!idle.empty()) {
      auto c = std::move(idle.back());
      idle.pop_back();
      return c;
    }
    ++open;
    return std::make_unique<http::HttpClient>(endpoint);
  }
  void give(std::unique_ptr<http::HttpClient> c) {
    std::lock_guard lock(mu);
    idle.push_back(std::move(c));
    cv.notify_one();
  }
};

KubeClient::KubeClient(ClusterConfig config, ClientOptions options)
    : config_(std::move(config)), options_(options), pool_(std::make_unique<Pool>()) {
  pool_->endpoint = config_.endpoint;
  pool_->max = std::max(1, options_.max_connections);
  tokens_ = std::max(1, options_.burst);
  refilled_ = std::chrono::steady_clock::now();
}

KubeClient::~KubeClient() = default;

void KubeClient::throttle() {
  if (options_.qps <= 0) return;
  std::unique_lock lock(bucket_mu_);
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - refilled_).count();
    tokens_ = std::min<double>(std::max(1, options_.burst), tokens_ + elapsed * options_.qps);
    refilled_ = now;
    if (tokens_ >= 1) {
      tokens_ -= 1;
      return;
    }
    const auto wait = std::chrono::duration<double>((1 - tokens_) / options_.qps);
    lock.unlock();
    std::this_thread::sleep_for(wait);
    lock.lock();
  }
}

ApiResult KubeClient::once(const std::string& method, const std::string& path, const std::string& body,
                           const std::string& content_type) {
  throttle();
  auto conn = pool_->take();
  http::Reply reply = conn->request(method, path, body, content_type);
  pool_->give(std::move(conn));
  ApiResult r;
  r.code = reply.status;
  r.body = std::move(reply.body);
  if (r.code == 0) {
    r.message = reply.error;
    return r;
  }
  if (!r.ok()) {
    Json status = Json::parse(r.body, nullptr, false);
    if (status.is_object()) {
      r.reason = status.value("reason", "");
      r.message = status.value("message", "");
    }
    if (auto it = reply.headers.find("retry-after"); it != reply.headers.end()) r.reason += "|retry-after=" + it->second;
  }
  return r;
}

ApiResult KubeClient::request(const std::string& method, const std::string& path, const std::string& body,
                              const std::string& content_type, bool idempotent) {
  {
    std::lock_guard lock(counts_mu_);
    ++counts_[method + " " + resource_of_path(path)];
  }
  thread_local std::mt19937 rng{std::random_device{}()};
  auto backoff = options_.initial_backoff;
  ApiResult r;
  for (int attempt = 0;; ++attempt) {
    r = once(method, path, body, content_type);
    if (r.code >= 200 && r.code < 500 && r.code != 429) {
      last_answer_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                            std::memory_order_relaxed);
    }
    int retry_after_s = -1;
    if (const size_t at = r.reason.find("|retry-after="); at != std::string::npos) {
      retry_after_s = std::atoi(r.reason.c_str() + at + 13);
      r.reason.resize(at);
    }
    const bool throttled = r.code == 429;  // the server did not process it: always safe to retry
    const bool server_error = r.code == 500 || r.code == 503 || r.code == 504;
    const bool lost = r.code == 0;
    if (attempt >= options_.max_retries || !(throttled || ((server_error || lost) && idempotent))) return r;
    auto wait = backoff + std::chrono::milliseconds(std::uniform_int_distribution<int>(0, static_cast<int>(backoff.count()))(rng));
    if (throttled && retry_after_s >= 0) wait = std::max<std::chrono::milliseconds>(wait, std::chrono::seconds(retry_after_s));
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(wait, std::chrono::seconds(10)));
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(5));
  }
}

std::chrono::steady_clock::time_point KubeClient::last_answer() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(last_answer_ns_.load(std::memory_order_relaxed)));
}

std::map<std::string, uint64_t> KubeClient::request_counts() const {
  std::lock_guard lock(counts_mu_);
  return counts_;
}

ApiResult KubeClient::bind_pod(const std::string& ns, const std::string& name, const std::string& uid,
                               const std::string& node) {
  Json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  return request("POST", core_path(ns, "pods", name) + "/binding", binding.dump());
}

model::Result<std::string> KubeClient::pod_node(const std::string& ns, const std::string& name,
                                                const std::string& uid) {
  ApiResult r = get(core_path(ns, "pods", name));
  if (!r.ok()) return model::Status::error(r.describe());
  Json pod = Json::parse(r.body, nullptr, false);
  if (!pod.is_object()) return model::Status::error("pod " + ns + "/" + name + ": the answer is not an object");
  if (pod["metadata"].value("uid", "") != uid) return model::Status::error("pod " + ns + "/" + name + " not found");
  return pod.value("spec", Json::object()).value("nodeName", "");
}

ApiResult KubeClient::delete_pod(const std::string& ns, const std::string& name, const std::string& uid,
                                 int64_t grace_seconds) {
  Json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", uid}}}};
  if (grace_seconds >= 0) options["gracePeriodSeconds"] = grace_seconds;
  // The uid precondition makes a repeated delete harmless: retrying is safe.
  return request("DELETE", core_path(ns, "pods", name), options.dump(), "application/json", true);
}

ApiResult KubeClient::patch_pod_metadata(const std::string& ns, const std::string& name, const OptionalValues& labels,
                                         const OptionalValues& annotations) {
  Json meta = Json::object();
  auto fill = [](const OptionalValues& values) {
    Json j = Json::object();
    for (const auto& [k, v] : values) j[k] = v ? Json(*v) : Json(nullptr);
    return j;
  };
  if (!labels.empty()) meta["labels"] = fill(labels);
  if (!annotations.empty()) meta["annotations"] = fill(annotations);
  return request("PATCH", core_path(ns, "pods", name), Json{{"metadata", meta}}.dump(),
                 "application/merge-patch+json", true);
}

ApiResult KubeClient::set_pod_condition(const std::string& ns, const std::string& name, const std::string& type,
                                        const std::string& status, const std::string& reason,
                                        const std::string& message) {
  const std::string now = model::format_rfc3339(std::chrono::duration_cast<std::chrono::seconds>(
                                                    std::chrono::system_clock::now().time_since_epoch())
                                                    .count());
  Json patch = {{"status",
                 {{"conditions", Json::array({{{"type", type},
                                               {"status", status},
                                               {"reason", reason},
                                               {"message", message},
                                               {"lastTransitionTime", now},
                                               {"lastProbeTime", nullptr}}})}}}};
  return request("PATCH", core_path(ns, "pods", name) + "/status", patch.dump(),
                 "application/strategic-merge-patch+json", true);
}

ApiResult KubeClient::create_pod(const std::string& ns, const std::string& pod_json) {
  return request("POST", core_path(ns, "pods"), pod_json);
}

ApiResult KubeClient::create_event(const std::string& ns, const std::string& kind, const std::string& api_version,
                                   const std::string& name, const std::string& uid, const std::string& type,
                                   const std::string& reason, const std::string& note, const std::string& action) {
  const std::string event_time = model::format_micro_time(std::chrono::duration_cast<std::chrono::microseconds>(
                                                             std::chrono::system_clock::now().time_since_epoch())
                                                             .count());
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[20];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(rng()));
  Json ev = {{"apiVersion", "events.k8s.io/v1"},
             {"kind", "Event"},
             {"metadata", {{"name", name + "." + suffix}, {"namespace", ns}}},
             {"eventTime", event_time},
             {"reportingController", "kai-scheduler"},
             {"reportingInstance", "kai-scheduler"},
             {"action", action},
             {"reason", reason},
             {"note", note.substr(0, 1024)},
             {"type", type},
             {"regarding", {{"kind", kind}, {"apiVersion", api_version}, {"name", name}, {"namespace", ns}, {"uid", uid}}}};
  return request("POST", group_path("events.k8s.io/v1", ns, "events"), ev.dump());
}

ApiResult KubeClient::create_object(const std::string& collection_path, const std::string& json) {
  return request("POST", collection_path, json);
}

ApiResult KubeClient::merge_patch(const std::string& object_path, const std::string& patch_json) {
  return request("PATCH", object_path, patch_json, "application/merge-patch+json", true);
}

}  // namespace kai::k8s
