// Whether the client of a request still listens, for handlers that write
// nothing until the end (non-streamed completions). cpp-httplib does not hand
// a handler its socket, so the socket is found once by the connection's two
// addresses (local and peer, which identify one TCP connection) among this
// process's descriptors; it cannot be closed or reused while the handler runs,
// since the handler's thread owns the connection. Linux (/proc/self/fd).
#pragma once

#include <string>

namespace hearth::server {

class ClientSocket {
 public:
  ClientSocket(const std::string& local_addr, int local_port, const std::string& remote_addr, int remote_port);
  // True once the peer has closed or reset the connection (what it sent
  // before, such as a pipelined request, does not count; a client that only
  // half-closed its side after the request counts as gone). False when the
  // socket was not found: the request then runs to its end.
  bool gone() const;
  bool found() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace hearth::server
