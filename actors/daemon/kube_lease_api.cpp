#include "actors/daemon/kube_lease_api.hpp"

#include <nlohmann/json.hpp>

#include "k8s/model/time.hpp"

namespace kai::daemon {

using Json = nlohmann::json;

namespace {

leader::LeaseRecord decode_lease(const Json& lease) {
  leader::LeaseRecord r;
  const Json spec = lease.value("spec", Json::object());
  r.holder = spec.value("holderIdentity", "");
  r.lease_duration_s = spec.value("leaseDurationSeconds", 0);
  r.transitions = spec.value("leaseTransitions", 0);
  if (auto t = model::parse_micro_time(spec.value("acquireTime", "")); t.is_ok()) r.acquire_time_us = t.value();
  if (auto t = model::parse_micro_time(spec.value("renewTime", "")); t.is_ok()) r.renew_time_us = t.value();
  r.resource_version = lease.value("metadata", Json::object()).value("resourceVersion", "");
  return r;
}

Json encode_lease(const std::string& ns, const std::string& name, const leader::LeaseRecord& r) {
  Json metadata = {{"name", name}, {"namespace", ns}};
  if (!r.resource_version.empty()) metadata["resourceVersion"] = r.resource_version;
  Json spec = {{"holderIdentity", r.holder},
               {"leaseDurationSeconds", r.lease_duration_s},
               {"leaseTransitions", r.transitions},
               {"acquireTime", model::format_micro_time(r.acquire_time_us)},
               {"renewTime", model::format_micro_time(r.renew_time_us)}};
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
