#pragma once
// The join nobody else has: a heap dump's leak suspects told where their objects were allocated,
// from an allocation profile of heapd's agent taken while the JVM ran. Joined by class name: for a
// suspect's own class (a class suspect) and each class accumulating under it, the sites that
// allocated most of that class's sampled live bytes.
#include "formats/report/report.h"
#include "formats/sites/allocation_profile.h"

namespace heapd::sites {

// How many sites per class, and how small a share is still shown.
struct join_options {
    unsigned sites_per_class = 3;
    unsigned classes_per_suspect = 3;  // of the accumulated classes, the biggest
    double min_share = 0.01;
};

// Fills each suspect's allocated_at and the report's allocations facts; a profile without tables
// (status) or without live samples of the suspects' classes leaves them empty.
void join_allocation_sites(analysis_report& report, const allocation_profile& profile,
                           const join_options& options = {});

// The frame to name as where an allocation happened: the first outside the JDK's own packages
// (java., javax., jdk., sun., com.sun.), which is the application's line that asked for the object;
// else the allocating frame. Frames are as frame_text writes them.
std::string origin_frame(const std::vector<std::string>& frames);

}  // namespace heapd::sites
