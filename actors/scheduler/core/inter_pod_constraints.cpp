#include "actors/scheduler/core/inter_pod_constraints.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string_view>

#include "actors/scheduler/core/node_selection.hpp"
#include "actors/scheduler/core/session.hpp"
#include "k8s/model/string_map_lookup.hpp"

namespace kai::core {
namespace {

bool contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

std::string selector_key(const std::optional<model::LabelSelector>& s) {
  if (!s) return "-";
  std::string out = "{";
  for (const auto& [k, v] : s->match_labels) out.append(k).append("=").append(v).append(",");
  for (const auto& r : s->match_expressions) {
    out.append(r.key).append(" ").append(r.op).append("(");
    for (const auto& v : r.values) out.append(v).append(",");
    out += ")";
  }
  return out + "}";
}

/// `selector` with the pod's values of `match` (key In [value]) and `mismatch` (key NotIn [value]).
std::optional<model::LabelSelector> merged_selector(const std::optional<model::LabelSelector>& selector,
                                                    const std::vector<std::string>& match,
                                                    const std::vector<std::string>& mismatch,
                                                    const model::StringMap& pod_labels) {
  if (!selector) return std::nullopt;
  model::LabelSelector out = *selector;
  for (const auto* keys : {&match, &mismatch}) {
    for (const std::string& key : *keys) {
      const std::string* v = model::find_in(pod_labels, key);
      if (v == nullptr) continue;  // Kubernetes merges only the keys the pod carries
      out.match_expressions.push_back({key, keys == &match ? "In" : "NotIn", {*v}});
    }
  }
  return out;
}

bool ports_conflict(const model::HostPort& a, const model::HostPort& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  const auto any = [](const std::string& ip) { return ip.empty() || ip == "0.0.0.0"; };
  return any(a.host_ip) || any(b.host_ip) || a.host_ip == b.host_ip;
}

template <class F>
void each_host_port(const model::Pod& pod, F&& f) {
  for (const auto& c : pod.containers)
    for (const auto& p : c.host_ports) f(p);
  for (const auto& c : pod.init_containers) {
    if (!c.restart_policy_always) continue;  // only sidecars keep their ports while the pod runs
    for (const auto& p : c.host_ports) f(p);
  }
}

bool has_host_ports(const model::Pod& pod) {
  bool any = false;
  each_host_port(pod, [&](const model::HostPort&) { any = true; });
  return any;
}

bool has_hard_spread(const model::Pod& pod) {
  return std::any_of(pod.topology_spread_constraints.begin(), pod.topology_spread_constraints.end(),
                     [](const auto& c) { return c.when_unsatisfiable == "DoNotSchedule"; });
}

/// Scored terms of existing pods: required affinity counts 1 (kube-scheduler's hardPodAffinityWeight),
/// preferred affinity +weight, preferred anti-affinity -weight.
constexpr char kExistingAnti = 'A';
constexpr char kExistingScored = 'S';

}  // namespace

bool label_selector_matches(const model::LabelSelector& selector, const model::StringMap& labels) {
  for (const auto& [k, v] : selector.match_labels) {
    const std::string* have = model::find_in(labels, k);
    if (have == nullptr || *have != v) return false;
  }
  for (const auto& r : selector.match_expressions) {
    const std::string* have = model::find_in(labels, r.key);
    if (r.op == "In") {
      if (have == nullptr || !contains(r.values, *have)) return false;
    } else if (r.op == "NotIn") {
      if (have != nullptr && contains(r.values, *have)) return false;
    } else if (r.op == "Exists") {
      if (have == nullptr) return false;
    } else if (r.op == "DoesNotExist") {
      if (have != nullptr) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool has_inter_pod_constraints(const model::Pod& pod) {
  return !pod.pod_affinity.empty() || !pod.pod_anti_affinity.empty() || has_hard_spread(pod) ||
         has_host_ports(pod);
}

ResolvedTerm ResolvedTerm::of(const model::PodAffinityTerm& term, const model::Pod& owner, int32_t weight,
                              const NamespaceLabels* namespace_labels) {
  ResolvedTerm r;
  r.topology_key = term.topology_key;
  r.selector = merged_selector(term.label_selector, term.match_label_keys, term.mismatch_label_keys, owner.meta.labels);
  r.namespaces = term.namespaces;
  r.namespace_selector = term.namespace_selector;
  if (r.namespaces.empty() && !r.namespace_selector) r.namespaces.push_back(owner.meta.namespace_);
  std::sort(r.namespaces.begin(), r.namespaces.end());
  r.weight = weight;
  r.namespace_labels = namespace_labels;
  return r;
}

bool ResolvedTerm::matches(const model::Pod& pod) const {
  if (!selector) return false;
  const std::string& ns = pod.meta.namespace_;
  bool in_namespace = std::binary_search(namespaces.begin(), namespaces.end(), ns);
  if (!in_namespace && namespace_selector) {
    const model::StringMap* labels = nullptr;
    if (namespace_labels != nullptr) {
      if (auto it = namespace_labels->find(ns); it != namespace_labels->end()) labels = it->second;
    }
    in_namespace = labels != nullptr ? label_selector_matches(*namespace_selector, *labels)
                                     : label_selector_matches(*namespace_selector, {{std::string(kNamespaceNameLabel), ns}});
  }
  return in_namespace && label_selector_matches(*selector, pod.meta.labels);
}

std::string ResolvedTerm::key() const {
  std::string out = topology_key + "|" + selector_key(selector) + "|";
  for (const auto& ns : namespaces) out.append(ns).append(",");
  return out + "|" + selector_key(namespace_selector) + "|" + std::to_string(weight);
}

void LabelAnchoredIndex::add(const std::optional<model::LabelSelector>& selector, size_t item) {
  ++generation_;
  if (!selector) return;  // matches no pod
  if (!selector->match_labels.empty()) {
    const auto& [k, v] = *selector->match_labels.begin();
    by_label_[k][v].push_back(item);
    return;
  }
  for (const auto& r : selector->match_expressions) {
    if (r.op != "In") continue;
    std::set<std::string> values(r.values.begin(), r.values.end());  // a value listed twice files once
    for (const auto& v : values) by_label_[r.key][v].push_back(item);
    return;
  }
  any_.push_back(item);
}

// ------------------------------------------------------------------------------ the index's parts

/// Placed pods that match every term, counted per domain of each term's topology key (and per node
/// when asked, for spread).
struct InterPodConstraints::TermCounts {
  std::vector<ResolvedTerm> terms;
  /// Each term's domain of each node (InterPodConstraints::domains_of its topology key).
  std::vector<const Domains*> domains;
  bool live_only = false;  ///< Skip terminating pods (topology spread does).
  std::vector<DomainCounts> by_domain;
  std::vector<int32_t> by_node;  ///< Empty unless per-node counts were asked for.
  int32_t total = 0;             ///< Matching pods on nodes that carry at least one term's key.

  bool accepts(const model::Pod& pod) const {
    if (live_only && pod.meta.deletion_timestamp) return false;
    return std::all_of(terms.begin(), terms.end(), [&](const ResolvedTerm& t) { return t.matches(pod); });
  }
  void add(uint32_t node_id, int sign) {
    bool any = false;
    for (size_t i = 0; i < terms.size(); ++i) {
      if (const int32_t d = domains[i]->of_node[node_id]; d != kNoDomain) {
        by_domain[i][d] += sign;
        any = true;
      }
    }
    if (any) total += sign;
    if (!by_node.empty()) by_node[node_id] += sign;
  }
};

/// The terms placed pods state about other pods, grouped by identical term: required anti-affinity
/// (a filter on incoming pods) and the scored ones (the podaffinity plugin), each counted per domain.
struct InterPodConstraints::ExistingTerms {
  struct Group {
    char kind = kExistingAnti;
    ResolvedTerm term;
    DomainCounts by_domain;
    const Domains* domains = nullptr;  ///< domains_of the term's key
  };
  std::unordered_map<std::string, size_t> index;
  std::vector<Group> groups;
  LabelAnchoredIndex anti;    ///< Required anti-affinity groups, by the label a pod they match carries.
  LabelAnchoredIndex scored;  ///< The scored ones.
};

/// What one task's checks need. Its own terms are resolved once (their counts are kept current by
/// on_task); the existing pods' terms that match it are looked up again only when a new group of
/// them was filed; the spread counts per domain are summed again after any placement (version).
struct InterPodConstraints::TaskView {
  bool resolved = false;
  TermCounts* affinity = nullptr;
  bool matches_own_affinity = false;
  std::vector<TermCounts*> anti;
  std::vector<std::pair<TermCounts*, int32_t>> preferred;  ///< own preferred terms, weight signed
  std::vector<const model::HostPort*> ports;
  struct SpreadTerm {
    const model::TopologySpreadConstraint* constraint = nullptr;
    const TermCounts* counts = nullptr;
    int32_t self = 0;
  };
  std::vector<SpreadTerm> spread_terms;

  size_t anti_generation = SIZE_MAX;
  std::vector<size_t> existing_anti;    ///< ExistingTerms groups whose term matches the task
  size_t scored_generation = SIZE_MAX;
  std::vector<size_t> existing_scored;  ///< the same for scored groups

  struct Spread {
    const Domains* domains = nullptr;  ///< domains_of the constraint's topology key
    int32_t max_skew = 0;
    int32_t min_match = 0;
    int32_t self = 0;
    DomainCounts counts;
  };
  uint64_t spread_version = UINT64_MAX;
  std::vector<Spread> spreads;

  bool concerns = false;
  bool scores = false;
};

// ------------------------------------------------------------------------------------- the index

InterPodConstraints::InterPodConstraints(const Session& ssn, const model::ObjectRefs& objects, TaskLabelIndexes labels)
    : ssn_(ssn),
      tasks_by_label_(std::move(labels)),
      existing_(std::make_unique<ExistingTerms>()),
      ports_by_node_(ssn.nodes.size()) {
  for (const model::Namespace* ns : objects.namespaces) namespace_labels_[ns->meta.name] = &ns->meta.labels;
  // Pods of other schedulers count where they run, as in KAI's node info (the session keeps only
  // their resources).
  for (const model::Pod* pod : objects.pods) {
    if (pod->scheduler_name == ssn.options().scheduler_name || pod->node_name.empty()) continue;
    if (pod->phase == "Succeeded" || pod->phase == "Failed") continue;
    auto it = ssn.node_index.find(pod->node_name);
    if (it != ssn.node_index.end()) foreign_.emplace_back(pod, it->second);
  }
  auto add = [&](const model::Pod& pod, uint32_t node) {
    add_existing_terms(pod, node, +1);
    each_host_port(pod, [&](const model::HostPort& p) { ports_by_node_[node].push_back(&p); });
  };
  for (const auto& [pod, node] : foreign_) add(*pod, node);
  for (const TaskInfo& task : ssn.tasks) {
    if (placed(task)) add(*task.pod, static_cast<uint32_t>(task.node));
  }
}

InterPodConstraints::~InterPodConstraints() = default;

bool InterPodConstraints::constrains(const model::Pod& pod) {
  return has_inter_pod_constraints(pod);
}

bool InterPodConstraints::needed(const model::ObjectRefs& objects, TaskLabelIndexes* keys) {
  bool any = false;
  for (const model::Pod* p : objects.pods) {
    if (!has_inter_pod_constraints(*p)) continue;
    any = true;
    if (keys == nullptr) return true;
    // The keys counts_for may look candidates up by: a term's matchLabels and In requirements, and
    // the matchLabelKeys merged into it as In requirements.
    auto add_selector = [&](const std::optional<model::LabelSelector>& selector) {
      if (!selector) return;
      for (const auto& [k, v] : selector->match_labels) keys->try_emplace(k);
      for (const auto& r : selector->match_expressions) {
        if (r.op == "In") keys->try_emplace(r.key);
      }
    };
    auto add_term = [&](const model::PodAffinityTerm& t) {
      add_selector(t.label_selector);
      for (const auto& k : t.match_label_keys) keys->try_emplace(k);
    };
    for (const auto& t : p->pod_affinity.required) add_term(t);
    for (const auto& t : p->pod_anti_affinity.required) add_term(t);
    for (const auto& w : p->pod_affinity.preferred) add_term(w.term);
    for (const auto& w : p->pod_anti_affinity.preferred) add_term(w.term);
    for (const auto& c : p->topology_spread_constraints) {
      add_selector(c.label_selector);
      for (const auto& k : c.match_label_keys) keys->try_emplace(k);
    }
  }
  return any;
}

bool InterPodConstraints::placed(const TaskInfo& task) const {
  return task.node != kNoNode && is_active_used(task.status);
}

void InterPodConstraints::add_existing_terms(const model::Pod& pod, uint32_t node, int sign) {
  if (pod.pod_anti_affinity.required.empty() && pod.pod_affinity.empty() && pod.pod_anti_affinity.preferred.empty())
    return;
  // A pod's terms are resolved and filed once; the statement reports the pod many times (and its
  // ghosts share it), so later reports only count.
  // Not a structured binding: the lambda below captures the entry (clang refuses to capture bindings).
  const auto emplaced = groups_of_pod_.try_emplace(&pod);
  const auto cached = emplaced.first;
  if (emplaced.second) {
    auto file = [&](char kind, const ResolvedTerm& term) {
      const std::string key = std::string(1, kind) + term.key();
      auto [it, inserted] = existing_->index.emplace(key, existing_->groups.size());
      if (inserted) {
        existing_->groups.push_back({kind, term, {}, &domains_of(term.topology_key)});
        (kind == kExistingAnti ? existing_->anti : existing_->scored).add(term.selector, it->second);
      }
      cached->second.push_back(it->second);
    };
    for (const auto& t : pod.pod_anti_affinity.required) file(kExistingAnti, ResolvedTerm::of(t, pod, 0, &namespace_labels_));
    for (const auto& t : pod.pod_affinity.required) file(kExistingScored, ResolvedTerm::of(t, pod, 1, &namespace_labels_));
    for (const auto& w : pod.pod_affinity.preferred)
      file(kExistingScored, ResolvedTerm::of(w.term, pod, w.weight, &namespace_labels_));
    for (const auto& w : pod.pod_anti_affinity.preferred)
      file(kExistingScored, ResolvedTerm::of(w.term, pod, -w.weight, &namespace_labels_));
  }
  for (size_t g : cached->second) {
    auto& group = existing_->groups[g];
    if (const int32_t d = group.domains->of_node[node]; d != kNoDomain) group.by_domain[d] += sign;
  }
}

void InterPodConstraints::on_task(uint32_t task_id, int sign) {
  ++version_;
  const TaskInfo& task = ssn_.tasks[task_id];
  if (!placed(task)) return;
  TaskCandidates& cached = candidates_of(task_id);
  if (cached.counts_generation != counts_index_.generation()) {
    cached.counts.clear();
    counts_index_.for_candidates(task.pod->meta.labels,
                                 [&](size_t i) { cached.counts.push_back(static_cast<uint32_t>(i)); });
    cached.counts_generation = counts_index_.generation();
  }
  for (uint32_t i : cached.counts) {
    TermCounts* c = counts_list_[i];
    if (c->accepts(*task.pod)) c->add(static_cast<uint32_t>(task.node), sign);
  }
  add_existing_terms(*task.pod, static_cast<uint32_t>(task.node), sign);
  auto& ports = ports_by_node_[task.node];
  each_host_port(*task.pod, [&](const model::HostPort& p) {
    if (sign > 0) {
      ports.push_back(&p);
    } else if (auto it = std::find(ports.begin(), ports.end(), &p); it != ports.end()) {
      ports.erase(it);
    }
  });
}

const std::vector<uint32_t>& InterPodConstraints::tasks_with_label(const std::string& key, const std::string& value) {
  // Only the keys terms select on are indexed, and only once per session (plus the ghosts added
  // since): the pods' label maps outlive the session, so the values are views into them.
  TaskLabelIndex& index = tasks_by_label_[key];
  if (!index.foreign_indexed) {
    index.foreign_indexed = true;
    for (uint32_t i = 0; i < foreign_.size(); ++i) {
      const model::StringMap& labels = foreign_[i].first->meta.labels;
      if (const std::string* v = model::find_in(labels, key)) index.add(*v, kForeign | i);
    }
  }
  // A key's characters are read only where its length matches (k8s/model/string_map_lookup.hpp):
  // most of this pass was waiting on the heap blocks of other, longer keys.
  for (; index.indexed < ssn_.tasks.size(); ++index.indexed) {
    const model::StringMap& labels = ssn_.tasks[index.indexed].pod->meta.labels;
    if (const std::string* v = model::find_in(labels, key))
      index.add(*v, static_cast<uint32_t>(index.indexed));
  }
  static const std::vector<uint32_t> kNone;
  auto it = index.slot_of.find(std::string_view(value));
  return it == index.slot_of.end() ? kNone : index.postings[it->second];
}

void TaskLabelIndex::add(std::string_view value, uint32_t candidate) {
  auto [it, added] = slot_of.try_emplace(value, static_cast<uint32_t>(postings.size()));
  if (added) postings.emplace_back();
  postings[it->second].push_back(candidate);
}

void TaskLabelIndex::add_task(const model::StringMap& labels, const std::string& key, uint32_t task_id) {
  // Only in order: the tasks below `indexed` are exactly the ones filed; from the first task out of
  // order on, InterPodConstraints::tasks_with_label files the rest itself.
  if (task_id != indexed) return;
  if (const std::string* v = model::find_in(labels, key)) add(*v, task_id);
  indexed = task_id + 1;
}

void InterPodConstraints::count_candidate(TermCounts& counts, uint32_t id) const {
  if ((id & kForeign) != 0) {
    const auto& [pod, node] = foreign_[id & ~kForeign];
    if (counts.accepts(*pod)) counts.add(node, +1);
    return;
  }
  const TaskInfo& task = ssn_.tasks[id];
  if (placed(task) && counts.accepts(*task.pod)) counts.add(static_cast<uint32_t>(task.node), +1);
}

InterPodConstraints::TermCounts& InterPodConstraints::counts_for(std::vector<ResolvedTerm> terms, bool per_node) {
  std::string key = per_node ? "N" : "T";
  for (const auto& t : terms) key += t.key() + "&";
  if (auto it = counts_.find(key); it != counts_.end()) return *it->second;
  auto counts = std::make_unique<TermCounts>();
  counts->terms = std::move(terms);
  for (const auto& t : counts->terms) counts->domains.push_back(&domains_of(t.topology_key));
  counts->live_only = per_node;
  counts->by_domain.resize(counts->terms.size());
  if (per_node) counts->by_node.assign(ssn_.nodes.size(), 0);
  // Candidates: the pods carrying the first term's most selective required label, else every pod.
  const std::vector<uint32_t>* best = nullptr;
  std::vector<uint32_t> union_of_values;
  if (!counts->terms.empty() && counts->terms[0].selector) {
    const model::LabelSelector& s = *counts->terms[0].selector;
    auto postings = [&](const std::string& k, const std::string& v) -> const std::vector<uint32_t>& {
      return tasks_with_label(k, v);
    };
    for (const auto& [k, v] : s.match_labels) {
      const auto& p = postings(k, v);
      if (best == nullptr || p.size() < best->size()) best = &p;
    }
    for (const auto& r : s.match_expressions) {
      if (r.op != "In") continue;
      std::vector<uint32_t> u;
      for (const auto& v : r.values) {
        const auto& p = postings(r.key, v);
        u.insert(u.end(), p.begin(), p.end());
      }
      if (best == nullptr || u.size() < best->size()) {
        union_of_values = std::move(u);
        best = &union_of_values;
      }
    }
  }
  if (best != nullptr) {
    for (uint32_t id : *best) count_candidate(*counts, id);
  } else if (!counts->terms.empty() && counts->terms[0].selector) {
    for (uint32_t t = 0; t < ssn_.tasks.size(); ++t) count_candidate(*counts, t);
    for (uint32_t i = 0; i < foreign_.size(); ++i) count_candidate(*counts, kForeign | i);
  }
  TermCounts& out = *counts;
  if (!out.terms.empty()) counts_index_.add(out.terms[0].selector, counts_list_.size());  // all must match: the first too
  counts_list_.push_back(counts.get());
  counts_.emplace(std::move(key), std::move(counts));
  return out;
}

void InterPodConstraints::resolve_own_terms(const model::Pod& pod, TaskView& v) {
  v.resolved = true;
  if (!pod.pod_affinity.required.empty()) {
    std::vector<ResolvedTerm> terms;
    for (const auto& t : pod.pod_affinity.required) terms.push_back(ResolvedTerm::of(t, pod, 0, &namespace_labels_));
    v.matches_own_affinity =
        std::all_of(terms.begin(), terms.end(), [&](const ResolvedTerm& t) { return t.matches(pod); });
    v.affinity = &counts_for(std::move(terms), false);
  }
  for (const auto& t : pod.pod_anti_affinity.required) v.anti.push_back(&counts_for({ResolvedTerm::of(t, pod, 0, &namespace_labels_)}, false));
  if (ssn_.pod_affinity_scoring) {
    for (const auto& w : pod.pod_affinity.preferred)
      v.preferred.emplace_back(&counts_for({ResolvedTerm::of(w.term, pod, 0, &namespace_labels_)}, false), w.weight);
    for (const auto& w : pod.pod_anti_affinity.preferred)
      v.preferred.emplace_back(&counts_for({ResolvedTerm::of(w.term, pod, 0, &namespace_labels_)}, false), -w.weight);
  }
  for (const auto& c : pod.topology_spread_constraints) {
    if (c.when_unsatisfiable != "DoNotSchedule") continue;
    ResolvedTerm term;
    term.topology_key = c.topology_key;
    term.selector = merged_selector(c.label_selector, c.match_label_keys, {}, pod.meta.labels);
    term.namespaces = {pod.meta.namespace_};
    const int32_t self = term.matches(pod) ? 1 : 0;
    v.spread_terms.push_back({&c, &counts_for({std::move(term)}, true), self});
  }
  each_host_port(pod, [&](const model::HostPort& p) { v.ports.push_back(&p); });
}

void InterPodConstraints::sum_spreads(const model::Pod& pod, TaskView& v) const {
  // Topology spread (DoNotSchedule): the domains of the nodes that carry every constraint's key and
  // pass the node-affinity / taint policies, with the matching pods of the pod's namespace in each.
  v.spread_version = version_;
  v.spreads.clear();
  for (const TaskView::SpreadTerm& st : v.spread_terms) {
    const model::TopologySpreadConstraint& c = *st.constraint;
    TaskView::Spread s;
    s.domains = st.counts->domains[0];
    s.max_skew = c.max_skew;
    s.self = st.self;
    for (uint32_t n = 0; n < ssn_.nodes.size(); ++n) {
      const model::Node& node = *ssn_.nodes[n].object;
      const bool has_keys = std::all_of(v.spread_terms.begin(), v.spread_terms.end(), [&](const auto& h) {
        return node.meta.labels.count(h.constraint->topology_key) > 0;
      });
      if (!has_keys) continue;
      if (c.node_affinity_policy != "Ignore" && !node_selected_by(pod, node)) continue;
      if (c.node_taints_policy == "Honor" && !taints_tolerated(pod, node)) continue;
      s.counts[s.domains->of_node[n]] += st.counts->by_node[n];
    }
    s.min_match = std::numeric_limits<int32_t>::max();
    for (const auto& [domain, count] : s.counts) s.min_match = std::min(s.min_match, count);
    if (s.counts.empty() || (c.min_domains && static_cast<int32_t>(s.counts.size()) < *c.min_domains))
      s.min_match = 0;
    v.spreads.push_back(std::move(s));
  }
}

const InterPodConstraints::TaskView& InterPodConstraints::view_of(const TaskInfo& task) {
  const auto id = static_cast<uint32_t>(&task - ssn_.tasks.data());
  std::unique_ptr<TaskView>& slot = views_[id];
  if (!slot) slot = std::make_unique<TaskView>();
  TaskView& v = *slot;
  const model::Pod& pod = *task.pod;
  if (!v.resolved) resolve_own_terms(pod, v);
  if (v.anti_generation != existing_->anti.generation()) {
    v.anti_generation = existing_->anti.generation();
    v.existing_anti.clear();
    existing_->anti.for_candidates(pod.meta.labels, [&](size_t g) {
      if (existing_->groups[g].term.matches(pod)) v.existing_anti.push_back(g);
    });
  }
  if (ssn_.pod_affinity_scoring && v.scored_generation != existing_->scored.generation()) {
    v.scored_generation = existing_->scored.generation();
    v.existing_scored.clear();
    existing_->scored.for_candidates(pod.meta.labels, [&](size_t g) {
      if (existing_->groups[g].term.matches(pod)) v.existing_scored.push_back(g);
    });
  }
  if (!v.spread_terms.empty() && v.spread_version != version_) sum_spreads(pod, v);
  v.concerns = v.affinity || !v.anti.empty() || !v.existing_anti.empty() || !v.spreads.empty() || !v.ports.empty();
  v.scores = ssn_.pod_affinity_scoring && (!v.preferred.empty() || !v.existing_scored.empty());
  return v;
}

bool InterPodConstraints::may_match(const LabelAnchoredIndex& groups, const model::Pod& pod) const {
  bool any = false;
  groups.for_candidates(pod.meta.labels, [&](size_t g) { any = any || existing_->groups[g].term.matches(pod); });
  return any;
}

InterPodConstraints::TaskCandidates& InterPodConstraints::candidates_of(uint32_t task_id) {
  return candidates_[task_id];
}

bool InterPodConstraints::concerns(const TaskInfo& task) { return concerned_view(task) != nullptr; }

const InterPodConstraints::TaskView* InterPodConstraints::concerned_view(const TaskInfo& task) {
  if (!has_inter_pod_constraints(*task.pod)) {
    TaskCandidates& cached = candidates_of(static_cast<uint32_t>(&task - ssn_.tasks.data()));
    if (cached.anti_generation != existing_->anti.generation()) {
      cached.matched_by_anti = may_match(existing_->anti, *task.pod);
      cached.anti_generation = existing_->anti.generation();
    }
    if (!cached.matched_by_anti) return nullptr;
  }
  const TaskView& v = view_of(task);
  return v.concerns ? &v : nullptr;
}

bool InterPodConstraints::scores(const TaskInfo& task) {
  if (!ssn_.pod_affinity_scoring) return false;
  if (task.pod->pod_affinity.preferred.empty() && task.pod->pod_anti_affinity.preferred.empty()) {
    TaskCandidates& cached = candidates_of(static_cast<uint32_t>(&task - ssn_.tasks.data()));
    if (cached.scored_generation != existing_->scored.generation()) {
      cached.matched_by_scored = may_match(existing_->scored, *task.pod);
      cached.scored_generation = existing_->scored.generation();
    }
    if (!cached.matched_by_scored) return false;
  }
  return view_of(task).scores;
}

const InterPodConstraints::Domains& InterPodConstraints::domains_of(const std::string& key) {
  auto [it, inserted] = domains_by_key_.try_emplace(key);
  if (inserted) {
    // Ids in node order: the same nodes give the same ids, and no answer depends on them (counts
    // are only looked up, and a spread's minimum is the same in any order).
    Domains& d = it->second;
    d.of_node.reserve(ssn_.nodes.size());
    boost::unordered_flat_map<std::string_view, int32_t> id_of;
    for (const NodeInfo& n : ssn_.nodes) {
      const std::string* value = model::find_in(n.object->meta.labels, key);
      if (value == nullptr) {
        d.of_node.push_back(kNoDomain);
        continue;
      }
      d.of_node.push_back(id_of.try_emplace(*value, static_cast<int32_t>(id_of.size())).first->second);
    }
  }
  return it->second;
}

const char* InterPodConstraints::rejection(const TaskInfo& task, const NodeInfo& node) {
  const TaskView* concerned = concerned_view(task);
  if (concerned == nullptr) return nullptr;
  const TaskView& v = *concerned;
  const auto node_id = static_cast<size_t>(&node - ssn_.nodes.data());
  for (const model::HostPort* want : v.ports) {
    for (const model::HostPort* have : ports_by_node_[node_id]) {
      if (ports_conflict(*want, *have)) return "node(s) didn't have free ports for the requested pod ports";
    }
  }
  for (const TermCounts* c : v.anti) {
    const int32_t d = c->domains[0]->of_node[node_id];
    if (d == kNoDomain) continue;
    auto it = c->by_domain[0].find(d);
    if (it != c->by_domain[0].end() && it->second > 0) return "node(s) didn't match pod anti-affinity rules";
  }
  for (size_t g : v.existing_anti) {
    const auto& group = existing_->groups[g];
    const int32_t d = group.domains->of_node[node_id];
    if (d == kNoDomain) continue;
    auto it = group.by_domain.find(d);
    if (it != group.by_domain.end() && it->second > 0) return "node(s) didn't satisfy existing pods anti-affinity rules";
  }
  if (v.affinity != nullptr) {
    bool pods_exist = true;
    for (size_t i = 0; i < v.affinity->terms.size(); ++i) {
      const int32_t d = v.affinity->domains[i]->of_node[node_id];
      if (d == kNoDomain) return "node(s) didn't match pod affinity rules";
      auto it = v.affinity->by_domain[i].find(d);
      if (it == v.affinity->by_domain[i].end() || it->second <= 0) pods_exist = false;
    }
    // The first pod of a set that has affinity to itself may go anywhere its topology keys exist.
    if (!pods_exist && !(v.affinity->total == 0 && v.matches_own_affinity)) return "node(s) didn't match pod affinity rules";
  }
  for (const TaskView::Spread& s : v.spreads) {
    const int32_t d = s.domains->of_node[node_id];
    if (d == kNoDomain) return "node(s) didn't match pod topology spread constraints (missing required label)";
    auto it = s.counts.find(d);
    const int32_t here = it == s.counts.end() ? 0 : it->second;
    if (here + s.self - s.min_match > s.max_skew) return "node(s) didn't match pod topology spread constraints";
  }
  return nullptr;
}

int64_t InterPodConstraints::preferred_score(const TaskInfo& task, const NodeInfo& node) {
  if (!scores(task)) return 0;
  const TaskView& v = view_of(task);
  const auto node_id = static_cast<size_t>(&node - ssn_.nodes.data());
  int64_t score = 0;
  // weight x the pods counted in the node's domain (of the term's topology key).
  auto add = [&](const Domains& domains, const DomainCounts& by_domain, int32_t weight) {
    const int32_t d = domains.of_node[node_id];
    if (d == kNoDomain) return;
    if (auto it = by_domain.find(d); it != by_domain.end()) score += int64_t{weight} * it->second;
  };
  for (const auto& [c, weight] : v.preferred) add(*c->domains[0], c->by_domain[0], weight);
  for (size_t g : v.existing_scored) {
    const auto& group = existing_->groups[g];
    add(*group.domains, group.by_domain, group.term.weight);
  }
  return score;
}

}  // namespace kai::core
