#pragma once
// Socket activation (sd_listen_fds(3)): the listening socket a service manager (systemd's
// heapd.socket, systemd-socket-activate) made and passed to heapd as file descriptor 3.
#include <optional>
#include <string>

#include "base/error.h"

namespace heapd::daemon {

// A listening socket passed by the service manager, and the path it is bound to.
struct inherited_socket {
    int fd = -1;
    std::string path;  // "" when unnamed; "@name" for an abstract socket
};

// The socket passed when LISTEN_PID and LISTEN_FDS name this process (the variables are then
// removed, so heapd's children do not take them for theirs, and the socket is close-on-exec);
// nullopt when nothing was passed. An error when more than one descriptor was passed or fd 3 is
// not a listening AF_UNIX stream socket.
result<std::optional<inherited_socket>> take_listen_socket();

}  // namespace heapd::daemon
