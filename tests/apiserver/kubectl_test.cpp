// kubectl round trips over HTTPS with the written kubeconfig: create -f, get -o json / custom
// columns, label, annotate, apply (create, then a strategic / merge patch), delete. Skipped with a
// reason when kubectl is absent or older than 1.27.

#include <filesystem>
#include <fstream>

#include "tests/apiserver/fixture.hpp"
#include "tests/shell/kubectl.hpp"

namespace kai::apiserver {
namespace {

using Cmd = test_shell::CommandRun;
using test_shell::kubectl_unusable;
using test_shell::run;

class Kubectl : public ApiServerTest {
 protected:
  void SetUp() override {
    if (std::string why = kubectl_unusable(); !why.empty()) GTEST_SKIP() << why;
    ApiServerTest::SetUp();
    dir_ = std::filesystem::path(server_->kubeconfig_path()).parent_path().string();
  }
  Cmd kubectl(const std::string& args) {
    return run("kubectl --kubeconfig " + server_->kubeconfig_path() + " --cache-dir " + dir_ + "/cache " +
               args);
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

const char* kManifest = R"(apiVersion: v1
kind: Pod
metadata:
  name: p1
  labels: {app: demo}
spec:
  schedulerName: kai-scheduler
  containers:
  - name: main
    image: busybox
    env: [{name: A, value: "1"}]
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: q1
spec:
  priority: 5
)";

TEST_F(Kubectl, CreateGetLabelAnnotateDelete) {
  const std::string file = write("m.yaml", kManifest);
  Cmd c = kubectl("create -f " + file);
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_NE(c.out.find("pod/p1 created"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("queue.scheduling.run.ai/q1 created"), std::string::npos) << c.out;
  Cmd g = kubectl("get pod p1 -o json");
  ASSERT_EQ(g.code, 0) << g.out;
  Json pod = Json::parse(g.out, nullptr, false);
  EXPECT_EQ(pod["metadata"]["name"], "p1");
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  Cmd l = kubectl("label pod p1 tier=web");
  ASSERT_EQ(l.code, 0) << l.out;
  Cmd a = kubectl("annotate queue q1 owner=me");
  ASSERT_EQ(a.code, 0) << a.out;
  EXPECT_EQ(get("/api/v1/namespaces/default/pods/p1")["metadata"]["labels"]["tier"], "web");
  EXPECT_EQ(get("/apis/scheduling.run.ai/v2/queues/q1")["metadata"]["annotations"]["owner"], "me");
  Cmd cols = kubectl("get pods -o custom-columns=NAME:.metadata.name,SCHED:.spec.schedulerName --no-headers");
  EXPECT_NE(cols.out.find("p1"), std::string::npos) << cols.out;
  EXPECT_NE(cols.out.find("kai-scheduler"), std::string::npos) << cols.out;
  // Server-side printing (Table): pod columns and the CRD's printer columns.
  Cmd table = kubectl("get pods");
  EXPECT_NE(table.out.find("STATUS"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Pending"), std::string::npos) << table.out;
  Cmd qtable = kubectl("get queues");
  EXPECT_NE(qtable.out.find("PRIORITY"), std::string::npos) << qtable.out;
  Cmd y = kubectl("get queues -o yaml");
  EXPECT_NE(y.out.find("priority: 5"), std::string::npos) << y.out;
  Cmd d = kubectl("delete pod p1");
  ASSERT_EQ(d.code, 0) << d.out;
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods/p1").status, 404);
  Cmd dq = kubectl("delete -f " + file + " --ignore-not-found");
  EXPECT_EQ(dq.code, 0) << dq.out;
  EXPECT_EQ(req("GET", "/apis/scheduling.run.ai/v2/queues/q1").status, 404);
}

TEST_F(Kubectl, RuntimeClassesAreServedAndAPodMayNameOnlyOneThatExists) {
  const std::string pod_file = write("p.yaml", R"(apiVersion: v1
kind: Pod
metadata:
  name: gpu
spec:
  runtimeClassName: nvidia
  containers:
  - name: main
    image: busybox
)");
  Cmd rejected = kubectl("create -f " + pod_file);
  EXPECT_NE(rejected.code, 0);
  EXPECT_NE(rejected.out.find("pods \"gpu\" is forbidden: pod rejected: RuntimeClass \"nvidia\" not found"),
            std::string::npos)
      << rejected.out;
  Cmd rc = kubectl("create -f " + write("rc.yaml", R"(apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
)"));
  ASSERT_EQ(rc.code, 0) << rc.out;
  EXPECT_NE(rc.out.find("runtimeclass.node.k8s.io/nvidia created"), std::string::npos) << rc.out;
  Cmd list = kubectl("get runtimeclasses");
  EXPECT_NE(list.out.find("nvidia"), std::string::npos) << list.out;
  Cmd created = kubectl("create -f " + pod_file);
  EXPECT_EQ(created.code, 0) << created.out;
}

TEST_F(Kubectl, ApplyCreatesThenPatches) {
  const std::string file = write("m.yaml", kManifest);
  Cmd first = kubectl("apply -f " + file);
  ASSERT_EQ(first.code, 0) << first.out;
  std::string changed = kManifest;
  changed.replace(changed.find("{app: demo}"), 11, "{app: demo, v: \"2\"}");
  changed.replace(changed.find("[{name: A, value: \"1\"}]"), 23,
                  "[{name: A, value: \"1\"}, {name: B, value: \"2\"}]");
  changed.replace(changed.find("priority: 5"), 11, "priority: 9");
  Cmd second = kubectl("apply -f " + write("m2.yaml", changed));
  EXPECT_EQ(second.code, 1) << "the pod part fails: " << second.out;
  EXPECT_NE(second.out.find("queue.scheduling.run.ai/q1 configured"), std::string::npos) << second.out;
  // The pod's env change is rejected (pod spec is immutable), as on a real server; its labels apply.
  Json pod = get("/api/v1/namespaces/default/pods/p1");
  EXPECT_EQ(get("/apis/scheduling.run.ai/v2/queues/q1")["spec"]["priority"], 9);
  EXPECT_NE(second.out.find("Forbidden: pod updates may not change fields"), std::string::npos) << second.out;
  // A label-only change applies through a strategic merge patch.
  std::string labels_only = kManifest;
  labels_only.replace(labels_only.find("{app: demo}"), 11, "{app: demo, v: \"3\"}");
  Cmd third = kubectl("apply -f " + write("m3.yaml", labels_only));
  EXPECT_EQ(third.code, 0) << third.out;
  EXPECT_EQ(get("/api/v1/namespaces/default/pods/p1")["metadata"]["labels"]["v"], "3");
  EXPECT_EQ(pod["spec"]["containers"][0]["env"].size(), 1u);
}

}  // namespace
}  // namespace kai::apiserver
