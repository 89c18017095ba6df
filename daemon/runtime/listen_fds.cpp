#include "daemon/runtime/listen_fds.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>

#include <systemd/sd-daemon.h>

namespace heapd::daemon {
namespace {

// The value of an int socket option of fd, or nullopt when it cannot be read.
std::optional<int> socket_option(int fd, int option) {
    int value = 0;
    socklen_t length = sizeof value;
    if (::getsockopt(fd, SOL_SOCKET, option, &value, &length) != 0) return std::nullopt;
    return value;
}

std::string bound_path(int fd) {
    sockaddr_un addr{};
    socklen_t length = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) return "";
    const std::size_t path_length =
        length > offsetof(sockaddr_un, sun_path) ? length - offsetof(sockaddr_un, sun_path) : 0;
    if (path_length == 0) return "";
    if (addr.sun_path[0] == '\0') return "@" + std::string(addr.sun_path + 1, path_length - 1);
    return std::string(addr.sun_path, ::strnlen(addr.sun_path, path_length));
}

}  // namespace

result<std::optional<inherited_socket>> take_listen_socket() {
    const int n = ::sd_listen_fds(1);
    if (n < 0) return fail(error_code::bad_value, std::string("socket activation: ") + std::strerror(-n));
    if (n == 0) return std::nullopt;
    if (n > 1)
        return fail(error_code::bad_value, "socket activation: " + std::to_string(n) +
                                               " sockets were passed; heapd serves one (a single ListenStream=)");
    const int fd = SD_LISTEN_FDS_START;
    const auto domain = socket_option(fd, SO_DOMAIN), type = socket_option(fd, SO_TYPE),
               listening = socket_option(fd, SO_ACCEPTCONN);
    if (!domain || !type || !listening)
        return fail(error_code::bad_value, "socket activation: descriptor 3 is not a socket");
    if (*domain != AF_UNIX || *type != SOCK_STREAM)
        return fail(error_code::bad_value,
                    "socket activation: descriptor 3 is not a Unix stream socket "
                    "(heapd.socket needs ListenStream=/path)");
    if (*listening == 0) return fail(error_code::bad_value, "socket activation: descriptor 3 does not listen");
    return inherited_socket{fd, bound_path(fd)};
}

}  // namespace heapd::daemon
