#pragma once
// The CPU samples of an agent's answer (cpu_show, cpu_stop) ranked into hprof's CPU SAMPLES table
// (formats/report/cpu_report.h): stacks by count, cut to a depth (stacks equal that far are one row).
#include "formats/report/cpu_report.h"
#include "formats/sites/allocation_profile.h"

namespace heapd::sites {

// depth: frames per row (0: as sampled); top: at most this many rows (0: all).
cpu_report rank_cpu(const allocation_profile& profile, int depth, unsigned top);

}  // namespace heapd::sites
