#include "formats/hprof/legacy_records.h"

#include <bit>

#include "formats/hprof/basic_type.h"
#include "formats/hprof/big_endian.h"
#include "formats/hprof/java_names.h"

namespace heapd {
inline namespace hprof {
namespace {

std::unexpected<error_info> too_short(const hprof_record& rec) {
    return fail(error_code::out_of_bounds, std::string(record_tag_name(rec.tag)) + " record is shorter than its fields",
                rec.offset);
}

}  // namespace

result<alloc_sites_table> decode_alloc_sites(const hprof_record& rec, const record_index& idx) {
    constexpr std::size_t head = 34, site = 25;
    const std::byte* p = rec.body.data();
    if (rec.body.size() < head) return too_short(rec);
    alloc_sites_table t;
    t.flags = be::u2(p);
    t.cutoff_ratio = std::bit_cast<float>(be::u4(p + 2));
    t.total_live_bytes = be::u4(p + 6);
    t.total_live_instances = be::u4(p + 10);
    t.total_allocated_bytes = be::u8(p + 14);
    t.total_allocated_instances = be::u8(p + 22);
    std::uint32_t n = be::u4(p + 30);
    if ((rec.body.size() - head) / site < n) return too_short(rec);
    t.sites.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::byte* s = p + head + std::size_t{i} * site;
        alloc_site a;
        a.array_type = be::u1(s);
        std::uint32_t class_serial = be::u4(s + 1);
        a.trace_serial = be::u4(s + 5);
        a.live_bytes = be::u4(s + 9);
        a.live_instances = be::u4(s + 13);
        a.allocated_bytes = be::u4(s + 17);
        a.allocated_instances = be::u4(s + 21);
        if (const loaded_class* c = idx.class_by_serial(class_serial))
            a.class_name = java_class_name(idx.utf8(c->name_id));
        else if (is_primitive(a.array_type))
            a.class_name = std::string(primitive_name(a.array_type)) + "[]";
        else
            a.class_name = "<class serial " + std::to_string(class_serial) + ">";
        t.sites.push_back(std::move(a));
    }
    return t;
}

result<cpu_samples_table> decode_cpu_samples(const hprof_record& rec) {
    const std::byte* p = rec.body.data();
    if (rec.body.size() < 8) return too_short(rec);
    cpu_samples_table t;
    t.total_samples = be::u4(p);
    std::uint32_t n = be::u4(p + 4);
    if ((rec.body.size() - 8) / 8 < n) return too_short(rec);
    for (std::uint32_t i = 0; i < n; ++i) t.traces.emplace_back(be::u4(p + 8 + 8 * i), be::u4(p + 12 + 8 * i));
    return t;
}

result<heap_summary_info> decode_heap_summary(const hprof_record& rec) {
    const std::byte* p = rec.body.data();
    if (rec.body.size() < 24) return too_short(rec);
    return heap_summary_info{be::u4(p), be::u4(p + 4), be::u8(p + 8), be::u8(p + 16)};
}

result<control_settings_info> decode_control_settings(const hprof_record& rec) {
    const std::byte* p = rec.body.data();
    if (rec.body.size() < 6) return too_short(rec);
    return control_settings_info{be::u4(p), be::u2(p + 4)};
}

}  // namespace hprof
}  // namespace heapd
