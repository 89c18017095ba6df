#pragma once
// Inside the dump generator (heap_generator.h): the writer of one dump, its classes and sizes.
// heap_generator.cpp writes the classes, roots and what holds the data; heap_shapes.cpp the
// shapes each round adds (chains, maps, lists, payloads).
#include <algorithm>
#include <array>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "heap_generator.h"
#include "support/hprof_builder.h"

namespace heapd::bench::internal {

using test::byte_vector;
using test::class_spec;
using test::field_decl;
using test::hprof_builder;

inline constexpr std::uint8_t t_object = 2, t_boolean = 4, t_float = 6, t_byte = 8, t_int = 10, t_long = 11;
inline constexpr std::size_t segment_bytes = 256u << 20;
inline constexpr std::uint32_t vocabulary = 4096;  // strings shared by the items of a loader's lists

// Object sizes in HotSpot 17 on a 64-bit JVM with compressed oops: the ids the generator gives are
// addresses spaced by them, as in a real dump, so heapd can tell the layout from the addresses.
constexpr std::uint64_t align8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }
inline constexpr std::uint64_t item_size = 32, string_size = 24, node_size = 32, map_size = 48, list_size = 24,
                               loader_size = 32, thread_size = 40;
constexpr std::uint64_t byte_array_size(std::uint64_t n) { return align8(16 + n); }
constexpr std::uint64_t long_array_size(std::uint64_t n) { return 16 + 8 * n; }
constexpr std::uint64_t ref_array_size(std::uint64_t n) { return align8(16 + 4 * n); }

// SplitMix64: a fast deterministic stream of random numbers.
struct random_stream {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint32_t between(std::uint32_t low, std::uint32_t high) {  // in [low, high]
        return low + static_cast<std::uint32_t>(next() % (high - low + 1));
    }
};

// Hands out ids as addresses in a region of the heap.
struct address_space {
    std::uint64_t next;
    std::uint64_t take(std::uint64_t size) {
        std::uint64_t at = next;
        next += align8(size);
        return at;
    }
};

// The dump being written, its classes and what it counted.
class heap_writer {
public:
    heap_writer(int fd, const generator_options& o) : fd_(fd), o_(o), random_{o.seed} {}
    std::expected<generated_heap, std::string> run();

private:
    // A class: its object id, LOAD_CLASS serial and the instance field bytes of it and its supers.
    struct klass {
        std::uint64_t id = 0;
        std::uint32_t serial = 0;
    };
    // Per application loader: its objects outside the data rounds and what the rounds made.
    struct loader_state {
        std::uint64_t loader = 0, class_list = 0, class_array = 0, vocabulary_array = 0;
        std::array<std::uint64_t, 4> holder_lists{};  // ArrayLists of the maps, chains, lists, blobs
        std::array<std::vector<std::uint64_t>, 4> held;
        klass item, holder;
        std::vector<std::uint64_t> words;  // the vocabulary's String ids
    };
    enum shape { maps, chains, lists, blobs };

    std::uint64_t utf8(std::string_view text) {
        std::uint64_t id = next_utf8_++;
        b_.utf8(id, text);
        return id;
    }
    klass load_class(std::string_view name) {
        klass k{mirrors_.take(0x80), next_serial_++};
        b_.load_class(k.serial, k.id, 0, utf8(name));
        return k;
    }
    void declare(const klass& k, const klass& super, std::uint64_t loader, std::vector<field_decl> fields,
                 std::uint32_t instance_bytes, std::vector<test::static_decl> statics = {}) {
        class_spec s;
        s.class_id = k.id;
        s.super_id = super.id;
        s.loader_id = loader;
        s.instance_size = instance_bytes;
        s.fields = std::move(fields);
        s.statics = std::move(statics);
        b_.class_dump(s);
        ++objects_;
    }
    // Ends the open segment and writes it out when it has grown big; false on a write error.
    bool maybe_flush() {
        if (b_.bytes().size() < segment_bytes) return true;
        b_.end_segment();
        if (!b_.flush_to(fd_)) return false;
        b_.begin_segment();
        return true;
    }
    byte_vector& fields() {
        fields_.clear();
        return fields_;
    }
    void instance(std::uint64_t id, const klass& k) {
        b_.instance(id, k.id, fields_);
        ++objects_;
    }
    // A java.lang.String at id holding text as LATIN1 bytes at id + string_size; its bytes.
    std::uint64_t string(std::uint64_t id, std::string_view text);
    std::string_view random_text(random_stream& r, std::uint32_t length);
    void object_array(std::uint64_t id, const klass& k, std::span<const std::uint64_t> elements) {
        b_.object_array(id, k.id, elements);
        ++objects_;
    }

    void declare_classes();
    void write_roots();
    bool write_round(loader_state& l);
    std::uint64_t write_chain(loader_state& l);
    std::uint64_t write_map(loader_state& l);
    std::uint64_t write_list(loader_state& l);
    std::uint64_t write_blobs(loader_state& l);
    void write_loader_objects(loader_state& l);
    void write_properties();

    int fd_;
    generator_options o_;
    random_stream random_;
    hprof_builder b_{8, "JAVA PROFILE 1.0.2", 1764000000000};
    // One heap, as HotSpot's is: class mirrors, then the objects made outside the rounds (less than
    // a MiB whatever the size), then the rounds' data.
    address_space mirrors_{0x6'0000'0000}, meta_{0x6'0001'0000}, data_{0x6'0400'0000};
    std::uint64_t next_utf8_ = 0x10000, objects_ = 0;
    std::uint32_t next_serial_ = 1;
    byte_vector fields_;
    std::string text_;
    std::vector<std::uint64_t> ids_;
    std::vector<std::byte> payload_;
    // Field names.
    std::uint64_t n_value_ = 0, n_coder_ = 0, n_hash_ = 0, n_hash_is_zero_ = 0, n_parent_ = 0, n_classes_ = 0,
                  n_name_ = 0, n_tid_ = 0, n_daemon_ = 0, n_priority_ = 0, n_key_set_ = 0, n_values_ = 0, n_table_ = 0,
                  n_entry_set_ = 0, n_size_ = 0, n_mod_count_ = 0, n_threshold_ = 0, n_load_factor_ = 0, n_key_ = 0,
                  n_next_ = 0, n_element_data_ = 0, n_vocabulary_ = 0, n_referent_ = 0, n_queue_ = 0, n_props_ = 0,
                  n_defaults_ = 0;
    std::array<std::uint64_t, 4> n_held_{};  // the Holder's statics, by shape
    klass object_, string_, class_, class_loader_, loader_class_, thread_, abstract_map_, hash_map_, node_,
        abstract_list_, array_list_, object_array_, node_array_, byte_array_, long_array_, main_, reference_, system_,
        properties_, table_entry_;
    std::vector<klass> reference_kinds_;  // Weak, Soft, Final and PhantomReference
    std::vector<loader_state> loaders_;
    std::uint64_t thread_id_ = 0, properties_id_ = 0;
    generated_heap out_;
};

}  // namespace heapd::bench::internal
