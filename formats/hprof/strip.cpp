#include "formats/hprof/strip.h"

#include <unistd.h>

#include <cerrno>
#include <vector>

#include "base/fd_io.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/java_strings.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace hprof {
namespace {

// Collects the value array ids of java.lang.String instances.
struct string_value_visitor : heap_visitor {
    const class_table* classes;
    std::uint64_t string_class = 0;
    id_map<char>* values;
    void instance(const instance_view& v) {
        if (v.class_id != string_class) return;
        if (auto f = read_string_fields(*classes, v); f && f->value_id != 0) values->insert(f->value_id, 1);
    }
};

// Collects the file ranges of primitive array contents to zero, in file order.
struct zero_range_visitor : heap_visitor {
    const std::byte* base;
    const id_map<char>* keep;
    std::vector<std::pair<std::uint64_t, std::uint64_t>>* ranges;  // (file offset, length)
    strip_stats* stats;
    void primitive_array(const primitive_array_view& v) {
        if (v.data.empty()) return;
        if (keep->find(v.id) != nullptr) {
            ++stats->strings_kept;
            return;
        }
        ranges->emplace_back(static_cast<std::uint64_t>(v.data.data() - base), v.data.size());
        ++stats->arrays_zeroed;
        stats->bytes_zeroed += v.data.size();
    }
};

result<void> write_out(int fd, const std::byte* p, std::size_t n) {
    if (!write_all(fd, p, n)) return fail_errno("cannot write", "the stripped dump");
    return {};
}

}  // namespace

result<strip_stats> strip_dump(std::span<const std::byte> dump, int out_fd, const strip_options& options) {
    auto reader = hprof_reader::parse(dump);
    if (!reader) return std::unexpected(reader.error());
    record_index idx = record_index::build(*reader, every_heap_dump);
    strip_stats stats;
    stats.truncated = idx.truncated();
    for (const error_info& e : idx.problems())
        if (!(idx.truncated() && e.code == error_code::out_of_bounds))
            return fail(e.code, "refusing to strip a damaged dump: " + e.message, e.offset);

    id_map<char> keep;
    if (options.keep_strings) {
        class_table classes(idx);
        add_class_dumps(idx, classes);
        if (const class_info* s = classes.find_by_name("java.lang.String")) {
            string_value_visitor sv;
            sv.classes = &classes;
            sv.string_class = s->id();
            sv.values = &keep;
            walk_heap(idx, sv);
        }
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    zero_range_visitor zv;
    zv.base = dump.data();
    zv.keep = &keep;
    zv.ranges = &ranges;
    zv.stats = &stats;
    std::uint64_t end = dump.size();
    for (const hprof_record& rec : idx.heap_records()) {
        auto r = walk_heap_body(rec.body, rec.body_offset, idx.id_size(), zv);
        if (r) continue;
        if (rec.truncated && r.error().code == error_code::out_of_bounds) {
            end = r.error().offset;  // leave out the partial sub-record at the cut
            break;
        }
        return fail(r.error().code, "refusing to strip a damaged dump: " + r.error().message, r.error().offset);
    }

    static const std::byte zeros[1 << 16] = {};
    std::uint64_t pos = 0;
    for (auto [off, len] : ranges) {
        if (auto w = write_out(out_fd, dump.data() + pos, off - pos); !w) return std::unexpected(w.error());
        for (std::uint64_t left = len; left > 0;) {
            std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, sizeof zeros));
            if (auto w = write_out(out_fd, zeros, n); !w) return std::unexpected(w.error());
            left -= n;
        }
        pos = off + len;
    }
    if (end > pos)
        if (auto w = write_out(out_fd, dump.data() + pos, end - pos); !w) return std::unexpected(w.error());
    stats.bytes_written = std::max(end, pos);
    return stats;
}

}  // namespace hprof
}  // namespace heapd
