#include "k8s/client/reflector.hpp"

#include "k8s/client/watch_line.hpp"

#include <nlohmann/json.hpp>

namespace kai::k8s {

using Json = nlohmann::json;

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
  if (status == 410) {
    *gone = true;
  } else if (status != 200) {
    on_error_("watching " + options_.kind + ": " +
              (status == 0 ? "no answer" + (stream->error().empty() ? "" : ": " + stream->error())
                           : "HTTP " + std::to_string(status)));
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
    auto scanned = scan_watch_line(*line);
    if (!scanned) {
      const std::string& why = scanned.message();
      on_error_("watching " + options_.kind + ": " +
                (why.rfind("unknown event type", 0) == 0 ? why + " skipped"
                                                          : "a malformed event was skipped (" + why +
                                                                "): " + line->substr(0, 200)));
      continue;
    }
    const WatchLine& ev = *scanned;
    if (ev.type == WatchLineType::kError) {
      if (ev.error_code == 410) {
        *gone = true;
      } else {
        on_error_("watching " + options_.kind + ": " +
                  (ev.error_message.empty() ? std::string("error event") : ev.error_message));
      }
      break;
    }
    ReflectorEvent out;
    out.kind = options_.kind;
    out.resource_version = ev.resource_version;
    switch (ev.type) {
      case WatchLineType::kAdded: out.type = ReflectorEventType::kAdded; break;
      case WatchLineType::kModified: out.type = ReflectorEventType::kModified; break;
      case WatchLineType::kDeleted: out.type = ReflectorEventType::kDeleted; break;
      default: out.type = ReflectorEventType::kBookmark; break;
    }
    // Handed on as received: the consumer's decoder takes an object without `kind` as this kind.
    if (out.type != ReflectorEventType::kBookmark) out.object_json = std::string(ev.object);
    if (!ev.resource_version.empty()) last = ev.resource_version;
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
  auto pause = [&] {
    for (auto waited = std::chrono::milliseconds(0); waited < backoff && !stop_; waited += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
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
    // A stream that ended at once (server down, refused) backs off; a long one was healthy.
    if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1)) {
      pause();
    } else {
      backoff = options_.retry_backoff;
    }
  }
}

}  // namespace kai::k8s
