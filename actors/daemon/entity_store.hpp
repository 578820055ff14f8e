#pragma once
// What one entity actor owns (entities are owned by kind, never an actor per pod: nodes, queues, and pod groups with
// their pods): the objects of its kinds, projected from the log's watch events by the projection's
// rules (events/projection.hpp), and immutable views of them for the scheduler's cut. A kind's view
// is rebuilt only when the kind changed, and holds the objects by shared pointer, so a cut copies
// pointers, never objects. Plain class, no CAF: the actor around it is in daemon.cpp.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "events/projection.hpp"
#include "events/state_codec.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/objects.hpp"

namespace kai::daemon {

template <class T>
using SharedList = std::shared_ptr<const std::vector<std::shared_ptr<const T>>>;

/// A store's objects at one log position; per kind (k8s/model/kinds.hpp) a vector in key order
/// (model::object_key), null for kinds the store does not own.
struct StoreView : model::PerKind<SharedList> {
  uint64_t seq = 0;
  std::map<std::string, std::string> resource_versions;  ///< Of the store's kinds.
};

class EntityStore {
 public:
  /// `kinds`: the watch kinds it owns (Node, Pod, Queue, PodGroup, PriorityClass, BindRequest, Topology, Namespace).
  explicit EntityStore(std::set<std::string, std::less<>> kinds);

  bool owns(std::string_view kind) const { return kinds_.count(model::table_kind(kind)) > 0; }
  /// Applies a watch event of one of its kinds. A bad object changes nothing and is returned as an
  /// error, as the projection does.
  model::Status apply(const events::WatchEvent& w);
  /// Takes the restored objects of its kinds out of `state` (and their resourceVersions).
  void restore(events::ClusterState& state);
  /// The view of everything applied so far, stamped `seq`.
  std::shared_ptr<const StoreView> view(uint64_t seq);
  /// Its kinds' snapshot sections (events/state_codec.hpp); the others are left alone.
  void encode(events::StateSections& out) const;
  /// key -> resourceVersion of its objects of `kind` (what a reflector already holds).
  std::map<std::string, std::string> known(const std::string& kind) const;
  /// The last resourceVersion of `kind` the log holds everything up to ("" when never listed): where
  /// a restart's watch resumes.
  std::string position(const std::string& kind) const;
  /// Objects held, all kinds.
  size_t size() const;

 private:
  template <class T>
  struct Kind {
    events::SharedObjects<T> objects;
    SharedList<T> published;  ///< Valid while !dirty.
    bool dirty = true;
  };
  template <class T>
  static SharedList<T> publish(Kind<T>& k);

  std::set<std::string, std::less<>> kinds_;
  model::PerKind<Kind> objects_;
  std::map<std::string, std::string> resource_versions_;
};

/// One consistent cut of every store at log position `seq`: what a cycle runs on.
struct ClusterCut {
  uint64_t seq = 0;
  std::vector<std::shared_ptr<const StoreView>> views;

  /// The objects' addresses for a session (valid while the cut lives).
  model::ObjectRefs refs() const;
  /// The pod "namespace/name", or null.
  const model::Pod* find_pod(const std::string& key) const;
  /// Every pod, in key order.
  const std::vector<std::shared_ptr<const model::Pod>>& pods() const;
  size_t node_count() const;
};

}  // namespace kai::daemon
