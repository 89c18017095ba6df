#pragma once
// Whether a descriptor is a terminal and how wide it is, for the commands' progress bars.

namespace heapd {

// Columns of the terminal on fd, or 80 when it is none or does not say.
unsigned terminal_width(int fd);

}  // namespace heapd
