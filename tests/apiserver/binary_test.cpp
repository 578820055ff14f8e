// The standalone kai-apiserver process: starts, prints where its kubeconfig is, serves HTTPS with the
// CRDs loaded, and exits cleanly on SIGTERM (what failover tests and the demo rely on).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "tests/apiserver/fixture.hpp"

namespace kai::apiserver {
namespace {

TEST(Binary, ServesAndStopsOnSigterm) {
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const std::string crds = source_dir() + "/deploy/crds";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::execl(KAI_APISERVER_BIN, KAI_APISERVER_BIN, "--crd-dir", crds.c_str(), "--token", "t0ken", nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  FILE* f = ::fdopen(out[0], "r");
  std::map<std::string, std::string> printed;
  char line[512];
  while (printed.size() < 4 && std::fgets(line, sizeof line, f) != nullptr) {
    std::string s(line);
    const size_t colon = s.find(": ");
    if (colon != std::string::npos) printed[s.substr(0, colon)] = s.substr(colon + 2, s.size() - colon - 3);
  }
  ASSERT_TRUE(printed.count("kubeconfig") && printed.count("https") && printed.count("ca")) << printed.size();
  std::ifstream kc(printed["kubeconfig"]);
  std::string text((std::istreambuf_iterator<char>(kc)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("token: t0ken"), std::string::npos);
  http::Endpoint ep;
  ep.port = static_cast<uint16_t>(std::stoi(printed["https"].substr(printed["https"].rfind(':') + 1)));
  ep.ca_file = printed["ca"];
  ep.token = "t0ken";
  auto r = http::HttpClient(ep).request("GET", "/apis/scheduling.run.ai/v2/queues");
  EXPECT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::fclose(f);
}

}  // namespace
}  // namespace kai::apiserver
