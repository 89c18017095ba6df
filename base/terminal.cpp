#include "base/terminal.h"

#include <sys/ioctl.h>

namespace heapd {

unsigned terminal_width(int fd) {
    winsize ws{};
    if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

}  // namespace heapd
