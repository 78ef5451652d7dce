// A small HTTP/1.0 server for Prometheus scrapes: GET /metrics answers the
// current exposition text (kept in memory, no I/O on the serving path).
// One thread, one connection at a time, every socket operation bounded by a
// timeout so a stuck client cannot stall it; stops when asked (SIGTERM in
// `blkrr top`).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/result.h"
#include "core/fd.h"

namespace blkrr::live {

struct ListenAddress {
  std::string host;  // "" or "*": every address
  uint16_t port = 0;
};
// "ADDR:PORT", ":PORT", "[::1]:PORT", "localhost:9100".
Result<ListenAddress> parse_listen_address(std::string_view s);

class MetricsServer {
 public:
  // Binds and listens now (errors are reported here), serves on a thread.
  static Result<std::unique_ptr<MetricsServer>> start(const ListenAddress& addr);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Replaces the body served at /metrics.
  void set_body(std::string body);
  // The port actually bound (useful with port 0).
  uint16_t port() const { return port_; }
  uint64_t requests_served() const { return served_.load(); }
  // Stops the thread and closes the socket (the destructor does it too).
  void stop();

 private:
  MetricsServer() = default;
  void run();
  void handle(int fd);

  Fd listen_fd_;
  Fd wake_fd_;  // eventfd written by stop()
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::string body_;
  std::atomic<uint64_t> served_{0};
};

}  // namespace blkrr::live
