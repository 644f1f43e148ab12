#include "serve/http_message.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace kforge::serve {
namespace {

TEST(ParseRequestHead, ReadsRequestLineAndHeaders) {
  ParsedHead p = ParseRequestHead(
      "POST /v1/evaluate?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\nX-A: 1\r\nx-a:  2 ");
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_EQ(p.request.method, "POST");
  EXPECT_EQ(p.request.target, "/v1/evaluate?x=1");
  EXPECT_EQ(p.request.path, "/v1/evaluate");
  EXPECT_EQ(p.request.version, "HTTP/1.1");
  ASSERT_NE(p.request.Header("content-length"), nullptr);
  EXPECT_EQ(*p.request.Header("content-length"), "12");
  EXPECT_EQ(*p.request.Header("x-a"), "1, 2");
  EXPECT_EQ(p.request.Header("missing"), nullptr);
}

TEST(ParseRequestHead, AcceptsBareLineFeeds) {
  ParsedHead p = ParseRequestHead("\nGET /v1/health HTTP/1.0\nHost: a\n");
  ASSERT_FALSE(p.failure);
  EXPECT_EQ(p.request.path, "/v1/health");
  EXPECT_EQ(*p.request.Header("host"), "a");
}

TEST(ParseRequestHead, RefusesMalformedHeads) {
  struct Case {
    const char* head;
    int status;
  };
  for (const Case& c : std::vector<Case>{
           {"", 400},
           {"GET /v1/health", 400},
           {"GET  /v1/health HTTP/1.1", 400},
           {"GET /v1/health HTTP/1.1 extra", 400},
           {"G(T /v1/health HTTP/1.1", 400},
           {"GET v1/health HTTP/1.1", 400},
           {"GET http://x/v1/health HTTP/1.1", 400},
           {"GET /v1/health HTTP/2.0", 505},
           {"GET /v1/health FTP/1.1", 400},
           {"GET /v1/health HTTP/1.1\r\nNoColon", 400},
           {"GET /v1/health HTTP/1.1\r\nBad Name: x", 400},
           {"GET /v1/health HTTP/1.1\r\nA: b\r\n folded", 400},
           {"GET /v1/health HTTP/1.1\r\n: empty-name", 400},
       }) {
    ParsedHead p = ParseRequestHead(c.head);
    ASSERT_TRUE(p.failure) << c.head;
    EXPECT_EQ(p.failure->status, c.status) << c.head;
  }
}

HttpRequest WithHeaders(std::map<std::string, std::string> headers) {
  HttpRequest r;
  r.method = "POST";
  r.headers = std::move(headers);
  return r;
}

TEST(BodyFramingOf, ContentLength) {
  BodyFraming none = BodyFramingOf(WithHeaders({}), 100);
  EXPECT_FALSE(none.failure);
  EXPECT_FALSE(none.content_length);

  BodyFraming ok = BodyFramingOf(WithHeaders({{"content-length", "100"}}), 100);
  ASSERT_FALSE(ok.failure);
  EXPECT_EQ(*ok.content_length, 100u);

  BodyFraming same = BodyFramingOf(WithHeaders({{"content-length", "7, 7"}}), 100);
  ASSERT_FALSE(same.failure);
  EXPECT_EQ(*same.content_length, 7u);

  EXPECT_EQ(BodyFramingOf(WithHeaders({{"content-length", "101"}}), 100).failure->status, 413);
  EXPECT_EQ(BodyFramingOf(WithHeaders({{"content-length", "-1"}}), 100).failure->status, 400);
  EXPECT_EQ(BodyFramingOf(WithHeaders({{"content-length", "1e3"}}), 100).failure->status, 400);
  EXPECT_EQ(BodyFramingOf(WithHeaders({{"content-length", "7, 8"}}), 100).failure->status, 400);
  EXPECT_EQ(BodyFramingOf(WithHeaders({{"content-length", "99999999999999999999999"}}), 100)
                .failure->status,
            400);
  EXPECT_EQ(BodyFramingOf(WithHeaders({{"transfer-encoding", "chunked"}}), 100).failure->status,
            501);
}

TEST(SerializeResponse, StatusLineLengthAndClose) {
  HttpResponse r = ErrorResponse(404, "no \"such\" thing");
  r.headers.emplace_back("Allow", "GET");
  std::string wire = SerializeResponse(r);
  EXPECT_EQ(wire.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << wire;
  EXPECT_NE(wire.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_NE(wire.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(wire.find("Allow: GET\r\n"), std::string::npos);
  std::string body = wire.substr(wire.find("\r\n\r\n") + 4);
  EXPECT_NE(wire.find(fmt::format("Content-Length: {}\r\n", body.size())), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(body)["error"], "no \"such\" thing");
}

TEST(JsonResponse, ReplacesInvalidUtf8) {
  HttpResponse r = JsonResponse(200, nlohmann::json{{"log", std::string("a\xff"
                                                                        "b")}});
  EXPECT_EQ(nlohmann::json::parse(r.body)["log"],
            "a\xEF\xBF\xBD"
            "b");
}

}  // namespace
}  // namespace kforge::serve
