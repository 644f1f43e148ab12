#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <mutex>
#include <vector>

#include "llm/http_transport.h"

namespace kforge::llm {

std::optional<std::string> HttpResponse::Header(std::string_view lower_name) const {
  auto it = headers.find(std::string(lower_name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

namespace {

using Clock = std::chrono::steady_clock;

// Error messages name the endpoint without credentials or query strings.
std::string RedactUrl(const std::string& url) {
  std::string out = url;
  if (size_t q = out.find_first_of("?#"); q != std::string::npos) out.resize(q);
  size_t scheme = out.find("://");
  size_t host_start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t path = out.find('/', host_start);
  size_t at = out.rfind('@', path == std::string::npos ? out.size() : path);
  if (at != std::string::npos && at >= host_start) out.erase(host_start, at + 1 - host_start);
  return out;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

enum class Deadline { kNone, kFirstToken, kIdle };

struct Transfer {
  CURL* curl = nullptr;
  StreamSink* sink = nullptr;
  const HttpTimeouts* timeouts = nullptr;
  HttpResponse response;
  Clock::time_point start;
  Clock::time_point last_byte;
  bool got_body = false;
  bool sink_stopped = false;
  bool decided = false;
  Deadline fired = Deadline::kNone;

  int Status() const {
    long code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    return static_cast<int>(code);
  }
  // Decided at the first body byte, when status and headers are known.
  bool Streaming() {
    if (!decided) {
      decided = true;
      int s = Status();
      response.streamed = sink != nullptr && s >= 200 && s < 300 && sink->Accepts(response);
    }
    return response.streamed;
  }
  bool OutputStarted() const {
    if (!got_body) return false;
    return !response.streamed || sink->produced_output();
  }
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line (after a 100 Continue or a proxy CONNECT): start over.
    t->response.headers.clear();
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    std::string name = Trim(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    t->response.headers[name] = Trim(line.substr(colon + 1));
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  t->got_body = true;
  t->last_byte = Clock::now();
  if (t->Streaming()) {
    if (!t->sink->Consume(std::string_view(data, n))) {
      t->sink_stopped = true;
      return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
    }
    return n;
  }
  t->response.body.append(data, n);
  return n;
}

// libcurl calls this often while data flows and about once a second while
// it waits, which bounds how late a first-token or idle deadline can fire.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  const HttpTimeouts& to = *t->timeouts;
  auto now = Clock::now();
  auto ms = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  if (!t->OutputStarted()) {
    if (to.first_token_ms > 0 && ms(now - t->start) > to.first_token_ms) {
      t->fired = Deadline::kFirstToken;
      return 1;
    }
  } else if (to.idle_ms > 0 && ms(now - t->last_byte) > to.idle_ms) {
    t->fired = Deadline::kIdle;
    return 1;
  }
  return 0;
}

LlmErrorKind KindOf(CURLcode code) {
  switch (code) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return LlmErrorKind::kBadSpec;
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_ABORTED_BY_CALLBACK:
      return LlmErrorKind::kTimeout;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
      return LlmErrorKind::kTls;
    default:
      // Connect failures, resets, empty replies, cut bodies, DNS hiccups and
      // handshake resets are worth another try.
      return LlmErrorKind::kNetwork;
  }
}

}  // namespace

struct CurlTransport::HandlePool {
  std::mutex mu;
  std::vector<CURL*> idle;

  CURL* Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        CURL* c = idle.back();
        idle.pop_back();
        return c;
      }
    }
    return curl_easy_init();
  }
  void Release(CURL* c) {
    // Reset forgets the options but keeps the connection cache for reuse.
    curl_easy_reset(c);
    std::lock_guard<std::mutex> lock(mu);
    if (idle.size() < 16) {
      idle.push_back(c);
    } else {
      curl_easy_cleanup(c);
    }
  }
  ~HandlePool() {
    for (CURL* c : idle) curl_easy_cleanup(c);
  }
};

CurlTransport::CurlTransport() : pool_(std::make_unique<HandlePool>()) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

CurlTransport::~CurlTransport() = default;

LlmResult<HttpResponse> CurlTransport::Send(const HttpRequest& request, StreamSink* sink) {
  CURL* curl = pool_->Acquire();
  if (curl == nullptr) return LlmError::Make(LlmErrorKind::kNetwork, "libcurl could not start");
  struct Release {
    HandlePool* pool;
    CURL* curl;
    curl_slist* headers = nullptr;
    ~Release() {
      curl_slist_free_all(headers);
      pool->Release(curl);
    }
  } release{pool_.get(), curl};

  Transfer t;
  t.curl = curl;
  t.sink = sink;
  t.timeouts = &request.timeouts;
  t.start = t.last_byte = Clock::now();

  for (const auto& [name, value] : request.headers) {
    release.headers = curl_slist_append(release.headers, (name + ": " + value).c_str());
  }
  // No "Expect: 100-continue" round trip for large prompts.
  release.headers = curl_slist_append(release.headers, "Expect:");

  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, release.headers);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "kforge/" KFORGE_VERSION);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    if (!request.body.empty()) {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    }
  }
  if (request.timeouts.connect_ms > 0) {
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(request.timeouts.connect_ms));
  }
  if (request.timeouts.total_ms > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeouts.total_ms));
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);

  CURLcode code = curl_easy_perform(curl);
  t.response.status = t.Status();
  if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && t.sink_stopped)) {
    return std::move(t.response);
  }
  auto elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t.start).count();
  std::string where = RedactUrl(request.url);
  LlmError error;
  error.kind = KindOf(code);
  error.http_status = t.response.status;
  if (code == CURLE_ABORTED_BY_CALLBACK && t.fired == Deadline::kFirstToken) {
    error.message = fmt::format("no output from {} within the first-token timeout ({} ms)", where,
                                request.timeouts.first_token_ms);
  } else if (code == CURLE_ABORTED_BY_CALLBACK && t.fired == Deadline::kIdle) {
    error.message = fmt::format("{} sent nothing for longer than the idle timeout ({} ms)", where,
                                request.timeouts.idle_ms);
  } else if (code == CURLE_OPERATION_TIMEDOUT) {
    // CURLINFO_CONNECT_TIME stays 0 until a connection exists.
    curl_off_t connect_us = 0;
    curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect_us);
    if (connect_us == 0 && request.timeouts.connect_ms > 0) {
      error.message = fmt::format("could not connect to {} within the connect timeout ({} ms)",
                                  where, request.timeouts.connect_ms);
    } else {
      error.message = fmt::format("{} did not finish within the total timeout ({} ms, {} ms spent)",
                                  where, request.timeouts.total_ms, elapsed_ms);
    }
  } else {
    error.message = fmt::format("{}: {}{}{}", where, curl_easy_strerror(code),
                                errbuf[0] != '\0' ? " - " : "", Trim(errbuf));
  }
  return error;
}

}  // namespace kforge::llm
