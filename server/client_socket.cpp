#include "server/client_socket.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace hearth::server {
namespace {

// The numeric host and port of an address, as cpp-httplib spells them (getnameinfo, NI_NUMERICHOST).
bool same_endpoint(const sockaddr_storage& addr, socklen_t len, const std::string& host, int port) {
  char name[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, name, sizeof name, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return false;
  }
  return host == name && port == std::atoi(serv);
}

bool is_connection(int fd, const std::string& local, int local_port, const std::string& remote, int remote_port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return false;
  if (!same_endpoint(addr, len, remote, remote_port)) return false;
  len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return false;
  return same_endpoint(addr, len, local, local_port);
}

}  // namespace

ClientSocket::ClientSocket(const std::string& local_addr, int local_port, const std::string& remote_addr,
                           int remote_port) {
  if (local_port <= 0 || remote_port <= 0) return;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) {
    char* tail = nullptr;
    const std::string name = it->path().filename().string();
    const long fd = std::strtol(name.c_str(), &tail, 10);
    if (tail == name.c_str() || *tail != '\0') continue;
    if (is_connection(static_cast<int>(fd), local_addr, local_port, remote_addr, remote_port)) {
      fd_ = static_cast<int>(fd);
      return;
    }
  }
}

bool ClientSocket::gone() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return false;  // nothing to read: still there
  if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return true;
  char byte = 0;
  const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace hearth::server
