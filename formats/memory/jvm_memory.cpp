#include "formats/memory/jvm_memory.h"

#include <algorithm>

namespace heapd {
inline namespace memory {
namespace {

std::int64_t as_signed(std::uint64_t bytes) {
    return static_cast<std::int64_t>(std::min<std::uint64_t>(bytes, std::uint64_t{1} << 62));
}

// The mappings that hold a blocked thread's stack pointer, each once.
std::vector<std::size_t> stack_mappings(const memory_inputs& in) {
    std::vector<std::size_t> found;
    for (const std::uint64_t sp : in.stack_pointers) {
        const auto m = std::upper_bound(in.mappings.begin(), in.mappings.end(), sp,
                                        [](std::uint64_t a, const mapping& m) { return a < m.range.end; });
        if (m != in.mappings.end() && m->range.contains(sp)) found.push_back(m - in.mappings.begin());
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return found;
}

memory_part heap_part(const memory_inputs& in, std::vector<bool>& claimed) {
    memory_part p;
    p.name = "java_heap";
    p.committed = in.heap_committed;
    p.used = in.heap_used;
    p.source = "hsperfdata (committed, used)";
    if (in.heap_info && in.heap_info->heap_used) {
        p.used = in.heap_info->heap_used;  // hsperfdata's is as of the last collection for G1
        p.source = "hsperfdata (committed), GC.heap_info (used)";
    }
    if (in.heap_info && in.heap_info->heap) {
        std::uint64_t rss = 0;
        for (std::size_t i = 0; i < in.mappings.size(); ++i)
            if (in.mappings[i].range.overlaps(*in.heap_info->heap)) {  // the CDS archive's heap objects too
                rss += in.mappings[i].rss;
                claimed[i] = true;
            }
        p.resident = as_signed(rss);
        p.source += "; resident: smaps over the heap's range from GC.heap_info";
    }
    return p;
}

memory_part metaspace_part(const memory_inputs& in) {
    memory_part p;
    p.name = "metaspace";
    if (in.heap_info && in.heap_info->metaspace_committed) {
        p.committed = in.heap_info->metaspace_committed;
        p.used = in.heap_info->metaspace_used;
        p.source = "GC.heap_info or VM.metaspace (class space included)";
    } else {
        p.source = "unknown: the JVM did not answer GC.heap_info or VM.metaspace";
    }
    return p;
}

memory_part code_part(const memory_inputs& in, std::vector<bool>& claimed) {
    memory_part p;
    p.name = "code_cache";
    if (in.code_heaps.empty()) {
        p.source = "unknown: the JVM did not answer Compiler.codecache";
        return p;
    }
    std::uint64_t rss = 0, accessible = 0;
    for (std::size_t i = 0; i < in.mappings.size(); ++i)
        for (const address_range& r : in.code_heaps)
            if (!claimed[i] && !in.mappings[i].file_backed() && in.mappings[i].range.overlaps(r)) {
                const mapping& m = in.mappings[i];
                rss += m.rss;
                if (std::string_view(m.perms, 3) != "---") accessible += m.range.end - m.range.begin;
                claimed[i] = true;
                break;
            }
    p.resident = as_signed(rss);
    p.committed = as_signed(accessible);
    p.source = "smaps over the code heaps' ranges from Compiler.codecache (committed: what is mapped accessible)";
    return p;
}

memory_part stacks_part(const memory_inputs& in, std::vector<bool>& claimed) {
    memory_part p;
    p.name = "thread_stacks";
    p.count = in.threads;
    std::uint64_t rss = 0;
    std::size_t stacks = 0;
    for (const std::size_t i : stack_mappings(in))
        if (!claimed[i] && !in.mappings[i].file_backed()) {
            rss += in.mappings[i].rss;
            claimed[i] = true;
            ++stacks;
            // The inaccessible pages right below a Java thread's stack are the JVM's guard zones,
            // touched before they were protected: resident, and counted with the stack (as NMT does).
            if (i > 0 && !claimed[i - 1] && !in.mappings[i - 1].file_backed() &&
                in.mappings[i - 1].range.end == in.mappings[i].range.begin &&
                std::string_view(in.mappings[i - 1].perms, 3) == "---") {
                rss += in.mappings[i - 1].rss;
                claimed[i - 1] = true;
            }
        }
    p.source = "smaps of the mapping at each blocked thread's stack pointer, and its guard pages";
    // Threads running as they were read show no stack pointer: counted at the mean of the others.
    const std::int64_t unseen = in.threads - static_cast<std::int64_t>(in.stack_pointers.size());
    if (unseen > 0 && stacks > 0) {
        rss += rss / stacks * static_cast<std::uint64_t>(unseen);
        p.source += "; " + std::to_string(unseen) + " running thread(s) at the others' mean";
    }
    p.resident = as_signed(rss);
    return p;
}

}  // namespace

const memory_part* memory_breakdown::part(std::string_view name) const {
    for (const memory_part& p : parts)
        if (p.name == name) return &p;
    return nullptr;
}

std::optional<double> memory_breakdown::percent_of_limit() const {
    if (!limit.bytes || *limit.bytes <= 0) return std::nullopt;
    return 100.0 * static_cast<double>(resident) / static_cast<double>(*limit.bytes);
}

memory_breakdown break_down(const memory_inputs& in) {
    memory_breakdown b;
    b.nmt = in.nmt;
    const smaps_totals totals = totals_of(in.mappings);
    b.resident = as_signed(totals.rss);
    b.anonymous = as_signed(totals.anonymous);
    b.file_resident = as_signed(totals.file_rss);
    b.swap = as_signed(totals.swap);

    std::vector<bool> claimed(in.mappings.size(), false);
    b.parts.push_back(heap_part(in, claimed));
    b.parts.push_back(metaspace_part(in));
    b.parts.push_back(code_part(in, claimed));
    b.parts.push_back(stacks_part(in, claimed));
    std::uint64_t file_rss = 0;
    for (std::size_t i = 0; i < in.mappings.size(); ++i)
        if (!claimed[i] && in.mappings[i].file_backed()) file_rss += in.mappings[i].rss;
    memory_part files;
    files.name = "mapped_files";
    files.resident = as_signed(file_rss);
    files.source =
        "smaps of the file mappings (libraries, the JDK's modules, the CDS archive), their private "
        "copies included";
    b.parts.push_back(std::move(files));

    // What is left of the memory no file backs: malloc's arenas (direct buffers, the JVM's own
    // allocations), GC structures, and whatever the parts above could not place.
    std::uint64_t rest = 0;
    for (std::size_t i = 0; i < in.mappings.size(); ++i)
        if (!claimed[i] && !in.mappings[i].file_backed()) rest += in.mappings[i].rss;
    const memory_part& meta = b.parts[1];
    std::string source = "the memory no file backs, less the parts above";
    if (meta.committed) {
        rest -= std::min<std::uint64_t>(rest, static_cast<std::uint64_t>(*meta.committed));
        source += " (metaspace as committed)";
    }
    // Without the heap's range the heap's used bytes are taken out of it: written, so resident (the
    // heap is at least that), and no native memory counted as heap.
    memory_part& heap = b.parts[0];
    if (!heap.resident && heap.used && *heap.used > 0) {
        const std::uint64_t at_least = std::min<std::uint64_t>(rest, static_cast<std::uint64_t>(*heap.used));
        heap.resident = as_signed(at_least);
        heap.source += "; resident: at least its used bytes (its range is unknown)";
        rest -= at_least;
        source += ", the Java heap's used bytes";
    } else if (!heap.resident) {
        source += "; the Java heap's resident part is in it (its range is unknown)";
    }
    memory_part native;
    native.name = "other_native";
    native.resident = as_signed(rest);
    native.source = std::move(source);
    b.parts.push_back(std::move(native));
    return b;
}

}  // namespace memory
}  // namespace heapd
