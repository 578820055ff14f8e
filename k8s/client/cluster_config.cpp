#include "k8s/client/cluster_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "k8s/model/base64.hpp"

namespace kai::k8s {

namespace fs = std::filesystem;

namespace {

model::Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return model::Status::error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

model::Result<std::string> base64_decode(const std::string& in, const std::string& field) {
  auto out = model::base64_decode(in);
  if (!out.is_ok()) return model::Status::error(field + ": " + out.message());
  return out;
}

/// Splits "https://host:port/path" into the endpoint's host, port and TLS flag.
model::Status parse_server(const std::string& server, http::Endpoint& ep) {
  std::string rest = server;
  if (rest.rfind("https://", 0) == 0) {
    ep.tls = true;
    rest = rest.substr(8);
  } else if (rest.rfind("http://", 0) == 0) {
    ep.tls = false;
    rest = rest.substr(7);
  } else {
    return model::Status::error("server \"" + server + "\" must start with https:// or http://");
  }
  rest = rest.substr(0, rest.find('/'));
  std::string host = rest;
  std::string port = ep.tls ? "443" : "80";
  if (!rest.empty() && rest[0] == '[') {  // [ipv6]:port
    const size_t close = rest.find(']');
    if (close == std::string::npos) return model::Status::error("server \"" + server + "\": bad IPv6 address");
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') port = rest.substr(close + 2);
  } else if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (host.empty() || end == port.c_str() || *end != '\0' || p <= 0 || p > 65535) {
    return model::Status::error("server \"" + server + "\": bad host or port");
  }
  ep.host = host;
  ep.port = static_cast<uint16_t>(p);
  return model::Status::ok();
}

/// A PEM value from `<field>-data` (base64) or `<field>` (a path relative to the kubeconfig).
model::Result<std::string> pem_of(const YAML::Node& node, const std::string& field, const fs::path& base,
                                  const std::string& where) {
  if (node[field + "-data"]) return base64_decode(node[field + "-data"].as<std::string>(), where + "." + field + "-data");
  if (node[field]) {
    fs::path p = node[field].as<std::string>();
    if (p.is_relative()) p = base / p;
    auto text = read_file(p.string());
    if (!text.is_ok()) return model::Status::error(where + "." + field + ": " + text.message());
    return text;
  }
  return std::string();
}

/// One cluster, context or user entry and the kubeconfig file it came from: the relative paths in it
/// are relative to that file, and its errors name that file.
struct Entry {
  YAML::Node node;  ///< The entry's `cluster` / `context` / `user` map (undefined when missing).
  std::string file;
};

/// Kubeconfig files merged as kubectl merges the files of $KUBECONFIG: the first file to set a map
/// key (a cluster, context or user name; current-context) wins, and later files never change it.
/// Entries are taken whole from one file, never merged field by field.
struct Merged {
  std::vector<std::string> files;  ///< The files read, in order.
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> contexts;
  std::map<std::string, Entry> users;
  std::string current_context;
};

/// Adds one kubeconfig file to `m`. An empty file adds nothing.
model::Status merge_file(const std::string& path, Merged& m) {
  auto text = read_file(path);
  if (!text.is_ok()) return text.status();
  try {
    const YAML::Node root = YAML::Load(text.value());
    m.files.push_back(path);
    if (root.IsNull()) return model::Status::ok();
    if (!root.IsMap()) return model::Status::error(path + ": not a valid kubeconfig: not a map");
    auto add = [&](const char* list, const char* inner, std::map<std::string, Entry>& into) {
      const YAML::Node items = root[list];
      if (!items || !items.IsSequence()) return;
      for (const auto& item : items) {
        if (!item.IsMap() || !item["name"] || !item["name"].IsScalar()) continue;
        into.emplace(item["name"].as<std::string>(), Entry{item[inner], path});  // the first one wins
      }
    };
    add("clusters", "cluster", m.clusters);
    add("contexts", "context", m.contexts);
    add("users", "user", m.users);
    if (m.current_context.empty() && root["current-context"] && root["current-context"].IsScalar()) {
      m.current_context = root["current-context"].as<std::string>();
    }
    return model::Status::ok();
  } catch (const YAML::Exception& e) {
    return model::Status::error(path + ": not a valid kubeconfig: " + e.what());
  }
}

/// The configuration of context `context_name` (or the current one) of merged files; `files` names
/// them in errors and in the source.
model::Result<ClusterConfig> config_of(const Merged& m, const std::string& context_name,
                                       const std::string& files) {
  try {
    const std::string ctx_name = !context_name.empty() ? context_name : m.current_context;
    if (ctx_name.empty()) return model::Status::error(files + ": no current-context");
    const auto ctx_it = m.contexts.find(ctx_name);
    if (ctx_it == m.contexts.end() || !ctx_it->second.node) {
      return model::Status::error(files + ": context \"" + ctx_name + "\" not found");
    }
    const YAML::Node& ctx = ctx_it->second.node;
    const std::string& ctx_file = ctx_it->second.file;
    const std::string cluster_name = ctx["cluster"] ? ctx["cluster"].as<std::string>() : "";
    const std::string user_name = ctx["user"] ? ctx["user"].as<std::string>() : "";
    const auto cluster_it = m.clusters.find(cluster_name);
    if (cluster_it == m.clusters.end() || !cluster_it->second.node || !cluster_it->second.node["server"]) {
      return model::Status::error(ctx_file + ": cluster \"" + cluster_name + "\" not found or has no server");
    }
    const YAML::Node& cluster = cluster_it->second.node;
    const std::string& cluster_file = cluster_it->second.file;
    const fs::path cluster_base = fs::path(cluster_file).parent_path();
    ClusterConfig c;
    c.source = "kubeconfig " + files + " (context " + ctx_name + ")";
    if (ctx["namespace"]) c.default_namespace = ctx["namespace"].as<std::string>();
    if (auto s = parse_server(cluster["server"].as<std::string>(), c.endpoint); !s) {
      return model::Status::error(cluster_file + ": clusters[" + cluster_name + "]." + s.message());
    }
    c.endpoint.insecure_skip_verify = cluster["insecure-skip-tls-verify"] && cluster["insecure-skip-tls-verify"].as<bool>();
    auto ca = pem_of(cluster, "certificate-authority", cluster_base, "clusters[" + cluster_name + "]");
    if (!ca.is_ok()) return model::Status::error(cluster_file + ": " + ca.message());
    c.endpoint.ca_pem = ca.value();
    const auto user_it = m.users.find(user_name);
    if (user_it != m.users.end() && user_it->second.node) {
      const YAML::Node& user = user_it->second.node;
      const std::string& path = user_it->second.file;
      const fs::path base = fs::path(path).parent_path();
      if (user["token"]) c.endpoint.token = user["token"].as<std::string>();
      if (user["tokenFile"]) {
        // Relative to the kubeconfig, as client-go resolves every file reference in it.
        fs::path token_path = user["tokenFile"].as<std::string>();
        if (token_path.is_relative()) token_path = base / token_path;
        const std::string file = token_path.string();
        // Read once now, so that a wrong path is an error at start and not a stream of 401s.
        if (auto t = read_file(file); !t.is_ok()) {
          return model::Status::error(path + ": users[" + user_name + "].tokenFile: " + t.message());
        }
        c.endpoint.token_source = [file] {
          auto t = read_file(file);
          std::string s = t.is_ok() ? t.value() : "";
          while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
          return s;
        };
      }
      auto cert = pem_of(user, "client-certificate", base, "users[" + user_name + "]");
      auto key = pem_of(user, "client-key", base, "users[" + user_name + "]");
      if (!cert.is_ok()) return model::Status::error(path + ": " + cert.message());
      if (!key.is_ok()) return model::Status::error(path + ": " + key.message());
      if (cert.value().empty() != key.value().empty()) {
        return model::Status::error(path + ": users[" + user_name + "]: a client certificate needs its key and back");
      }
      c.endpoint.client_cert_pem = cert.value();
      c.endpoint.client_key_pem = key.value();
      if (user["exec"] || user["auth-provider"]) {
        return model::Status::error(path + ": users[" + user_name +
                                    "]: exec and auth-provider credentials are not supported; use a token or a client "
                                    "certificate");
      }
    }
    return c;
  } catch (const YAML::Exception& e) {
    return model::Status::error(files + ": not a valid kubeconfig: " + e.what());
  }
}

/// Whitespace off both ends (a file written with `echo` ends in a newline).
std::string trimmed(const std::string& s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

model::Result<ClusterConfig> load_kubeconfig(const std::string& path, const std::string& context_name) {
  Merged m;
  if (auto s = merge_file(path, m); !s) return s;
  return config_of(m, context_name, path);
}

model::Result<ClusterConfig> load_kubeconfig_list(const std::string& paths, const std::string& context_name) {
  std::vector<std::string> listed;
  for (size_t i = 0; i <= paths.size();) {
    size_t j = paths.find(':', i);
    if (j == std::string::npos) j = paths.size();
    std::string p = paths.substr(i, j - i);
    if (!p.empty() && std::find(listed.begin(), listed.end(), p) == listed.end())
      listed.push_back(std::move(p));
    i = j + 1;
  }
  Merged m;
  for (const auto& p : listed) {
    std::error_code ec;
    if (!fs::exists(p, ec)) continue;  // kubectl skips the listed files that do not exist
    if (auto s = merge_file(p, m); !s) return s;
  }
  if (m.files.empty()) {
    return model::Status::error("kubeconfig \"" + paths + "\": none of the listed files exists");
  }
  std::string files;
  for (const auto& f : m.files) files += (files.empty() ? "" : ":") + f;
  return config_of(m, context_name, files);
}

model::Result<ClusterConfig> in_cluster_config(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr) {
    return model::Status::error("not running in a cluster: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT are not set");
  }
  const std::string dir = root + "/var/run/secrets/kubernetes.io/serviceaccount";
  ClusterConfig c;
  c.source = "in-cluster";
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  if (auto s = parse_server("https://" + h + ":" + port, c.endpoint); !s) return s;
  auto ca = read_file(dir + "/ca.crt");
  if (!ca.is_ok()) return model::Status::error("in-cluster: " + ca.message());
  c.endpoint.ca_pem = ca.value();
  const std::string token_file = dir + "/token";
  if (!fs::exists(token_file)) return model::Status::error("in-cluster: cannot read " + token_file);
  // The kubelet rotates projected tokens; read the file again (at most once a minute).
  struct Cache {
    std::mutex mu;
    std::string token;
    std::chrono::steady_clock::time_point read_at{};
  };
  auto cache = std::make_shared<Cache>();
  c.endpoint.token_source = [cache, token_file] {
    std::lock_guard lock(cache->mu);
    const auto now = std::chrono::steady_clock::now();
    if (cache->token.empty() || now - cache->read_at > std::chrono::minutes(1)) {
      auto t = read_file(token_file);
      if (t.is_ok()) {
        std::string s = t.value();
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
        cache->token = s;
        cache->read_at = now;
      }
    }
    return cache->token;
  };
  if (auto ns = read_file(dir + "/namespace"); ns.is_ok() && !trimmed(ns.value()).empty()) {
    c.default_namespace = trimmed(ns.value());
  }
  return c;
}

model::Result<ClusterConfig> resolve_cluster_config(const std::string& kubeconfig_flag) {
  if (!kubeconfig_flag.empty()) return load_kubeconfig(kubeconfig_flag);
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    auto c = load_kubeconfig_list(env);
    if (!c.is_ok()) return model::Status::error("$KUBECONFIG: " + c.message());
    return c;
  }
  if (std::getenv("KUBERNETES_SERVICE_HOST") != nullptr) return in_cluster_config();
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    const std::string path = std::string(home) + "/.kube/config";
    if (fs::exists(path)) return load_kubeconfig(path);
  }
  return model::Status::error("no cluster configuration: pass --kubeconfig, set KUBECONFIG, or run in a cluster");
}

}  // namespace kai::k8s
