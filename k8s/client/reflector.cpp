#include "k8s/client/reflector.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace kai::k8s {

using Json = nlohmann::json;

namespace {

/// The delay of a Retry-After header in seconds ("120"); 0 when absent or not a number of seconds
/// (an HTTP date is not used by the API server and is ignored, as client-go does).
std::chrono::milliseconds retry_after_of(const std::map<std::string, std::string>& headers) {
  const auto it = headers.find("retry-after");
  if (it == headers.end() || it->second.empty() || it->second.size() > 9) return std::chrono::milliseconds(0);
  int64_t seconds = 0;
  for (char c : it->second) {
    if (c < '0' || c > '9') return std::chrono::milliseconds(0);
    seconds = seconds * 10 + (c - '0');
  }
  return std::chrono::seconds(seconds);
}

}  // namespace

Reflector::Reflector(KubeClient& client, ReflectorOptions options, OnEvent on_event, OnError on_error)
    : client_(client), options_(std::move(options)), on_event_(std::move(on_event)), on_error_(std::move(on_error)) {}

Reflector::~Reflector() { stop(); }

void Reflector::start(const std::string& resume_from) {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this, resume_from] { run(resume_from); });
}

void Reflector::stop() {
  stop_ = true;
  {
    std::lock_guard lock(stream_mu_);
    if (stream_) stream_->stop();
  }
  if (thread_.joinable()) thread_.join();
}

std::string Reflector::list_all() {
  Json items = Json::array();
  std::string cont;
  std::string rv;
  bool more = true;
  while (more && !stop_) {
    std::string path = options_.list_path + "?limit=" + std::to_string(options_.page_size);
    if (!cont.empty()) path += "&continue=" + cont;
    ApiResult r = client_.get(path);
    if (!r.ok()) {
      if (r.code == 410 && !cont.empty()) {
        cont.clear();  // the continue token expired: start the list again from the first page
        items = Json::array();
        continue;
      }
      on_error_("listing " + options_.kind + ": " + r.describe());
      return "";
    }
    Json list = Json::parse(r.body, nullptr, false);
    if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
      on_error_("listing " + options_.kind + ": the answer is not a List");
      return "";
    }
    for (auto& item : list["items"]) {
      if (!item.is_object()) continue;
      item["kind"] = options_.kind;  // list items carry no kind
      items.push_back(std::move(item));
    }
    const Json& meta = list.value("metadata", Json::object());
    rv = meta.value("resourceVersion", "");
    cont = meta.value("continue", "");
    more = !cont.empty();
  }
  if (stop_) return "";
  ReflectorEvent ev;
  ev.type = ReflectorEventType::kRelist;
  ev.kind = options_.kind;
  ev.object_json = Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}.dump();
  ev.resource_version = rv;
  on_event_(std::move(ev));
  ++lists_;
  synced_ = true;
  return rv;
}

std::string Reflector::watch_from(const std::string& rv, bool* gone) {
  *gone = false;
  const std::string path = options_.list_path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv +
                           "&timeoutSeconds=" + std::to_string(options_.watch_timeout_seconds);
  auto stream = std::make_shared<http::WatchStream>(client_.config().endpoint, path);
  {
    std::lock_guard lock(stream_mu_);
    stream_ = stream;
  }
  std::string last = rv;
  const int status = stream->status(std::chrono::seconds(30));
  if (status == 429) watch_retry_after_ = retry_after_of(stream->headers());  // run() waits it out
  if (status == 410) {
    *gone = true;
  } else if (status != 200) {
    on_error_(
        "watching " + options_.kind + ": " +
        (status == 0 ? "no answer" + (stream->error().empty() ? "" : ": " + stream->error())
                     : "HTTP " + std::to_string(status)) +
        (status == 429 ? " (Retry-After " + std::to_string(watch_retry_after_.count() / 1000) + " s)" : ""));
  }
  while (status == 200 && !stop_) {
    auto line = stream->next(std::chrono::milliseconds(500));
    if (!line) {
      if (stream->ended()) break;
      continue;
    }
    if (line->size() > options_.max_object_bytes) {
      on_error_("watching " + options_.kind + ": an event of " + std::to_string(line->size()) +
                " bytes exceeds the limit and was skipped");
      continue;
    }
    Json ev = Json::parse(*line, nullptr, false);
    if (!ev.is_object() || !ev.contains("type") || !ev["type"].is_string() || !ev.contains("object") ||
        !ev["object"].is_object()) {
      on_error_("watching " + options_.kind + ": a malformed event was skipped: " + line->substr(0, 200));
      continue;
    }
    const std::string type = ev["type"];
    Json& obj = ev["object"];
    const std::string obj_rv = obj.value("metadata", Json::object()).value("resourceVersion", "");
    if (type == "ERROR") {
      if (obj.value("code", 0) == 410) {
        *gone = true;
      } else {
        on_error_("watching " + options_.kind + ": " + obj.value("message", std::string("error event")));
      }
      break;
    }
    ReflectorEvent out;
    out.kind = options_.kind;
    out.resource_version = obj_rv;
    if (type == "ADDED") {
      out.type = ReflectorEventType::kAdded;
    } else if (type == "MODIFIED") {
      out.type = ReflectorEventType::kModified;
    } else if (type == "DELETED") {
      out.type = ReflectorEventType::kDeleted;
    } else if (type == "BOOKMARK") {
      out.type = ReflectorEventType::kBookmark;
    } else {
      on_error_("watching " + options_.kind + ": unknown event type " + type + " skipped");
      continue;
    }
    if (out.type != ReflectorEventType::kBookmark) {
      obj["kind"] = options_.kind;
      out.object_json = obj.dump();
    }
    if (!obj_rv.empty()) last = obj_rv;
    on_event_(std::move(out));
  }
  stream->stop();
  {
    std::lock_guard lock(stream_mu_);
    stream_.reset();
  }
  return last;
}

void Reflector::run(std::string rv) {
  auto backoff = options_.retry_backoff;
  // Sleeps `wait`, looking every 50 ms whether stop() was called.
  auto sleep = [&](std::chrono::milliseconds wait) {
    for (auto waited = std::chrono::milliseconds(0); waited < wait && !stop_;
         waited += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(
          std::min<std::chrono::milliseconds>(std::chrono::milliseconds(50), wait - waited));
    }
  };
  auto pause = [&] {
    sleep(backoff);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(10));
  };
  while (!stop_) {
    if (rv.empty()) {
      rv = list_all();
      if (rv.empty()) {
        pause();
        continue;
      }
    }
    bool gone = false;
    const auto started = std::chrono::steady_clock::now();
    std::string last = watch_from(rv, &gone);
    if (gone) {
      rv.clear();  // too old: list again
      continue;
    }
    rv = last;
    if (const auto told = std::exchange(watch_retry_after_, std::chrono::milliseconds(0)); told.count() > 0) {
      // 429 with Retry-After: come back when the server said (bounded), not at the backoff's pace.
      sleep(std::min(told, options_.max_retry_after));
      continue;
    }
    // A stream that ended at once (server down, refused) backs off; a long one was healthy.
    if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1)) {
      pause();
    } else {
      backoff = options_.retry_backoff;
    }
  }
}

}  // namespace kai::k8s
