#pragma once
// Dumps made by the benchmarks' generator (bench/hprof_generator, built with the tests), and what
// the generator says it wrote: the file's size, its objects, and the bytes each container retains.
#include <cstdint>
#include <string>
#include <vector>

namespace heapd::test {

// A generated dump and the generator's own account of it.
struct generated_dump {
    // A map, chain, list or array of payloads, and the bytes it alone keeps alive.
    struct container {
        std::uint64_t id = 0;
        std::string kind;
        unsigned loader = 0;
        std::uint64_t retained = 0;
    };
    std::string path;
    std::uint64_t bytes = 0, objects = 0;
    std::vector<container> containers;
    std::vector<container> holders;  // the lists in the Holder classes' statics, 4 per loader
};

// Runs the generator (--size size --round-objects round_objects) into path; throws
// std::runtime_error, with the generator's output, when it fails or prints what it should not.
generated_dump generate_dump(const std::string& path, const std::string& size, std::uint32_t round_objects);

}  // namespace heapd::test
