#pragma once
// A synthetic heap dump of any size, for benchmarks: the shapes of real heaps (long linked chains,
// big hash maps of strings, lists, many strings with duplicates, primitive payloads, several class
// loaders), written quickly and deterministically (the same options give the same bytes) to a file.
#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace heapd::bench {

// What to generate.
struct generator_options {
    std::uint64_t target_bytes = 64ull << 20;  // rounds are added until the dump holds this many bytes
    unsigned loaders = 4;                      // application class loaders, each with its classes and data
    std::uint32_t round_objects = 1u << 20;    // entries of each chain, map and list of a round
    std::uint64_t seed = 1;
};

// A container the generator wrote and the bytes it alone keeps alive, by HotSpot 17's sizes on a
// 64-bit JVM with compressed oops (12-byte headers, 4-byte references, 8-byte alignment).
struct generated_container {
    std::uint64_t id = 0;
    std::string kind;  // "chain" (its head), "map", "list", "blobs"; "maps", "chains", "lists",
                       // "blobs-lists": the ArrayList in a static field of the loader's Holder class
                       // that holds all of that kind
    unsigned loader = 0;
    std::uint64_t retained = 0;
};

// What was written.
struct generated_heap {
    std::uint64_t bytes = 0;    // the file's size
    std::uint64_t objects = 0;  // instances, arrays and class objects
    std::uint32_t classes = 0;
    unsigned rounds = 0;  // rounds per loader
    std::vector<generated_container> containers;
    std::vector<generated_container> holders;  // the Holder classes' lists, 4 per loader
};

// Writes the dump to fd (HPROF 1.0.2, 8-byte ids, heap dump segments of at most 256 MiB).
std::expected<generated_heap, std::string> generate_heap(int fd, const generator_options& options);

}  // namespace heapd::bench
