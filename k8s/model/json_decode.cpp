// The per-kind JSON decoders of json_codec.hpp over nlohmann's DOM, and decode_object_into, which
// picks one by kind and apiVersion group. The decoders themselves are kind_decoders.hpp's.
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "k8s/model/json_codec.hpp"
#include "k8s/model/kind_decoders.hpp"

namespace kai::model {
namespace {

using nlohmann::json;

/// A view (json_decoder.hpp) of a nlohmann value.
class NlohmannView {
 public:
  explicit NlohmannView(const json& v) : v_(&v) {}

  bool is_object() const { return v_->is_object(); }
  bool is_array() const { return v_->is_array(); }
  bool is_string() const { return v_->is_string(); }
  bool is_boolean() const { return v_->is_boolean(); }
  bool is_number() const { return v_->is_number(); }
  bool is_null() const { return v_->is_null(); }
  const char* type_name() const { return v_->type_name(); }

  std::optional<NlohmannView> find(std::string_view key) const {
    auto it = v_->find(key);
    if (it == v_->end()) return std::nullopt;
    return NlohmannView(*it);
  }

  std::string_view string() const { return v_->get_ref<const std::string&>(); }
  bool boolean() const { return v_->get<bool>(); }

  std::optional<int64_t> as_int64() const {
    if (v_->is_number_unsigned()) {
      const auto u = v_->get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(u);
    }
    if (v_->is_number_integer()) return v_->get<int64_t>();
    if (v_->is_number_float()) return json_detail::integral(v_->get<double>());
    return std::nullopt;
  }
  double as_double() const { return v_->get<double>(); }
  std::string dump_number() const { return v_->dump(); }

  size_t size() const { return v_->size(); }

  template <class F>
  void for_each_element(F&& f) const {
    for (size_t i = 0; i < v_->size(); ++i) f(i, NlohmannView((*v_)[i]));
  }

  /// nlohmann's objects are std::maps: keys ascending, each once.
  template <class F>
  void for_each_member(F&& f) const {
    for (const auto& [key, value] : v_->items()) f(std::string_view(key), NlohmannView(value));
  }

 private:
  const json* v_;
};

}  // namespace

Result<Node> decode_node(const json& j) { return json_detail::decode_node(NlohmannView(j)); }
Result<Pod> decode_pod(const json& j) { return json_detail::decode_pod(NlohmannView(j)); }
Result<Queue> decode_queue(const json& j) { return json_detail::decode_queue(NlohmannView(j)); }
Result<PodGroup> decode_pod_group(const json& j) { return json_detail::decode_pod_group(NlohmannView(j)); }
Result<PriorityClass> decode_priority_class(const json& j) {
  return json_detail::decode_priority_class(NlohmannView(j));
}
Result<Topology> decode_topology(const json& j) { return json_detail::decode_topology(NlohmannView(j)); }
Result<Namespace> decode_namespace(const json& j) { return json_detail::decode_namespace(NlohmannView(j)); }
Result<BindRequest> decode_bind_request(const json& j) {
  return json_detail::decode_bind_request(NlohmannView(j));
}
Result<WorkloadOwner> decode_workload_owner(const json& j) {
  return json_detail::decode_workload_owner(NlohmannView(j));
}

Status decode_object_into(const json& j, ClusterObjects& out) {
  return json_detail::decode_object_into(NlohmannView(j), {}, out);
}

}  // namespace kai::model
