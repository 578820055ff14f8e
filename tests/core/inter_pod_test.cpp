// Pod (anti-)affinity, host ports and topology spread (docs/pod-constraints.md): label selector
// semantics, and properties over random clusters checked against the placements a cycle decides —
// no two pods share a domain that one's required anti-affinity forbids (in either direction), every
// pod placed with required affinity has a matching pod in its domain, no host port is claimed twice
// on a node, and a DoNotSchedule spread is within its skew when the pods are placed.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/inter_pod_constraints.hpp"
#include "k8s/model/codec.hpp"

namespace kai::core {
namespace {

using Json = nlohmann::json;
constexpr int64_t kNow = 1'800'000'000;

TEST(LabelSelector, EachOperatorAsKubernetesDefinesIt) {
  const model::StringMap labels = {{"app", "web"}, {"tier", "1"}};
  using R = model::LabelSelectorRequirement;
  auto sel = [](model::StringMap match, std::vector<R> exprs) { return model::LabelSelector{std::move(match), std::move(exprs)}; };
  EXPECT_TRUE(label_selector_matches(sel({}, {}), labels));  // empty selects everything
  EXPECT_TRUE(label_selector_matches(sel({{"app", "web"}}, {}), labels));
  EXPECT_FALSE(label_selector_matches(sel({{"app", "db"}}, {}), labels));
  EXPECT_TRUE(label_selector_matches(sel({}, {R{"app", "In", {"db", "web"}}}), labels));
  EXPECT_FALSE(label_selector_matches(sel({}, {R{"app", "NotIn", {"web"}}}), labels));
  EXPECT_TRUE(label_selector_matches(sel({}, {R{"zone", "NotIn", {"a"}}}), labels));  // absent key: not in
  EXPECT_TRUE(label_selector_matches(sel({}, {R{"tier", "Exists", {}}}), labels));
  EXPECT_FALSE(label_selector_matches(sel({}, {R{"tier", "DoesNotExist", {}}}), labels));
  EXPECT_FALSE(label_selector_matches(sel({}, {R{"tier", "Gt", {"0"}}}), labels));  // not a pod selector operator
  EXPECT_FALSE(label_selector_matches(sel({{"app", "web"}}, {R{"tier", "In", {"2"}}}), labels));  // ANDed
}

TEST(LabelSelector, TermsResolveNamespacesAgainstTheirOwner) {
  model::Pod owner;
  owner.meta.namespace_ = "ns1";
  owner.meta.labels = {{"rev", "7"}};
  model::PodAffinityTerm t;
  t.label_selector = model::LabelSelector{{{"app", "web"}}, {}};
  t.topology_key = "kubernetes.io/hostname";
  t.match_label_keys = {"rev", "absent"};
  const ResolvedTerm own = ResolvedTerm::of(t, owner, 0);
  model::Pod other;
  other.meta.namespace_ = "ns1";
  other.meta.labels = {{"app", "web"}, {"rev", "7"}};
  EXPECT_TRUE(own.matches(other));
  other.meta.labels["rev"] = "8";  // matchLabelKeys: the owner's value is required
  EXPECT_FALSE(own.matches(other));
  other.meta.labels["rev"] = "7";
  other.meta.namespace_ = "ns2";  // neither namespaces nor a selector: the owner's namespace only
  EXPECT_FALSE(own.matches(other));
  t.namespace_selector = model::LabelSelector{};
  EXPECT_TRUE(ResolvedTerm::of(t, owner, 0).matches(other));  // {} selects every namespace
  t.namespace_selector = model::LabelSelector{{{std::string(kNamespaceNameLabel), "ns3"}}, {}};
  EXPECT_FALSE(ResolvedTerm::of(t, owner, 0).matches(other));
  const model::StringMap ns2_labels = {{std::string(kNamespaceNameLabel), "ns2"}, {"team", "a"}};
  const NamespaceLabels namespaces = {{"ns2", &ns2_labels}};
  t.namespace_selector = model::LabelSelector{{{"team", "a"}}, {}};
  EXPECT_FALSE(ResolvedTerm::of(t, owner, 0).matches(other));  // labels unknown: only its name
  EXPECT_TRUE(ResolvedTerm::of(t, owner, 0, &namespaces).matches(other));  // the Namespace's labels
  t.namespace_selector = model::LabelSelector{{{std::string(kNamespaceNameLabel), "ns3"}}, {}};
  t.namespaces = {"ns2"};
  EXPECT_TRUE(ResolvedTerm::of(t, owner, 0).matches(other));  // listed or selected
  t.label_selector.reset();
  EXPECT_FALSE(ResolvedTerm::of(t, owner, 0).matches(other));  // no selector: no pod
}

// ------------------------------------------------------------------------------ random clusters

Json node(const std::string& name, const std::string& zone, int gpus) {
  Json labels = {{"kubernetes.io/hostname", name}};
  if (!zone.empty()) labels["zone"] = zone;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", labels}}},
          {"status",
           {{"allocatable",
             {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json queue() {
  Json r = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};
  return {{"apiVersion", "scheduling.run.ai/v2"},
          {"kind", "Queue"},
          {"metadata", {{"name", "team"}, {"uid", "uid-team"}}},
          {"spec", {{"resources", {{"gpu", r}, {"cpu", r}, {"memory", r}}}}}};
}

Json pod_group(const std::string& name, int min_member) {
  return {{"apiVersion", "scheduling.run.ai/v2alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", "uid-" + name}}},
          {"spec", {{"minMember", min_member}, {"queue", "team"}}}};
}

struct PodSpec {
  std::string name, group, app, on;
  int gpus = 1;
  Json affinity;
  Json spread;
  int host_port = 0;
};

PodSpec make(std::string name, std::string group, std::string app, std::string on) {
  PodSpec s;
  s.name = std::move(name);
  s.group = std::move(group);
  s.app = std::move(app);
  s.on = std::move(on);
  return s;
}

Json pod(const PodSpec& s) {
  Json container = {{"name", "main"},
                    {"resources", {{"requests", {{"cpu", "1"}}}, {"limits", {{"nvidia.com/gpu", std::to_string(s.gpus)}}}}}};
  if (s.host_port > 0) container["ports"] = Json::array({{{"containerPort", 80}, {"hostPort", s.host_port}}});
  Json spec = {{"schedulerName", "kai-scheduler"}, {"containers", Json::array({container})}};
  if (!s.affinity.is_null()) spec["affinity"] = s.affinity;
  if (!s.spread.is_null()) spec["topologySpreadConstraints"] = s.spread;
  Json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", s.name},
              {"namespace", "ns"},
              {"uid", "uid-" + s.name},
              {"labels", {{"kai.scheduler/queue", "team"}, {"app", s.app}}},
              {"annotations", {{"pod-group-name", s.group}}},
              {"creationTimestamp", "2027-01-15T08:00:00Z"}}},
            {"spec", spec},
            {"status", {{"phase", "Pending"}}}};
  if (!s.on.empty()) {
    p["spec"]["nodeName"] = s.on;
    p["status"]["phase"] = "Running";
  }
  return p;
}

Json required_term(const std::string& kind, const std::string& app, const std::string& key) {
  return {{kind,
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             Json::array({{{"labelSelector", {{"matchLabels", {{"app", app}}}}}, {"topologyKey", key}}})}}}};
}

struct Placement {
  std::map<std::string, std::string> node_of;  ///< pod -> node, running and newly placed
  std::map<std::string, std::string> zone_of;  ///< node -> zone ("" when none)
  std::string domain(const std::string& pod, const std::string& key) const {
    const std::string& n = node_of.at(pod);
    return key == "zone" ? zone_of.at(n) : n;
  }
};

/// Runs one cycle over `items` and returns where every pod is (running pods where they run).
Placement run(const Json& items, const std::vector<PodSpec>& pods, size_t* placed_now = nullptr) {
  auto o = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  EXPECT_TRUE(o) << o.message();
  model::ClusterObjects objects = std::move(o).value();
  CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.options.now = kNow;
  in.cycle_id = 1;
  const CycleResult result = run_cycle(in);
  Placement p;
  for (const auto& n : objects.nodes) {
    auto it = n.meta.labels.find("zone");
    p.zone_of[n.meta.name] = it == n.meta.labels.end() ? "" : it->second;
  }
  for (const PodSpec& s : pods) {
    if (!s.on.empty()) p.node_of[s.name] = s.on;
  }
  size_t count = 0;
  for (const auto& d : result.decisions) {
    if (d.kind == events::DecisionKind::kBind) {
      p.node_of[d.pod.substr(d.pod.find('/') + 1)] = d.node;
      ++count;
    }
  }
  if (placed_now != nullptr) *placed_now = count;
  return p;
}

struct RandomCluster {
  Json items = Json::array();
  std::vector<PodSpec> pods;
  std::vector<std::string> nodes;
};

/// Zones of a few nodes (some without a zone), running pods of a few apps, and pending gangs whose
/// pods carry `make_affinity(app, key)`.
template <class MakeAffinity>
RandomCluster random_cluster(std::mt19937& rng, MakeAffinity make_affinity) {
  RandomCluster c;
  const int zones = 1 + static_cast<int>(rng() % 3);
  const int nodes = 2 + static_cast<int>(rng() % 6);
  for (int n = 0; n < nodes; ++n) {
    const std::string name = "node-" + std::to_string(n);
    const std::string zone = rng() % 5 == 0 ? "" : "z" + std::to_string(static_cast<int>(rng() % zones));
    c.items.push_back(node(name, zone, 8));
    c.nodes.push_back(name);
  }
  c.items.push_back(queue());
  const char* apps[] = {"a", "b", "c"};
  const char* keys[] = {"kubernetes.io/hostname", "zone"};
  const int running = static_cast<int>(rng() % 4);
  for (int r = 0; r < running; ++r) {
    PodSpec s = make("run-" + std::to_string(r), "run-" + std::to_string(r), apps[rng() % 3], c.nodes[rng() % c.nodes.size()]);
    if (rng() % 2 == 0) s.affinity = make_affinity(apps[rng() % 3], keys[rng() % 2]);
    c.items.push_back(pod_group(s.group, 1));
    c.pods.push_back(s);
  }
  const int gangs = 1 + static_cast<int>(rng() % 4);
  for (int g = 0; g < gangs; ++g) {
    const std::string group = "g" + std::to_string(g);
    const int size = 1 + static_cast<int>(rng() % 3);
    const std::string app = apps[rng() % 3];
    const std::string target = rng() % 2 == 0 ? app : apps[rng() % 3];
    const std::string key = keys[rng() % 2];
    c.items.push_back(pod_group(group, size));
    for (int i = 0; i < size; ++i) {
      PodSpec s = make(group + "-" + std::to_string(i), group, app, "");
      s.gpus = 1 + static_cast<int>(rng() % 3);
      s.affinity = make_affinity(target, key);
      c.pods.push_back(s);
    }
  }
  for (const PodSpec& s : c.pods) c.items.push_back(pod(s));
  return c;
}

std::string key_of(const Json& affinity, const char* kind) {
  return affinity[kind]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"];
}
std::string app_of(const Json& affinity, const char* kind) {
  return affinity[kind]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]["matchLabels"]["app"];
}

TEST(InterPodProperty, NoTwoPodsShareADomainThatARequiredAntiAffinityForbids) {
  std::mt19937 rng(20261126);
  size_t placed_total = 0;
  for (int round = 0; round < 150; ++round) {
    const RandomCluster c = random_cluster(rng, [](const std::string& app, const std::string& key) {
      return required_term("podAntiAffinity", app, key);
    });
    size_t placed = 0;
    const Placement p = run(c.items, c.pods, &placed);
    placed_total += placed;
    for (const PodSpec& a : c.pods) {
      if (a.affinity.is_null() || !p.node_of.count(a.name)) continue;
      const std::string key = key_of(a.affinity, "podAntiAffinity");
      const std::string app = app_of(a.affinity, "podAntiAffinity");
      const std::string mine = p.domain(a.name, key);
      if (mine.empty()) continue;  // a node without the key has no domain
      for (const PodSpec& b : c.pods) {
        if (&a == &b || b.app != app || !p.node_of.count(b.name)) continue;
        // Two running pods were placed by someone else; every pair with a new pod was checked.
        if (!a.on.empty() && !b.on.empty()) continue;
        EXPECT_NE(p.domain(b.name, key), mine)
            << "round " << round << ": " << a.name << " (anti " << app << " on " << key << ") and " << b.name;
      }
    }
  }
  EXPECT_GT(placed_total, 150u);  // the property is not vacuous
}

TEST(InterPodProperty, EveryPodPlacedWithRequiredAffinityHasAMatchingPodInItsDomain) {
  std::mt19937 rng(7);
  size_t placed_total = 0;
  for (int round = 0; round < 150; ++round) {
    const RandomCluster c = random_cluster(rng, [](const std::string& app, const std::string& key) {
      return required_term("podAffinity", app, key);
    });
    size_t placed = 0;
    const Placement p = run(c.items, c.pods, &placed);
    placed_total += placed;
    for (const PodSpec& a : c.pods) {
      if (a.affinity.is_null() || !a.on.empty() || !p.node_of.count(a.name)) continue;
      const std::string key = key_of(a.affinity, "podAffinity");
      const std::string app = app_of(a.affinity, "podAffinity");
      const std::string mine = p.domain(a.name, key);
      ASSERT_FALSE(mine.empty()) << "round " << round << ": " << a.name << " placed on a node without " << key;
      bool found = false;
      for (const PodSpec& b : c.pods) {
        // The first pod of a set with affinity to itself is its own match.
        if (b.app == app && p.node_of.count(b.name) && p.domain(b.name, key) == mine) found = true;
      }
      EXPECT_TRUE(found) << "round " << round << ": " << a.name << " has no app=" << app << " pod in " << mine;
    }
  }
  EXPECT_GT(placed_total, 150u);
}

TEST(InterPodProperty, AHostPortIsClaimedOncePerNode) {
  std::mt19937 rng(99);
  for (int round = 0; round < 100; ++round) {
    Json items = Json::array({queue()});
    const int nodes = 1 + static_cast<int>(rng() % 4);
    for (int n = 0; n < nodes; ++n) items.push_back(node("node-" + std::to_string(n), "", 8));
    std::vector<PodSpec> pods;
    for (int i = 0; i < 8; ++i) {
      PodSpec s = make("p" + std::to_string(i), "p" + std::to_string(i), "a", "");
      s.host_port = 8000 + static_cast<int>(rng() % 3);
      if (i < 2) s.on = "node-" + std::to_string(static_cast<int>(rng() % nodes));
      items.push_back(pod_group(s.group, 1));
      pods.push_back(s);
    }
    for (const PodSpec& s : pods) items.push_back(pod(s));
    const Placement p = run(items, pods);
    std::set<std::pair<std::string, int>> claimed;
    size_t expected_running_duplicates = 0;
    if (pods[0].on == pods[1].on && pods[0].host_port == pods[1].host_port) expected_running_duplicates = 1;
    size_t duplicates = 0;
    for (const PodSpec& s : pods) {
      if (!p.node_of.count(s.name)) continue;
      duplicates += !claimed.insert({p.node_of.at(s.name), s.host_port}).second;
    }
    EXPECT_EQ(duplicates, expected_running_duplicates) << "round " << round;
  }
}

TEST(InterPodProperty, ADoNotScheduleSpreadStaysWithinItsSkewAsPodsArePlaced) {
  std::mt19937 rng(31);
  size_t placed_total = 0;
  for (int round = 0; round < 100; ++round) {
    Json items = Json::array({queue()});
    std::vector<std::string> names;
    const int zones = 2 + static_cast<int>(rng() % 2);
    for (int n = 0; n < 2 * zones; ++n) {
      names.push_back("node-" + std::to_string(n));
      items.push_back(node(names.back(), "z" + std::to_string(n % zones), 8));
    }
    std::vector<PodSpec> pods;
    const int running = static_cast<int>(rng() % 4);
    for (int r = 0; r < running; ++r) {
      pods.push_back(make("run-" + std::to_string(r), "run-" + std::to_string(r), "s", names[rng() % names.size()]));
      items.push_back(pod_group(pods.back().group, 1));
    }
    const int skew = 1 + static_cast<int>(rng() % 2);
    const Json spread = Json::array({{{"maxSkew", skew},
                                      {"topologyKey", "zone"},
                                      {"whenUnsatisfiable", "DoNotSchedule"},
                                      {"labelSelector", {{"matchLabels", {{"app", "s"}}}}}}});
    const int size = 2 + static_cast<int>(rng() % 5);
    items.push_back(pod_group("g", size));
    for (int i = 0; i < size; ++i) {
      PodSpec s = make("g-" + std::to_string(i), "g", "s", "");
      s.spread = spread;
      pods.push_back(s);
    }
    for (const PodSpec& s : pods) items.push_back(pod(s));
    const Placement p = run(items, pods);
    // Each placement into a zone keeps its count within the current minimum + skew, so the spread
    // ends within the skew or within the running pods' own spread, whatever the order.
    std::map<std::string, int> before, after;
    for (int z = 0; z < zones; ++z) before["z" + std::to_string(z)] = after["z" + std::to_string(z)] = 0;
    size_t placed = 0;
    for (const PodSpec& s : pods) {
      if (!p.node_of.count(s.name)) continue;
      const std::string zone = p.domain(s.name, "zone");
      if (!s.on.empty()) ++before[zone];
      ++after[zone];
      placed += s.on.empty();
    }
    auto spread_of = [](const std::map<std::string, int>& m) {
      int lo = INT32_MAX, hi = 0;
      for (const auto& [z, n] : m) lo = std::min(lo, n), hi = std::max(hi, n);
      return hi - lo;
    };
    EXPECT_LE(spread_of(after), std::max(skew, spread_of(before))) << "round " << round;
    placed_total += placed;
  }
  EXPECT_GT(placed_total, 100u);
}

}  // namespace
}  // namespace kai::core

namespace kai::core {
namespace {

// The session build files each task's labels for the keys the terms select on; InterPodConstraints
// otherwise files them itself on first use. Both must answer every check alike.
TEST(InterPodProperty, TheLabelIndexTheBuildFillsAnswersAsTheOneBuiltOnFirstUse) {
  std::mt19937 rng(20261128);
  size_t rejections = 0;
  for (int round = 0; round < 100; ++round) {
    const char* kind = rng() % 2 == 0 ? "podAntiAffinity" : "podAffinity";
    const RandomCluster c = random_cluster(rng, [&](const std::string& app, const std::string& key) {
      return required_term(kind, app, key);
    });
    auto o = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", c.items}}.dump());
    ASSERT_TRUE(o) << o.message();
    const model::ClusterObjects objects = std::move(o).value();
    const model::ObjectRefs refs = model::ObjectRefs::of(objects);
    SessionOptions options;
    options.now = kNow;
    const Session ssn(refs, options);
    ASSERT_NE(ssn.inter_pod, nullptr);
    InterPodConstraints first_use(ssn, refs);
    for (const TaskInfo& task : ssn.tasks) {
      for (const NodeInfo& node : ssn.nodes) {
        const char* built = ssn.inter_pod->rejection(task, node);
        const char* lazy = first_use.rejection(task, node);
        EXPECT_EQ(built == nullptr, lazy == nullptr) << "round " << round << ": " << task.key << " on " << node.name;
        if (built != nullptr && lazy != nullptr) {
          EXPECT_STREQ(built, lazy);
        }
        rejections += built != nullptr ? 1 : 0;
      }
    }
  }
  EXPECT_GT(rejections, 100u);  // not vacuous
}

TEST(TaskLabelIndex, FilesTasksOnlyInOrderSoThatTheRestIsLeftToItsOwner) {
  const model::StringMap a{{"app", "x"}};
  const model::StringMap b{{"app", "y"}};
  TaskLabelIndex index;
  index.add_task(a, "app", 0);
  index.add_task(b, "app", 1);
  index.add_task(a, "app", 3);  // out of order: not filed
  index.add_task(a, "app", 2);
  EXPECT_EQ(index.indexed, 3u);
  ASSERT_EQ(index.postings.size(), 2u);
  EXPECT_EQ(index.postings[index.slot_of.at("x")], (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(index.postings[index.slot_of.at("y")], (std::vector<uint32_t>{1}));
}

}  // namespace
}  // namespace kai::core
