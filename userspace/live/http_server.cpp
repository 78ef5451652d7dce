#include "live/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/args.h"

namespace blkrr::live {

namespace {

constexpr int kIoTimeoutMs = 2000;  // per request: read the request, write the answer
constexpr size_t kMaxRequest = 8192;

struct AddrInfoFree {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};

void set_timeouts(int fd) {
  timeval tv{kIoTimeoutMs / 1000, (kIoTimeoutMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // error or timeout: drop the client
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string response(int code, const char* reason, const char* type, const std::string& body,
                     bool head) {
  std::string r = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + type +
                  "\r\nContent-Length: " + std::to_string(body.size()) +
                  "\r\nConnection: close\r\n\r\n";
  if (!head) r += body;
  return r;
}

}  // namespace

Result<ListenAddress> parse_listen_address(std::string_view s) {
  ListenAddress a;
  std::string_view port;
  if (!s.empty() && s.front() == '[') {
    auto close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return Error(ErrorKind::kUsage, "bad address '" + std::string(s) + "' (use [IPV6]:PORT)");
    a.host = std::string(s.substr(1, close - 1));
    port = s.substr(close + 2);
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string_view::npos)
      return Error(ErrorKind::kUsage,
                   "bad address '" + std::string(s) + "' (use ADDR:PORT or :PORT)");
    a.host = std::string(s.substr(0, colon));
    port = s.substr(colon + 1);
  }
  auto p = parse_u64(port);
  if (!p || *p > 65535)
    return Error(ErrorKind::kUsage,
                 "bad port '" + std::string(port) + "' in '" + std::string(s) + "'");
  if (a.host == "*") a.host.clear();
  a.port = static_cast<uint16_t>(*p);
  return a;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const ListenAddress& addr) {
  std::unique_ptr<MetricsServer> srv(new MetricsServer());
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port = std::to_string(addr.port);
  std::string shown = (addr.host.empty() ? "*" : addr.host) + ":" + port;
  int rc = getaddrinfo(addr.host.empty() ? nullptr : addr.host.c_str(), port.c_str(), &hints, &res);
  if (rc == EAI_SYSTEM) return Error::system("cannot resolve " + shown, errno);
  if (rc != 0)
    return Error(rc == EAI_NONAME ? ErrorKind::kNotFound : ErrorKind::kFailed,
                 "cannot resolve " + shown + ": " + gai_strerror(rc));
  std::unique_ptr<addrinfo, AddrInfoFree> list(res);
  int last_errno = EADDRNOTAVAIL;  // no address at all (getaddrinfo gives at least one)
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (!fd) {
      last_errno = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), 64) != 0) {
      last_errno = errno;
      continue;
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
    if (ss.ss_family == AF_INET)
      srv->port_ = ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    else
      srv->port_ = ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    srv->listen_fd_ = std::move(fd);
    break;
  }
  if (!srv->listen_fd_)
    return Error::system("cannot listen on " + shown, last_errno)
        .append(" (is the port in use? pick another with --prometheus ADDR:PORT)");
  srv->wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!srv->wake_fd_) return Error::system("eventfd", errno);
  srv->thread_ = std::thread([s = srv.get()] { s->run(); });
  return srv;
}

MetricsServer::~MetricsServer() {
  stop();
}

void MetricsServer::stop() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
    (void)n;
    thread_.join();
  }
  listen_fd_.reset();
  wake_fd_.reset();
}

void MetricsServer::set_body(std::string body) {
  std::lock_guard<std::mutex> lock(mu_);
  body_ = std::move(body);
}

void MetricsServer::run() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
    int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    // Take every pending connection; the listening socket is non-blocking.
    for (;;) {
      Fd c(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c) break;
      set_timeouts(c.get());
      handle(c.get());
    }
  }
}

void MetricsServer::handle(int fd) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kIoTimeoutMs);
  std::string req;
  char buf[1024];
  while (req.find("\r\n\r\n") == std::string::npos && req.find("\n\n") == std::string::npos) {
    auto now = std::chrono::steady_clock::now();
    if (req.size() > kMaxRequest || now >= deadline) return;
    // Wait for the client or for stop(), whichever comes first.
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
    int pr = ::poll(fds, 2, std::max(left, 1));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0 || fds[1].revents) return;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (req.find('\n') == std::string::npos) return;  // nothing usable
      break;                                            // HTTP/0.9-ish: a line is enough
    }
    req.append(buf, static_cast<size_t>(n));
  }
  std::string line = req.substr(0, req.find_first_of("\r\n"));
  auto sp1 = line.find(' ');
  auto sp2 = line.find(' ', sp1 == std::string::npos ? sp1 : sp1 + 1);
  std::string method = line.substr(0, sp1);
  std::string target = sp1 == std::string::npos
                           ? ""
                           : line.substr(sp1 + 1, sp2 == std::string::npos ? sp2 : sp2 - sp1 - 1);
  if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
  bool head = method == "HEAD";
  std::string out;
  if (method != "GET" && !head) {
    out = response(405, "Method Not Allowed", "text/plain", "only GET and HEAD\n", false);
  } else if (target == "/metrics") {
    std::string body;
    {
      std::lock_guard<std::mutex> lock(mu_);
      body = body_;
    }
    out = response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, head);
  } else if (target == "/") {
    out = response(200, "OK", "text/plain; charset=utf-8",
                   "blkrr top: per-process disk time. Metrics at /metrics\n", head);
  } else {
    out = response(404, "Not Found", "text/plain", "not found; try /metrics\n", head);
  }
  if (send_all(fd, out)) served_.fetch_add(1);
  ::shutdown(fd, SHUT_WR);
}

}  // namespace blkrr::live
