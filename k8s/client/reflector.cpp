#include "k8s/client/reflector.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "k8s/client/watch_line.hpp"

namespace kai::k8s {

using Json = nlohmann::json;

namespace {

/// List items carry no kind; the events that carry them get it, so that each logged object says
/// what it is.
std::string with_kind(std::string_view object, bool has_kind, const std::string& kind) {
  if (has_kind || object.size() < 2 || object.front() != '{') return std::string(object);
  std::string out;
  out.reserve(object.size() + kind.size() + 10);
  out.append("{\"kind\":\"").append(kind).append("\"");
  const std::string_view rest = object.substr(1);
  const size_t first = rest.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && rest[first] != '}') out.push_back(',');  // not an empty object
  out.append(rest);
  return out;
}

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
    : client_(client),
      options_(std::move(options)),
      on_event_(std::move(on_event)),
      on_error_(std::move(on_error)) {}

Reflector::~Reflector() {
  stop();
}

void Reflector::start(const std::string& resume_from, std::map<std::string, std::string> known) {
  if (thread_.joinable()) return;
  stop_ = false;
  known_ = std::move(known);
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

void Reflector::relist(std::map<std::string, std::string> known) {
  std::lock_guard lock(stream_mu_);
  relist_asked_ = true;
  relist_known_ = std::move(known);
  if (stream_) stream_->stop();
}

bool Reflector::take_relist() {
  std::lock_guard lock(stream_mu_);
  if (!relist_asked_) return false;
  relist_asked_ = false;
  known_ = std::move(relist_known_);
  relist_known_.clear();
  return true;
}

bool Reflector::relist_pending() {
  std::lock_guard lock(stream_mu_);
  return relist_asked_;
}

void Reflector::deliver(ReflectorEventType type, bool from_list, std::string object_json,
                        std::string resource_version) {
  ReflectorEvent ev;
  ev.type = type;
  ev.kind = options_.kind;
  ev.object_json = std::move(object_json);
  ev.resource_version = std::move(resource_version);
  ev.from_list = from_list;
  on_event_(std::move(ev));
}

std::string Reflector::list_all() {
  std::string cont;
  std::string rv;
  std::set<std::string> listed;
  bool more = true;
  while (more && !stop_) {
    std::string path = options_.list_path + "?limit=" + std::to_string(options_.page_size);
    if (!cont.empty()) path += "&continue=" + cont;
    ApiResult r = client_.get(path);
    if (!r.ok()) {
      if (r.code == 404 && options_.absent_is_empty) return list_absent();
      if (r.code == 410 && !cont.empty()) {
        cont.clear();  // the continue token expired: start the list again from the first page
        listed.clear();
        continue;
      }
      on_error_("listing " + options_.kind + ": " + r.describe());
      return "";
    }
    auto page = scan_list_page(r.body);
    if (!page) {
      on_error_("listing " + options_.kind + ": " + page.message());
      return "";
    }
    // Every page is read from the first page's snapshot: its resourceVersion is the list's.
    if (cont.empty()) rv = page->resource_version;
    for (const ListedObject& item : page->items) {
      std::string key = item.id.key();
      if (item.id.name.empty()) {
        on_error_("listing " + options_.kind + ": an object without metadata.name was skipped");
        continue;
      }
      listed.insert(key);
      auto [known, added] = known_.try_emplace(std::move(key), item.id.resource_version);
      if (!added) {
        if (known->second == item.id.resource_version) continue;  // unchanged since delivered
        known->second = item.id.resource_version;
      }
      deliver(added ? ReflectorEventType::kAdded : ReflectorEventType::kModified, true,
              with_kind(item.object, item.id.has_kind, options_.kind), "");
    }
    cont = page->continue_token;
    more = !cont.empty();
  }
  if (stop_) return "";
  absent_ = false;
  deliver_deleted_unless(listed);
  deliver(ReflectorEventType::kBookmark, true, "", rv);
  ++lists_;
  synced_ = true;
  return rv;
}

std::string Reflector::list_absent() {
  if (!absent_) {
    // Once per absence: the objects held are gone with their kind, and the kind is synced empty.
    on_error_(options_.kind + " is not served (" + options_.list_path +
              " answered 404): taken as none; listed again every few seconds");
    deliver_deleted_unless({});
    deliver(ReflectorEventType::kBookmark, true, "", "");
    ++lists_;
    absent_ = true;
  }
  synced_ = true;
  return "";
}

void Reflector::deliver_deleted_unless(const std::set<std::string>& listed) {
  // What the list lacks was deleted while no watch was running.
  for (auto it = known_.begin(); it != known_.end();) {
    if (listed.count(it->first) != 0) {
      ++it;
      continue;
    }
    const size_t slash = it->first.find('/');
    Json meta = {{"resourceVersion", it->second}};
    if (slash == std::string::npos) {
      meta["name"] = it->first;
    } else {
      meta["namespace"] = it->first.substr(0, slash);
      meta["name"] = it->first.substr(slash + 1);
    }
    deliver(ReflectorEventType::kDeleted, true,
            Json{{"kind", options_.kind}, {"metadata", std::move(meta)}}.dump(), "");
    it = known_.erase(it);
  }
}

std::string Reflector::watch_from(const std::string& rv, bool* gone) {
  *gone = false;
  const std::string path = options_.list_path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv +
                           "&timeoutSeconds=" + std::to_string(options_.watch_timeout_seconds);
  auto stream = std::make_shared<http::WatchStream>(client_.config().endpoint, path);
  {
    std::lock_guard lock(stream_mu_);
    if (relist_asked_) return rv;  // run() lists first
    stream_ = stream;
  }
  std::string last = rv;
  // A resumed watch the server refused: a list tells what the cluster holds, a watch retried from
  // the resume point may never (its point expired, was never reached, or the kind is gone).
  auto list_instead = [&](const std::string& why) {
    on_error_("resuming the watch of " + options_.kind + " from resourceVersion " + rv + ": " + why +
              "; listing instead");
    *gone = true;
  };
  const int status = stream->status(std::chrono::seconds(30));
  if (status == 429) watch_retry_after_ = retry_after_of(stream->headers());  // run() waits it out
  if (status == 410) {
    *gone = true;
  } else if (status != 200 && status != 429 && catching_up_) {
    list_instead(status == 0 ? "no answer" : "HTTP " + std::to_string(status));
  } else if (status != 200) {
    on_error_(
        "watching " + options_.kind + ": " +
        (status == 0 ? "no answer" + (stream->error().empty() ? "" : ": " + stream->error())
                     : "HTTP " + std::to_string(status)) +
        (status == 429 ? " (Retry-After " + std::to_string(watch_retry_after_.count() / 1000) + " s)" : ""));
  }
  const auto catch_up_until = std::chrono::steady_clock::now() + options_.catch_up_limit;
  while (status == 200 && !stop_) {
    if (catching_up_ && std::chrono::steady_clock::now() >= catch_up_until) caught_up(last);
    auto line = stream->next(catching_up_ ? options_.catch_up_quiet : std::chrono::milliseconds(500));
    if (!line) {
      if (stream->ended()) break;
      if (catching_up_) caught_up(last);
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
                (why.rfind("unknown event type", 0) == 0
                     ? why + " skipped"
                     : "a malformed event was skipped (" + why + "): " + line->substr(0, 200)));
      continue;
    }
    const WatchLine& ev = *scanned;
    if (ev.type == WatchLineType::kError) {
      if (ev.error_code == 410) {
        *gone = true;
      } else if (catching_up_) {
        list_instead(ev.error_message.empty() ? std::string("error event") : ev.error_message);
      } else {
        on_error_("watching " + options_.kind + ": " +
                  (ev.error_message.empty() ? std::string("error event") : ev.error_message));
      }
      break;
    }
    ReflectorEventType type = ReflectorEventType::kBookmark;
    switch (ev.type) {
      case WatchLineType::kAdded:
        type = ReflectorEventType::kAdded;
        known_[ev.id.key()] = ev.id.resource_version;
        break;
      case WatchLineType::kModified:
        type = ReflectorEventType::kModified;
        known_[ev.id.key()] = ev.id.resource_version;
        break;
      case WatchLineType::kDeleted:
        type = ReflectorEventType::kDeleted;
        known_.erase(ev.id.key());
        break;
      default:
        break;
    }
    if (!ev.id.resource_version.empty()) last = ev.id.resource_version;
    // Handed on as received: the consumer's decoder takes an object without `kind` as this kind.
    deliver(type, false, type == ReflectorEventType::kBookmark ? std::string() : std::string(ev.object),
            ev.id.resource_version);
    if (catching_up_ && type == ReflectorEventType::kBookmark) caught_up(last);
  }
  stream->stop();
  {
    std::lock_guard lock(stream_mu_);
    stream_.reset();
  }
  return last;
}

void Reflector::caught_up(const std::string& rv) {
  catching_up_ = false;
  deliver(ReflectorEventType::kBookmark, true, "", rv);
  ++resumes_;
  synced_ = true;
}

void Reflector::run(std::string rv) {
  catching_up_ = !rv.empty();
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
    if (take_relist()) rv.clear();
    if (rv.empty()) {
      catching_up_ = false;  // a list delivers the cluster as it is
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
    if (relist_pending()) continue;  // ended by relist(), not by the server
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
