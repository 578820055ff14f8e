#include "actors/daemon/kube_lease_api.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "k8s/model/time.hpp"

namespace kai::daemon {

using Json = nlohmann::json;

std::string format_micro_time(int64_t unix_us) {
  int64_t seconds = unix_us / 1000000;
  int64_t micros = unix_us % 1000000;
  if (micros < 0) {
    micros += 1000000;
    --seconds;
  }
  std::string whole = model::format_rfc3339(seconds);  // ends in 'Z'
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%06lld", static_cast<long long>(micros));
  return whole.substr(0, whole.size() - 1) + fraction + "Z";
}

model::Result<int64_t> parse_micro_time(const std::string& text) {
  auto seconds = model::parse_rfc3339(text);
  if (!seconds.is_ok()) return seconds.status();
  int64_t micros = 0;
  const size_t dot = text.find('.');
  if (dot != std::string::npos) {
    int digits = 0;
    for (size_t i = dot + 1; i < text.size() && digits < 6 && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
      micros = micros * 10 + (text[i] - '0');
    }
    for (; digits < 6; ++digits) micros *= 10;
  }
  return seconds.value() * 1000000 + micros;
}

namespace {

leader::LeaseRecord decode_lease(const Json& lease) {
  leader::LeaseRecord r;
  const Json spec = lease.value("spec", Json::object());
  r.holder = spec.value("holderIdentity", "");
  r.lease_duration_s = spec.value("leaseDurationSeconds", 0);
  r.transitions = spec.value("leaseTransitions", 0);
  if (auto t = parse_micro_time(spec.value("acquireTime", "")); t.is_ok()) r.acquire_time_us = t.value();
  if (auto t = parse_micro_time(spec.value("renewTime", "")); t.is_ok()) r.renew_time_us = t.value();
  r.resource_version = lease.value("metadata", Json::object()).value("resourceVersion", "");
  return r;
}

Json encode_lease(const std::string& ns, const std::string& name, const leader::LeaseRecord& r) {
  Json metadata = {{"name", name}, {"namespace", ns}};
  if (!r.resource_version.empty()) metadata["resourceVersion"] = r.resource_version;
  Json spec = {{"holderIdentity", r.holder},
               {"leaseDurationSeconds", r.lease_duration_s},
               {"leaseTransitions", r.transitions},
               {"acquireTime", format_micro_time(r.acquire_time_us)},
               {"renewTime", format_micro_time(r.renew_time_us)}};
  return {{"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"}, {"metadata", metadata}, {"spec", spec}};
}

}  // namespace

KubeLeaseApi::KubeLeaseApi(k8s::KubeClient& client, std::string lease_namespace, std::string lease_name)
    : client_(client), namespace_(std::move(lease_namespace)), name_(std::move(lease_name)) {}

std::optional<leader::LeaseRecord> KubeLeaseApi::answer(const k8s::ApiResult& r, leader::LeaseError* error) {
  if (r.ok()) {
    Json lease = Json::parse(r.body, nullptr, false);
    if (lease.is_object()) return decode_lease(lease);
    error->message = "the Lease in the answer is not a JSON object";
    return std::nullopt;
  }
  error->conflict = r.conflict();
  error->not_found = r.not_found();
  error->message = r.describe();
  return std::nullopt;
}

std::optional<leader::LeaseRecord> KubeLeaseApi::get(leader::LeaseError* error) {
  return answer(client_.get(k8s::group_path("coordination.k8s.io/v1", namespace_, "leases", name_)), error);
}

std::optional<leader::LeaseRecord> KubeLeaseApi::create(const leader::LeaseRecord& record, leader::LeaseError* error) {
  leader::LeaseRecord fresh = record;
  fresh.resource_version.clear();
  return answer(client_.create_object(k8s::group_path("coordination.k8s.io/v1", namespace_, "leases"),
                                      encode_lease(namespace_, name_, fresh).dump()),
                error);
}

std::optional<leader::LeaseRecord> KubeLeaseApi::update(const leader::LeaseRecord& record, leader::LeaseError* error) {
  // A PUT with the read resourceVersion: the server refuses it (409) if anyone wrote in between.
  return answer(client_.request("PUT", k8s::group_path("coordination.k8s.io/v1", namespace_, "leases", name_),
                                encode_lease(namespace_, name_, record).dump()),
                error);
}

model::Status KubeLeaseApi::check_namespace() {
  auto r = client_.get(k8s::core_path("", "namespaces", namespace_));
  if (r.ok()) return model::Status::ok();
  if (r.not_found()) {
    return model::Status::error("leader election: the lease namespace \"" + namespace_ +
                                "\" does not exist (create it or set --lease-namespace)");
  }
  return model::Status::error("leader election: reading namespace \"" + namespace_ + "\": " + r.describe());
}

}  // namespace kai::daemon
