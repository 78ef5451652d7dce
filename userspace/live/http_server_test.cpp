#include "live/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <thread>
#include <vector>

namespace blkrr::live {
namespace {

// Connects to 127.0.0.1:port, sends `request`, returns everything answered.
std::string fetch(uint16_t port, const std::string& request) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    return "connect failed";
  ::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd.get(), buf, sizeof buf, 0)) > 0;) out.append(buf, n);
  return out;
}

std::unique_ptr<MetricsServer> start_local() {
  auto s = MetricsServer::start({"127.0.0.1", 0});
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(ListenAddress, Forms) {
  auto a = parse_listen_address("127.0.0.1:9100");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9100);
  a = parse_listen_address(":9100");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "");
  a = parse_listen_address("[::1]:80");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 80);
  for (const char* bad : {"9100", "host:99999", "[::1]9100"})
    EXPECT_EQ(parse_listen_address(bad).error().kind, ErrorKind::kUsage) << bad;
}

TEST(MetricsServer, ServesMetrics) {
  auto srv = start_local();
  ASSERT_TRUE(srv);
  srv->set_body("blkrr_x_total 1\n");
  std::string r = fetch(srv->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(r.find("Content-Length: 16\r\n"), std::string::npos);
  EXPECT_EQ(r.substr(r.size() - 16), "blkrr_x_total 1\n");
  srv->set_body("blkrr_x_total 2\n");
  r = fetch(srv->port(), "GET /metrics?x=1 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r.substr(r.size() - 16), "blkrr_x_total 2\n");
  EXPECT_EQ(srv->requests_served(), 2u);
}

TEST(MetricsServer, OtherPathsAndMethods) {
  auto srv = start_local();
  ASSERT_TRUE(srv);
  EXPECT_EQ(fetch(srv->port(), "GET /nope HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(fetch(srv->port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  std::string head = fetch(srv->port(), "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");  // no body
  EXPECT_EQ(fetch(srv->port(), "garbage\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
}

// Many clients at once, while the body keeps changing: every answer is whole.
TEST(MetricsServer, ConcurrentScrapes) {
  auto srv = start_local();
  ASSERT_TRUE(srv);
  std::string big(100000, 'x');
  big.back() = '\n';
  srv->set_body(big);
  std::atomic<int> good{0};
  std::vector<std::thread> ts;
  ts.reserve(8);
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([&] {
      for (int k = 0; k < 10; ++k) {
        std::string r = fetch(srv->port(), "GET /metrics HTTP/1.1\r\n\r\n");
        if (r.size() > big.size() && r.substr(r.size() - big.size()) == big) ++good;
      }
    });
  for (int k = 0; k < 50; ++k) srv->set_body(big);
  for (auto& t : ts) t.join();
  EXPECT_EQ(good.load(), 80);
}

// A client that connects and says nothing neither blocks stop() nor kills
// the server for the next client.
TEST(MetricsServer, SilentClientDoesNotBlockStop) {
  auto srv = start_local();
  ASSERT_TRUE(srv);
  Fd silent(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(srv->port());
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(silent.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  std::string r = fetch(srv->port(), "GET /metrics HTTP/1.1\r\n\r\n");  // waits its turn
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u);
  Fd silent2(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(silent2.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  srv->stop();  // returns although a client is being served
  EXPECT_EQ(fetch(srv->port(), "GET /metrics HTTP/1.1\r\n\r\n"), "connect failed");
}

TEST(MetricsServer, PortInUseIsAClearError) {
  auto a = start_local();
  ASSERT_TRUE(a);
  auto b = MetricsServer::start({"127.0.0.1", a->port()});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().sys_errno, EADDRINUSE) << b.error().message;
  EXPECT_NE(b.error().message.find("cannot listen on 127.0.0.1:"), std::string::npos)
      << b.error().message;
}

}  // namespace
}  // namespace blkrr::live
