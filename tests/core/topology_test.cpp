// Topology-aware placement (docs/topology.md), modelled on KAI's topology documentation and its
// plugin's behaviour: the docs' zones-and-racks example, a required level that no single domain can
// hold, a missing topology or level, nodes without the labels, subgroups with their own constraints,
// running pods binding later ones to their domain, aliases, and a property: a gang with a required
// level always lands inside one domain of that level.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <tuple>

#include "actors/scheduler/core/cycle.hpp"
#include "k8s/model/codec.hpp"

namespace kai::core {
namespace {

using Json = nlohmann::json;
constexpr int64_t kNow = 1'800'000'000;

Json node(const std::string& name, int gpus, const std::map<std::string, std::string>& labels) {
  Json l = {{"kubernetes.io/hostname", name}};
  for (const auto& [k, v] : labels) l[k] = v;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", l}}},
          {"status",
           {{"allocatable",
             {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

/// Nodes of one GPU each: zone A with racks A1 (2 nodes), A2, A3, A4; zone B with racks B1-B3 of 2
/// nodes (KAI's documentation example).
Json docs_cluster() {
  Json items = Json::array();
  auto add = [&](const std::string& zone, const std::string& rack, int count) {
    for (int i = 1; i <= count; ++i) {
      items.push_back(node("node-" + rack + "-" + std::to_string(i), 1,
                           {{"topology.kubernetes.io/zone", zone}, {"topology.kubernetes.io/rack", rack}}));
    }
  };
  add("A", "A1", 2);
  add("A", "A2", 1);
  add("A", "A3", 1);
  add("A", "A4", 1);
  add("B", "B1", 2);
  add("B", "B2", 2);
  add("B", "B3", 2);
  return items;
}

Json topology(const std::string& name, const std::vector<std::pair<std::string, std::string>>& levels) {
  Json l = Json::array();
  for (const auto& [label, alias] : levels) {
    Json level = {{"nodeLabel", label}};
    if (!alias.empty()) level["alias"] = alias;
    l.push_back(level);
  }
  return {{"apiVersion", "kai.scheduler/v1alpha1"},
          {"kind", "Topology"},
          {"metadata", {{"name", name}, {"uid", "uid-topology-" + name}}},
          {"spec", {{"levels", l}}}};
}

Json zones_and_racks() {
  return topology("cluster-topology", {{"topology.kubernetes.io/zone", "zone"}, {"topology.kubernetes.io/rack", "rack"}});
}

Json queue() {
  Json r = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};
  return {{"apiVersion", "scheduling.run.ai/v2"},
          {"kind", "Queue"},
          {"metadata", {{"name", "team"}, {"uid", "uid-team"}}},
          {"spec", {{"resources", {{"gpu", r}, {"cpu", r}, {"memory", r}}}}}};
}

Json pod_group(const std::string& name, int min_member, Json constraint, Json sub_groups = nullptr) {
  Json spec = {{"minMember", min_member}, {"queue", "team"}};
  if (!constraint.is_null()) spec["topologyConstraint"] = constraint;
  if (!sub_groups.is_null()) spec["subGroups"] = sub_groups;
  return {{"apiVersion", "scheduling.run.ai/v2alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", "uid-" + name}}},
          {"spec", spec}};
}

Json pod(const std::string& name, const std::string& group, int gpus, const std::string& on = "",
         const std::string& sub_group = "") {
  Json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name},
              {"namespace", "ns"},
              {"uid", "uid-" + name},
              {"labels", {{"kai.scheduler/queue", "team"}}},
              {"annotations", {{"pod-group-name", group}}},
              {"creationTimestamp", "2027-01-15T08:00:00Z"}}},
            {"spec",
             {{"schedulerName", "kai-scheduler"},
              {"containers",
               Json::array({{{"name", "main"},
                             {"resources",
                              {{"requests", {{"cpu", "1"}}},
                               {"limits", Json{{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}},
            {"status", {{"phase", "Pending"}}}};
  if (!sub_group.empty()) p["metadata"]["labels"]["kai.scheduler/subgroup-name"] = sub_group;
  if (!on.empty()) {
    p["spec"]["nodeName"] = on;
    p["status"]["phase"] = "Running";
  }
  return p;
}

struct Outcome {
  model::ClusterObjects objects;
  CycleResult result;
  /// Pod -> node of its last bind or pipeline decision (a pod consolidation moves is evicted and
  /// pipelined elsewhere).
  std::map<std::string, std::string> placed() const {
    std::map<std::string, std::string> out;
    for (const auto& d : result.decisions) {
      if (d.kind != events::DecisionKind::kEvict) out[d.pod] = d.node;
    }
    return out;
  }
  std::string reasons(const std::string& group) const {
    std::string out;
    for (const auto& u : result.unschedulable) {
      if (u.pod_group != group) continue;
      for (const auto& r : u.reasons) out += r.reason + ": " + r.message + "\n";
    }
    return out;
  }
};

std::unique_ptr<Outcome> run(const Json& items, bool topology_plugin = true) {
  auto c = std::make_unique<Outcome>();
  auto o = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  EXPECT_TRUE(o) << o.message();
  if (o) c->objects = std::move(o).value();
  CycleInput in;
  in.objects = model::ObjectRefs::of(c->objects);
  in.options.now = kNow;
  in.options.seed = 3;
  in.cycle_id = 1;
  if (!topology_plugin) {
    in.options.config = SchedulerConfig::defaults();
    std::erase_if(in.options.config.plugins, [](const PluginConfig& p) { return p.name == "topology"; });
  }
  c->result = run_cycle(in);
  return c;
}

std::string label_of(const Outcome& o, const std::string& node, const std::string& key) {
  for (const auto& n : o.objects.nodes) {
    if (n.meta.name == node) return n.meta.labels.at(key);
  }
  return "";
}

TEST(Topology, TheDocsExampleChoosesTheFullerZoneAndFillsItsFreestRackFirst) {
  Json items = docs_cluster();
  items.push_back(zones_and_racks());
  items.push_back(queue());
  items.push_back(pod_group("train", 3,
                            {{"topology", "cluster-topology"},
                             {"requiredTopologyLevel", "topology.kubernetes.io/zone"},
                             {"preferredTopologyLevel", "topology.kubernetes.io/rack"}}));
  for (int i = 0; i < 3; ++i) items.push_back(pod("train-" + std::to_string(i), "train", 1));
  const auto o = run(items);
  const auto placed = o->placed();
  ASSERT_EQ(placed.size(), 3u) << o->reasons("ns/train");
  std::map<std::string, int> racks;
  for (const auto& [pod, node] : placed) {
    EXPECT_EQ(label_of(*o, node, "topology.kubernetes.io/zone"), "A") << pod << " on " << node;
    ++racks[label_of(*o, node, "topology.kubernetes.io/rack")];
  }
  EXPECT_EQ(racks["A1"], 2) << "rack A1 (the freest) is filled first";
  EXPECT_EQ(racks.size(), 2u) << "two racks, not three";
}

TEST(Topology, AGangNoDomainOfTheRequiredLevelHoldsIsUnschedulableNamingTheLevel) {
  Json items = docs_cluster();
  items.push_back(zones_and_racks());
  items.push_back(queue());
  items.push_back(pod_group("big", 3, {{"topology", "cluster-topology"}, {"requiredTopologyLevel", "rack"}}));
  for (int i = 0; i < 3; ++i) items.push_back(pod("big-" + std::to_string(i), "big", 1));
  const auto o = run(items);
  EXPECT_TRUE(o->placed().empty());
  const std::string why = o->reasons("ns/big");
  EXPECT_NE(why.find("topology cluster-topology, requirement topology.kubernetes.io/rack couldn't be satisfied"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("can allocate only 2 of 3 required pods"), std::string::npos) << why;
}

TEST(Topology, AMissingTopologyOrLevelIsAReasonAndNodesWithoutTheLabelsAreNeverUsed) {
  Json items = docs_cluster();
  items.push_back(zones_and_racks());
  items.push_back(queue());
  items.push_back(node("unlabelled", 8, {}));
  items.push_back(pod_group("nowhere", 1, {{"topology", "missing"}, {"requiredTopologyLevel", "rack"}}));
  items.push_back(pod("nowhere-0", "nowhere", 1));
  items.push_back(pod_group("nolevel", 1, {{"topology", "cluster-topology"}, {"requiredTopologyLevel", "block"}}));
  items.push_back(pod("nolevel-0", "nolevel", 1));
  // Eight GPUs on the unlabelled node would take this gang at once; the constraint keeps it to a zone.
  items.push_back(pod_group("wide", 4, {{"topology", "cluster-topology"}, {"preferredTopologyLevel", "rack"}}));
  for (int i = 0; i < 4; ++i) items.push_back(pod("wide-" + std::to_string(i), "wide", 1));
  const auto o = run(items);
  EXPECT_NE(o->reasons("ns/nowhere").find("Requested topology missing does not exist"), std::string::npos)
      << o->reasons("ns/nowhere");
  EXPECT_NE(o->reasons("ns/nolevel").find("'block' as the required topology constraint level"), std::string::npos)
      << o->reasons("ns/nolevel");
  const auto placed = o->placed();
  EXPECT_EQ(placed.count("ns/nowhere-0") + placed.count("ns/nolevel-0"), 0u);
  int wide = 0;
  for (const auto& [pod, node] : placed) {
    EXPECT_NE(node, "unlabelled") << pod;
    wide += pod.rfind("ns/wide-", 0) == 0;
  }
  EXPECT_EQ(wide, 4);
}

TEST(Topology, AnAliasNamesALevelAndRunningPodsKeepTheirGroupInTheirDomain) {
  Json items = docs_cluster();
  items.push_back(zones_and_racks());
  items.push_back(queue());
  // An elastic group (minMember 1) with one pod running in zone B: its new pods stay in zone B
  // although zone A is fuller.
  items.push_back(pod_group("grow", 1, {{"topology", "cluster-topology"}, {"requiredTopologyLevel", "zone"}}));
  items.push_back(pod("grow-0", "grow", 1, "node-B1-1"));
  items.push_back(pod("grow-1", "grow", 1));
  items.push_back(pod("grow-2", "grow", 1));
  const auto o = run(items);
  const auto placed = o->placed();
  ASSERT_EQ(placed.size(), 2u) << o->reasons("ns/grow");
  for (const auto& [pod, node] : placed) EXPECT_EQ(label_of(*o, node, "topology.kubernetes.io/zone"), "B") << pod;
}

TEST(Topology, EachSubgroupKeepsToItsOwnRackInsideTheGroupsZone) {
  Json items = docs_cluster();
  items.push_back(zones_and_racks());
  items.push_back(queue());
  const Json rack = {{"topology", "cluster-topology"}, {"requiredTopologyLevel", "rack"}};
  items.push_back(pod_group("multi", 4, {{"topology", "cluster-topology"}, {"requiredTopologyLevel", "zone"}},
                            Json::array({{{"name", "a"}, {"minMember", 2}, {"topologyConstraint", rack}},
                                         {{"name", "b"}, {"minMember", 2}, {"topologyConstraint", rack}}})));
  for (const char* sg : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) items.push_back(pod(std::string("multi-") + sg + std::to_string(i), "multi", 1, "", sg));
  }
  const auto o = run(items);
  const auto placed = o->placed();
  ASSERT_EQ(placed.size(), 4u) << o->reasons("ns/multi");
  std::set<std::string> zones;
  std::map<std::string, std::set<std::string>> racks_of;
  for (const auto& [pod, node] : placed) {
    zones.insert(label_of(*o, node, "topology.kubernetes.io/zone"));
    racks_of[pod.substr(0, pod.size() - 1)].insert(label_of(*o, node, "topology.kubernetes.io/rack"));
  }
  EXPECT_EQ(zones.size(), 1u) << "one zone for the whole group";
  EXPECT_EQ(*zones.begin(), "B") << "zone A has a single two-node rack";
  for (const auto& [sg, racks] : racks_of) EXPECT_EQ(racks.size(), 1u) << sg << " spans racks";
}

TEST(Topology, ThreeLevelsRequiredRackPreferredHostKeepsTheGangOnOneNode) {
  // zone / rack / hostname. Rack r1: h1 with 1 of 2 GPUs free, h2 with 2 free; rack r2: h3 with 1
  // of 4 free. A gang of two one-GPU pods requires a rack (only r1 has room for both) and prefers a
  // host: both go to h2, although binpack alone would start on the fuller h1 and split them.
  Json items = Json::array();
  items.push_back(node("h1", 2, {{"topology.kubernetes.io/zone", "z"}, {"topology.kubernetes.io/rack", "r1"}}));
  items.push_back(node("h2", 2, {{"topology.kubernetes.io/zone", "z"}, {"topology.kubernetes.io/rack", "r1"}}));
  items.push_back(node("h3", 4, {{"topology.kubernetes.io/zone", "z"}, {"topology.kubernetes.io/rack", "r2"}}));
  items.push_back(topology("three-levels", {{"topology.kubernetes.io/zone", "zone"},
                                            {"topology.kubernetes.io/rack", "rack"},
                                            {"kubernetes.io/hostname", "host"}}));
  items.push_back(queue());
  for (const auto& [name, gpus, on] : {std::tuple{"busy-1", 1, "h1"}, std::tuple{"busy-3", 3, "h3"}}) {
    Json busy = pod(name, "", gpus, on);
    busy["metadata"]["annotations"] = Json::object();
    items.push_back(busy);
  }
  items.push_back(pod_group("pair", 2,
                            {{"topology", "three-levels"}, {"requiredTopologyLevel", "rack"}, {"preferredTopologyLevel", "host"}}));
  for (int i = 0; i < 2; ++i) items.push_back(pod("pair-" + std::to_string(i), "pair", 1));
  auto o = run(items);
  auto placed = o->placed();
  ASSERT_EQ(placed.size(), 2u) << o->reasons("ns/pair");
  EXPECT_EQ(placed.at("ns/pair-0"), "h2");
  EXPECT_EQ(placed.at("ns/pair-1"), "h2");

  // Without the preferred level the rack still holds the gang, and binpack starts on h1.
  items[items.size() - 3] = pod_group("pair", 2, {{"topology", "three-levels"}, {"requiredTopologyLevel", "rack"}});
  o = run(items);
  placed = o->placed();
  ASSERT_EQ(placed.size(), 2u) << o->reasons("ns/pair");
  EXPECT_EQ(std::set<std::string>({placed.at("ns/pair-0"), placed.at("ns/pair-1")}), std::set<std::string>({"h1", "h2"}));
}

TEST(Topology, WithoutTheTopologyPluginConstraintsAreIgnoredAsInKai) {
  Json items = docs_cluster();
  items.push_back(zones_and_racks());
  items.push_back(queue());
  items.push_back(pod_group("nowhere", 1, {{"topology", "missing"}, {"requiredTopologyLevel", "rack"}}));
  items.push_back(pod("nowhere-0", "nowhere", 1));
  items.push_back(pod_group("big", 3, {{"topology", "cluster-topology"}, {"requiredTopologyLevel", "rack"}}));
  for (int i = 0; i < 3; ++i) items.push_back(pod("big-" + std::to_string(i), "big", 1));
  EXPECT_EQ(run(items)->placed().size(), 0u) << "with the plugin: neither can be placed";
  EXPECT_EQ(run(items, false)->placed().size(), 4u) << "without it: both are";
}

TEST(Topology, ReclaimFreesRoomInsideOneRack) {
  // Racks r1 and r2 of two one-GPU nodes, each node running one pod of queue "other" (no quota);
  // the newest of them (evicted first without topology) sit in different racks. A gang of two in
  // queue "team" (quota 2) requires a rack: its victims must both come from one rack.
  Json items = Json::array();
  for (const char* rack : {"r1", "r2"}) {
    for (const char* n : {"a", "b"}) {
      items.push_back(node(std::string(rack) + "-" + n, 1,
                           {{"topology.kubernetes.io/zone", "z"}, {"topology.kubernetes.io/rack", rack}}));
    }
  }
  items.push_back(zones_and_racks());
  Json team = queue();
  team["spec"]["resources"]["gpu"]["quota"] = 2;
  items.push_back(team);
  Json other = queue();
  other["metadata"] = {{"name", "other"}, {"uid", "uid-other"}};
  other["spec"]["resources"]["gpu"]["quota"] = 0;
  items.push_back(other);
  const std::vector<std::pair<std::string, std::string>> running = {
      {"r1-a", "2027-01-15T08:05:00Z"}, {"r1-b", "2027-01-15T08:01:00Z"},
      {"r2-a", "2027-01-15T08:02:00Z"}, {"r2-b", "2027-01-15T08:06:00Z"}};
  for (const auto& [on, created] : running) {
    Json p = pod("other-" + on, "", 1, on);
    p["metadata"]["labels"]["kai.scheduler/queue"] = "other";
    p["metadata"]["annotations"] = Json::object();
    p["metadata"]["creationTimestamp"] = created;
    items.push_back(p);
  }
  items.push_back(pod_group("gang", 2, {{"topology", "cluster-topology"}, {"requiredTopologyLevel", "rack"}}));
  for (int i = 0; i < 2; ++i) items.push_back(pod("gang-" + std::to_string(i), "gang", 1));
  const auto o = run(items);
  std::set<std::string> victim_racks, gang_racks;
  for (const auto& d : o->result.decisions) {
    const std::string rack = label_of(*o, d.node, "topology.kubernetes.io/rack");
    if (d.kind == events::DecisionKind::kEvict) victim_racks.insert(rack);
    if (d.pod.rfind("ns/gang-", 0) == 0 && d.kind != events::DecisionKind::kEvict) gang_racks.insert(rack);
  }
  ASSERT_EQ(victim_racks.size(), 1u) << o->reasons("ns/gang");
  EXPECT_EQ(gang_racks, victim_racks) << "the gang is pipelined where its victims leave";
}

TEST(Topology, PropertyARequiredLevelAlwaysHoldsTheWholeGang) {
  std::mt19937 rng(17);
  for (int round = 0; round < 40; ++round) {
    Json items = Json::array();
    const int zones = 2 + static_cast<int>(rng() % 3);
    for (int z = 0; z < zones; ++z) {
      const int racks = 1 + static_cast<int>(rng() % 4);
      for (int r = 0; r < racks; ++r) {
        const int nodes = 1 + static_cast<int>(rng() % 3);
        for (int n = 0; n < nodes; ++n) {
          const std::string zone = "z" + std::to_string(z), rack = "r" + std::to_string(r);
          items.push_back(node(zone + rack + "n" + std::to_string(n), 1 + static_cast<int>(rng() % 4),
                               {{"topology.kubernetes.io/zone", zone}, {"topology.kubernetes.io/rack", rack}}));
        }
      }
    }
    items.push_back(zones_and_racks());
    items.push_back(queue());
    const int gangs = 1 + static_cast<int>(rng() % 4);
    std::map<std::string, std::string> level_of;
    for (int g = 0; g < gangs; ++g) {
      const std::string name = "g" + std::to_string(g);
      const std::string level = rng() % 2 ? "zone" : "rack";
      level_of["ns/" + name] = "topology.kubernetes.io/" + level;
      const int size = 1 + static_cast<int>(rng() % 6);
      items.push_back(pod_group(name, size, {{"topology", "cluster-topology"}, {"requiredTopologyLevel", level}}));
      for (int i = 0; i < size; ++i) items.push_back(pod(name + "-" + std::to_string(i), name, 1 + static_cast<int>(rng() % 2)));
    }
    const auto o = run(items);
    std::map<std::string, std::set<std::string>> domains;
    for (const auto& [pod, node] : o->placed()) {
      const std::string group = pod.substr(0, pod.rfind('-'));
      const std::string level = level_of[group];
      // A rack's domain is its zone and its name (racks of two zones may share a name).
      const std::string id = label_of(*o, node, "topology.kubernetes.io/zone") +
                             (level.find("rack") != std::string::npos ? "." + label_of(*o, node, level) : "");
      domains[group].insert(id);
    }
    for (const auto& [group, ids] : domains) EXPECT_EQ(ids.size(), 1u) << "round " << round << " " << group;
  }
}

}  // namespace
}  // namespace kai::core
