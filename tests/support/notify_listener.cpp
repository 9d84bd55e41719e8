// notify_listener SOCKET: stands in for systemd's notification socket in tests. Binds a unix
// datagram socket at SOCKET (what NOTIFY_SOCKET then names) and prints every message it receives
// to stdout, one line per assignment (READY=1, STATUS=..., WATCHDOG=1), flushed at once, until it
// is killed.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: notify_listener SOCKET\n");
    return 2;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (std::strlen(argv[1]) >= sizeof address.sun_path) {
    std::fprintf(stderr, "notify_listener: socket path too long: %s\n", argv[1]);
    return 2;
  }
  std::strcpy(address.sun_path, argv[1]);
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ::unlink(argv[1]);
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    std::fprintf(stderr, "notify_listener: %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  char message[4096];
  for (;;) {
    const ssize_t length = recv(fd, message, sizeof message, 0);
    if (length < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "notify_listener: recv: %s\n", std::strerror(errno));
      return 1;
    }
    std::fwrite(message, 1, static_cast<size_t>(length), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
}
