// Router: authentication, injected faults and the cost model, the test controls (/debug/...) and
// the resource endpoints, dispatched to the Store. Discovery and OpenAPI are in router_discovery.cpp,
// the reading of requests in request_io.cpp.
#include "k8s/apiserver/router.hpp"

#include <algorithm>
#include <set>

#include "k8s/apiserver/request_io.hpp"
#include "k8s/apiserver/table.hpp"

namespace kai::apiserver {

Router::Router(ServerOptions options, std::string token)
    : options_(std::move(options)),
      token_(std::move(token)),
      store_(StoreOptions{options_.history_limit, options_.bookmark_interval, options_.kubelet,
                          options_.kubelet_delay, options_.kubelet_reserves_gpus}),
      cost_(options_.cost) {}

void Router::set_faults(const Faults& f) {
  std::lock_guard lock(mu_);
  faults_ = f;
}

void Router::set_cost_model(const CostModel& c) {
  std::lock_guard lock(mu_);
  cost_ = c;
  slots_.clear();
}

std::map<std::string, uint64_t> Router::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

std::vector<RequestAttributes> Router::requests_seen() const {
  std::lock_guard lock(mu_);
  return {seen_.begin(), seen_.end()};
}

void Router::reset_counts() {
  std::lock_guard lock(mu_);
  counts_.clear();
  seen_.clear();
}

void Router::count(const std::string& verb, const ResourceInfo& r, const std::string& sub, const std::string& ns,
                   const std::string& name) {
  const std::string qualified = sub.empty() ? r.qualified() : r.qualified() + "/" + sub;
  const bool unnamed = verb == "list" || verb == "watch" || (verb == "create" && sub.empty());
  std::lock_guard lock(mu_);
  ++counts_[verb + " " + qualified];
  ++counts_["total"];
  seen_.insert(RequestAttributes{verb, r.group, sub.empty() ? r.resource : r.resource + "/" + sub, ns,
                                 unnamed ? "" : name});
}

bool Router::fault_applies(const std::string& path) const {
  if (path.rfind("/api/", 0) != 0 && path.rfind("/apis/", 0) != 0) return false;
  return faults_.match.empty() || path.find(faults_.match) != std::string::npos;
}

std::chrono::microseconds Router::delay_for(const HttpRequest& req) {
  const std::string path = req.target.substr(0, req.target.find('?'));
  if (path.rfind("/debug/", 0) == 0) return std::chrono::microseconds{0};
  std::lock_guard lock(mu_);
  std::chrono::microseconds d{0};
  if (fault_applies(path) && faults_.delay.count() > 0) {
    d += faults_.delay;
    ++counts_["delayed"];  // counted on arrival: a test can act while the request is in flight
  }
  if (cost_.service_time.count() > 0) {
    // M/D/k: the request takes the server that frees first and leaves service_time later.
    const auto now = std::chrono::steady_clock::now();
    if (cost_.max_in_flight <= 0) return d + cost_.service_time;
    if (slots_.size() != static_cast<size_t>(cost_.max_in_flight)) slots_.assign(cost_.max_in_flight, now);
    auto slot = std::min_element(slots_.begin(), slots_.end());
    const auto begin = std::max(now, *slot);
    *slot = begin + cost_.service_time;
    d += std::chrono::duration_cast<std::chrono::microseconds>(*slot - now);
  }
  return d;
}

HttpResponse Router::handle(const HttpRequest& req) {
  const size_t q = req.target.find('?');
  const std::string path = req.target.substr(0, q);
  const auto query = parse_query(q == std::string::npos ? "" : req.target.substr(q + 1));
  try {
    static const std::set<std::string> kPublic = {"/healthz", "/readyz", "/livez", "/version"};
    if (!kPublic.count(path) && req.authorization != "Bearer " + token_) {
      return json_response(401, ApiError(401, "Unauthorized", "Unauthorized").status());
    }
    if (path.rfind("/debug/", 0) == 0) return debug(req, path);
    if (req.body.size() > options_.max_body_bytes) {
      throw ApiError(413, "RequestEntityTooLarge",
                     "Request entity too large: limit is " + std::to_string(options_.max_body_bytes));
    }
    bool fault_410 = false;
    bool mid_body = false;
    bool no_answer = false;
    bool close_after = false;
    {
      std::lock_guard lock(mu_);
      if (fault_applies(path)) {
        if (faults_.too_many_requests > 0) {
          --faults_.too_many_requests;
          HttpResponse r = json_response(
              429, ApiError(429, "TooManyRequests", "Too many requests, please try again later.",
                            Json{{"retryAfterSeconds", faults_.retry_after_seconds}})
                       .status());
          r.headers.emplace_back("Retry-After", std::to_string(faults_.retry_after_seconds));
          return r;
        }
        if (faults_.internal_errors > 0) {
          --faults_.internal_errors;
          return json_response(
              500, ApiError(500, "InternalError", "Internal error occurred: injected fault").status());
        }
        const bool watch = is_true(query, "watch") || path.find("/watch/") != std::string::npos;
        if (watch && faults_.expire_watches > 0) {
          --faults_.expire_watches;
          fault_410 = true;
        }
        if (!watch && faults_.close_mid_body > 0) {
          --faults_.close_mid_body;
          mid_body = true;
        }
        if (!watch && faults_.close_without_answer > 0) {
          --faults_.close_without_answer;
          no_answer = true;
        }
        if (!watch && faults_.close_after_answer > 0) {
          --faults_.close_after_answer;
          close_after = true;
        }
      }
    }
    HttpResponse r = dispatch(req, path, query);
    if (fault_410 && r.start_stream) {
      r.start_stream = [](const WatchSink& sink) -> uint64_t {
        Json ev = {{"type", "ERROR"},
                   {"object", ApiError(410, "Expired", "too old resource version: injected fault").status()}};
        sink.push(std::make_shared<const std::string>(ev.dump() + "\n"));
        sink.close();
        return 0;
      };
    }
    r.close_mid_body = mid_body;
    r.close_without_answer = no_answer;
    r.close_after_answer = close_after;
    return r;
  } catch (const ApiError& e) {
    return error_response(e);
  } catch (const std::exception& e) {
    return error_response(
        ApiError(500, "InternalError", std::string("Internal error occurred: ") + e.what()));
  }
}

// ------------------------------------------------------------------------------------ test controls

HttpResponse Router::debug(const HttpRequest& req, const std::string& path) {
  if (path == "/debug/counters") {
    if (req.method == "DELETE") {
      reset_counts();
      return json_response(200, Json::object());
    }
    return json_response(200, Json(counts()));
  }
  if (req.method != "POST") throw method_not_allowed();
  Json body = req.body.empty() ? Json::object() : Json::parse(req.body, nullptr, false);
  if (!body.is_object()) throw bad_request("the body must be a JSON object");
  if (path == "/debug/faults") {
    Faults f;
    f.match = body.value("match", "");
    f.delay = std::chrono::milliseconds(body.value("delayMs", 0));
    f.too_many_requests = body.value("tooManyRequests", 0);
    f.retry_after_seconds = body.value("retryAfterSeconds", 1);
    f.internal_errors = body.value("internalErrors", 0);
    f.expire_watches = body.value("expireWatches", 0);
    f.close_mid_body = body.value("closeMidBody", 0);
    f.close_without_answer = body.value("closeWithoutAnswer", 0);
    f.close_after_answer = body.value("closeAfterAnswer", 0);
    set_faults(f);
  } else if (path == "/debug/drop-watches") {
    store_.drop_watches();
  } else if (path == "/debug/compact") {
    store_.compact_history();
  } else if (path == "/debug/cost") {
    set_cost_model(CostModel{std::chrono::microseconds(body.value("serviceTimeUs", int64_t{0})),
                             body.value("maxInFlight", 0)});
  } else if (path == "/debug/kubelet") {
    store_.set_kubelet(body.value("enabled", true));
  } else {
    throw path_not_found();
  }
  return json_response(200, Json::object());
}

// ------------------------------------------------------------------------------------ resources

HttpResponse Router::dispatch(const HttpRequest& req, const std::string& path,
                              const std::map<std::string, std::string>& query) {
  if (req.method == "GET") {
    bool handled = false;
    HttpResponse d = discovery(path, handled);
    if (handled) return d;
    if (path.rfind("/openapi/v3", 0) == 0) {
      HttpResponse o = openapi(path, handled);
      if (handled) return o;
    }
  }
  auto seg = split_path(path);
  std::string group, version;
  size_t i = 0;
  if (seg.size() >= 3 && seg[0] == "api") {
    version = seg[1];
    i = 2;
  } else if (seg.size() >= 4 && seg[0] == "apis") {
    group = seg[1];
    version = seg[2];
    i = 3;
  } else {
    throw path_not_found();
  }
  std::vector<std::string> rest(seg.begin() + static_cast<long>(i), seg.end());
  bool watch = is_true(query, "watch");
  if (!rest.empty() && rest[0] == "watch") {
    watch = true;
    rest.erase(rest.begin());
  }
  std::string ns;
  if (rest.size() >= 3 && rest[0] == "namespaces" &&
      !(rest.size() == 3 && (rest[2] == "status" || rest[2] == "finalize"))) {
    ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty() || rest.size() > 3) throw path_not_found();
  auto info = store_.find(group, version, rest[0]);
  if (!info) throw path_not_found();
  const ResourceInfo& r = *info;
  if (!r.namespaced && !ns.empty()) throw path_not_found();
  const std::string name = rest.size() >= 2 ? rest[1] : "";
  const std::string sub = rest.size() == 3 ? rest[2] : "";
  if (!sub.empty()) {
    const bool known = (sub == "status" && r.has_status) ||
                       (r.kind == "Pod" && r.group.empty() && (sub == "binding" || sub == "eviction"));
    if (!known) throw path_not_found();
  }
  const bool dry_run = query_or(query, "dryRun") == "All";
  if (query.count("dryRun") && !dry_run) {
    throw bad_request("dryRun: Unsupported value: \"" + query_or(query, "dryRun") +
                      "\": supported values: \"All\"");
  }

  ListOptions opt;
  opt.label_selector = query_or(query, "labelSelector");
  opt.field_selector = query_or(query, "fieldSelector");
  opt.resource_version = query_or(query, "resourceVersion");
  opt.continue_token = query_or(query, "continue");
  opt.allow_bookmarks = is_true(query, "allowWatchBookmarks");
  try {
    opt.limit = std::stoll(query_or(query, "limit", "0"));
    opt.timeout_seconds = std::stoll(query_or(query, "timeoutSeconds", "0"));
  } catch (const std::exception&) {
    throw bad_request("limit and timeoutSeconds must be integers");
  }

  // kubectl asks for server-side printing first; JSON stays the fallback.
  const bool table = req.accept.find("as=Table") != std::string::npos && sub.empty();
  if (req.method == "GET") {
    if (!name.empty() && !watch) {
      count("get", r, sub, ns, name);
      return json_response(200, table ? to_table(r, store_.get(r, ns, name)) : store_.get(r, ns, name));
    }
    if (!name.empty())
      opt.field_selector =
          "metadata.name=" + name + (opt.field_selector.empty() ? "" : "," + opt.field_selector);
    if (watch) {
      count("watch", r, sub, ns, name);
      opt.table = table;
      // Parse selectors now so that a bad one is a 400 before the stream starts.
      (void)LabelSelector::parse(opt.label_selector);
      (void)FieldSelector::parse(opt.field_selector, r.kind);
      HttpResponse resp;
      resp.stream_timeout_seconds = opt.timeout_seconds;
      resp.start_stream = [this, info, ns, opt](const WatchSink& sink) -> uint64_t {
        try {
          return store_.watch(*info, ns, opt, sink);
        } catch (const ApiError& e) {
          sink.push(std::make_shared<const std::string>(
              Json{{"type", "ERROR"}, {"object", e.status()}}.dump() + "\n"));
          sink.close();
          return 0;
        }
      };
      return resp;
    }
    count("list", r, sub, ns, name);
    if (table) return json_response(200, to_table(r, store_.list(r, ns, opt)));
    HttpResponse listed;
    listed.status = 200;
    listed.body = store_.list_body(r, ns, opt);
    return listed;
  }
  if (req.method == "POST") {
    if (name.empty()) {
      count("create", r, sub, ns, name);
      return json_response(201, store_.create(r, ns, parse_body(req), dry_run));
    }
    count("create", r, sub, ns, name);
    if (sub == "binding") return json_response(201, store_.bind(ns, name, parse_body(req)));
    if (sub == "eviction") return json_response(201, store_.evict(ns, name, parse_body(req)));
    throw method_not_allowed();
  }
  if (req.method == "PUT") {
    if (name.empty() || sub == "binding" || sub == "eviction") throw method_not_allowed();
    count("update", r, sub, ns, name);
    return json_response(200, store_.update(r, ns, name, parse_body(req), sub, dry_run));
  }
  if (req.method == "PATCH") {
    if (name.empty() || sub == "binding" || sub == "eviction") throw method_not_allowed();
    count("patch", r, sub, ns, name);
    const std::string ct = req.content_type.substr(0, req.content_type.find(';'));
    return json_response(200, store_.patch(r, ns, name, ct, req.body, sub, dry_run));
  }
  if (req.method == "DELETE") {
    if (!sub.empty()) throw method_not_allowed();
    Json options = Json::object();
    if (!req.body.empty()) {
      options = Json::parse(req.body, nullptr, false);
      if (!options.is_object()) throw bad_request("the DeleteOptions body could not be decoded");
    }
    if (query.count("gracePeriodSeconds")) {
      try {
        options["gracePeriodSeconds"] = std::stoll(query.at("gracePeriodSeconds"));
      } catch (const std::exception&) {
        throw bad_request("gracePeriodSeconds must be an integer");
      }
    }
    if (name.empty()) {
      count("deletecollection", r, sub, ns, "");
      opt.limit = 0;
      Json listed = store_.list(r, ns, opt);
      for (const auto& item : listed["items"]) {
        try {
          store_.remove(r, item["metadata"].value("namespace", ""), item["metadata"].value("name", ""),
                        options);
        } catch (const ApiError& e) {
          if (e.code != 404) throw;
        }
      }
      listed["items"] = Json::array();
      return json_response(200, listed);
    }
    count("delete", r, sub, ns, name);
    return json_response(200, store_.remove(r, ns, name, options, dry_run));
  }
  throw method_not_allowed();
}

}  // namespace kai::apiserver
