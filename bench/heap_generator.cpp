#include "heap_generator.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "support/hprof_builder.h"

namespace heapd::bench {
namespace {

using test::byte_vector;
using test::class_spec;
using test::field_decl;
using test::hprof_builder;

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_float = 6, t_byte = 8, t_int = 10, t_long = 11;
constexpr std::size_t segment_bytes = 256u << 20;
constexpr std::uint32_t vocabulary = 4096;  // strings shared by the items of a loader's lists

// Object sizes in HotSpot 17 on a 64-bit JVM with compressed oops: the ids the generator gives are
// addresses spaced by them, as in a real dump, so heapd can tell the layout from the addresses.
constexpr std::uint64_t align8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }
constexpr std::uint64_t item_size = 32, string_size = 24, node_size = 32, map_size = 48, list_size = 24,
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

std::string_view heap_writer::random_text(random_stream& stream, std::uint32_t length) {
    text_.resize(length);
    for (std::uint32_t i = 0; i < length; i += 8) {
        std::uint64_t r = stream.next();
        for (std::uint32_t j = i; j < std::min(length, i + 8); ++j, r >>= 8) text_[j] = static_cast<char>('a' + r % 26);
    }
    return text_;
}

std::uint64_t heap_writer::string(std::uint64_t id, std::string_view text) {
    const std::uint64_t bytes = id + string_size;
    auto& f = fields();
    test::put_u8(f, bytes);  // value
    test::put_u1(f, 0);      // coder: LATIN1
    test::put_u4(f, 0);      // hash
    test::put_u1(f, 0);      // hashIsZero
    instance(id, string_);
    b_.primitive_array(bytes, t_byte, static_cast<std::uint32_t>(text.size()),
                       std::as_bytes(std::span(text.data(), text.size())));
    ++objects_;
    return string_size + byte_array_size(text.size());
}

void heap_writer::declare_classes() {
    object_ = load_class("java/lang/Object");
    string_ = load_class("java/lang/String");
    class_ = load_class("java/lang/Class");
    class_loader_ = load_class("java/lang/ClassLoader");
    loader_class_ = load_class("bench/GeneratedLoader");
    thread_ = load_class("java/lang/Thread");
    abstract_map_ = load_class("java/util/AbstractMap");
    hash_map_ = load_class("java/util/HashMap");
    node_ = load_class("java/util/HashMap$Node");
    abstract_list_ = load_class("java/util/AbstractList");
    array_list_ = load_class("java/util/ArrayList");
    object_array_ = load_class("[Ljava/lang/Object;");
    node_array_ = load_class("[Ljava/util/HashMap$Node;");
    byte_array_ = load_class("[B");
    long_array_ = load_class("[J");
    main_ = load_class("bench/Main");
    reference_ = load_class("java/lang/ref/Reference");
    system_ = load_class("java/lang/System");
    properties_ = load_class("java/util/Properties");
    table_entry_ = load_class("java/util/Hashtable$Entry");
    for (const char* kind : {"Weak", "Soft", "Final", "Phantom"})
        reference_kinds_.push_back(load_class(std::string("java/lang/ref/") + kind + "Reference"));
    for (unsigned k = 0; k < o_.loaders; ++k) {
        loader_state& l = loaders_.emplace_back();
        const std::string app = "app" + std::to_string(k);
        l.item = load_class(app + "/Item");
        l.holder = load_class(app + "/Holder");
    }
    for (auto [slot, name] :
         std::initializer_list<std::pair<std::uint64_t*, const char*>>{{&n_value_, "value"},
                                                                       {&n_coder_, "coder"},
                                                                       {&n_hash_, "hash"},
                                                                       {&n_hash_is_zero_, "hashIsZero"},
                                                                       {&n_parent_, "parent"},
                                                                       {&n_classes_, "classes"},
                                                                       {&n_name_, "name"},
                                                                       {&n_tid_, "tid"},
                                                                       {&n_daemon_, "daemon"},
                                                                       {&n_priority_, "priority"},
                                                                       {&n_key_set_, "keySet"},
                                                                       {&n_values_, "values"},
                                                                       {&n_table_, "table"},
                                                                       {&n_entry_set_, "entrySet"},
                                                                       {&n_size_, "size"},
                                                                       {&n_mod_count_, "modCount"},
                                                                       {&n_threshold_, "threshold"},
                                                                       {&n_load_factor_, "loadFactor"},
                                                                       {&n_key_, "key"},
                                                                       {&n_next_, "next"},
                                                                       {&n_element_data_, "elementData"},
                                                                       {&n_vocabulary_, "VOCABULARY"},
                                                                       {&n_referent_, "referent"},
                                                                       {&n_queue_, "queue"},
                                                                       {&n_props_, "props"},
                                                                       {&n_defaults_, "defaults"}})
        *slot = utf8(name);
    for (auto [s, name] : {std::pair{maps, "MAPS"}, {chains, "CHAINS"}, {lists, "LISTS"}, {blobs, "BLOBS"}})
        n_held_[s] = utf8(name);
    // The thread's stack: bench.Main.main, which holds the application loaders.
    const std::uint64_t frame_id = 0x9000;
    b_.frame(frame_id, utf8("main"), utf8("([Ljava/lang/String;)V"), utf8("Main.java"), main_.serial, 42);
    b_.trace(1, 1, {frame_id});
}

void heap_writer::write_roots() {
    b_.begin_segment();
    const klass none{};
    declare(object_, none, 0, {}, 0);
    declare(string_, object_, 0,
            {{n_value_, t_object}, {n_coder_, t_byte}, {n_hash_, t_int}, {n_hash_is_zero_, t_boolean}}, 14);
    declare(class_, object_, 0, {}, 0);
    declare(class_loader_, object_, 0, {{n_parent_, t_object}, {n_classes_, t_object}}, 16);
    declare(loader_class_, class_loader_, 0, {}, 16);
    declare(thread_, object_, 0, {{n_name_, t_object}, {n_tid_, t_long}, {n_daemon_, t_boolean}, {n_priority_, t_int}},
            21);
    declare(abstract_map_, object_, 0, {{n_key_set_, t_object}, {n_values_, t_object}}, 16);
    declare(hash_map_, abstract_map_, 0,
            {{n_table_, t_object},
             {n_entry_set_, t_object},
             {n_size_, t_int},
             {n_mod_count_, t_int},
             {n_threshold_, t_int},
             {n_load_factor_, t_float}},
            48);
    declare(node_, object_, 0, {{n_hash_, t_int}, {n_key_, t_object}, {n_value_, t_object}, {n_next_, t_object}}, 28);
    declare(abstract_list_, object_, 0, {{n_mod_count_, t_int}}, 4);
    declare(array_list_, abstract_list_, 0, {{n_element_data_, t_object}, {n_size_, t_int}}, 16);
    for (const klass& k : {object_array_, node_array_, byte_array_, long_array_}) declare(k, object_, 0, {}, 0);
    declare(main_, object_, 0, {}, 0);
    // java.lang.ref.Reference, which tools look for (VisualVM's heap library refuses a heap without it).
    declare(reference_, object_, 0, {{n_referent_, t_object}, {n_queue_, t_object}, {n_next_, t_object}}, 24);
    // System.props, where tools read the JVM's properties (VisualVM its oop size).
    properties_id_ = meta_.take(24);
    declare(system_, object_, 0, {}, 0, {{n_props_, t_object, test::values().id(properties_id_)}});
    declare(properties_, object_, 0, {{n_defaults_, t_object}, {n_table_, t_object}}, 16);
    declare(table_entry_, object_, 0, {{n_hash_, t_int}, {n_key_, t_object}, {n_value_, t_object}, {n_next_, t_object}},
            28);
    for (const klass& k : {system_, properties_, table_entry_}) b_.root_sticky_class(k.id);
    for (const klass& k : reference_kinds_) {
        declare(k, reference_, 0, {}, 24);
        b_.root_sticky_class(k.id);
    }
    for (const klass& k :
         {object_, string_, class_, class_loader_, loader_class_, thread_, abstract_map_, hash_map_, node_,
          abstract_list_, array_list_, object_array_, node_array_, byte_array_, long_array_, main_, reference_})
        b_.root_sticky_class(k.id);

    // Each loader's objects outside the rounds get their ids now: its Holder's statics name them.
    for (loader_state& l : loaders_) {
        l.loader = meta_.take(loader_size);
        l.class_list = meta_.take(list_size);
        l.class_array = meta_.take(ref_array_size(2));
        l.vocabulary_array = meta_.take(ref_array_size(vocabulary));
        for (std::uint64_t& list : l.holder_lists) list = meta_.take(list_size);
    }
    for (loader_state& l : loaders_) {
        declare(l.item, object_, l.loader, {{n_next_, t_object}, {n_name_, t_object}, {n_value_, t_long}}, 24);
        std::vector<test::static_decl> statics;
        for (std::size_t s = 0; s < 4; ++s)
            statics.push_back({n_held_[s], t_object, test::values().id(l.holder_lists[s])});
        statics.push_back({n_vocabulary_, t_object, test::values().id(l.vocabulary_array)});
        declare(l.holder, object_, l.loader, {}, 0, std::move(statics));
    }
    thread_id_ = meta_.take(thread_size);
    b_.root_thread_object(thread_id_, 1, 1);
    for (const loader_state& l : loaders_) b_.root_java_frame(l.loader, 1, 0);
}

std::uint64_t heap_writer::write_chain(loader_state& l) {
    std::uint64_t at = data_.next, retained = 0;
    const std::uint64_t head = at;
    for (std::uint32_t i = 0; i < o_.round_objects; ++i) {
        std::string_view text = random_text(random_, random_.between(8, 40));
        const std::uint64_t group = item_size + string_size + byte_array_size(text.size());
        auto& f = fields();
        test::put_u8(f, i + 1 < o_.round_objects ? at + group : 0);  // next
        test::put_u8(f, at + item_size);                             // name
        test::put_u8(f, i);                                          // value
        instance(at, l.item);
        string(at + item_size, text);
        at += group;
        retained += group;
        if (i % 65536 == 0 && !maybe_flush()) return 0;
    }
    data_.next = at;
    l.held[chains].push_back(head);
    out_.containers.push_back({head, "chain", static_cast<unsigned>(&l - loaders_.data()), retained});
    return retained;
}

std::uint64_t heap_writer::write_map(loader_state& l) {
    const std::uint32_t n = o_.round_objects;
    std::uint64_t capacity = 16;
    while (capacity * 3 < std::uint64_t{n} * 4) capacity *= 2;
    const std::uint64_t map = data_.take(map_size), table = data_.take(ref_array_size(capacity));
    // Entries in address order; each bucket lists its nodes newest first, as HashMap's own
    // insertions would if they all landed at the head.
    std::vector<std::uint32_t> hashes(n);
    std::vector<std::uint64_t> next(n);
    ids_.assign(capacity, 0);
    std::vector<std::uint32_t> lengths(n);
    std::uint64_t at = data_.next, retained = map_size + ref_array_size(capacity);
    std::vector<std::uint64_t> node_at(n);
    for (std::uint32_t j = 0; j < n; ++j) {
        lengths[j] = random_.between(8, 40);
        hashes[j] = static_cast<std::uint32_t>(random_.next());
        node_at[j] = at;
        const std::uint64_t group = node_size + string_size + byte_array_size(lengths[j]) + item_size;
        std::uint64_t& bucket = ids_[hashes[j] & (capacity - 1)];
        next[j] = bucket;
        bucket = at;
        at += group;
        retained += group;
    }
    auto& f = fields();
    test::put_u8(f, table);  // table
    test::put_u8(f, 0);      // entrySet
    test::put_u4(f, n);      // size
    test::put_u4(f, n);      // modCount
    test::put_u4(f, static_cast<std::uint32_t>(capacity * 3 / 4));
    test::put_u4(f, 0x3F400000);  // loadFactor 0.75f
    test::put_u8(f, 0);           // keySet
    test::put_u8(f, 0);           // values
    instance(map, hash_map_);
    object_array(table, node_array_, ids_);
    for (std::uint32_t j = 0; j < n; ++j) {
        const std::uint64_t node = node_at[j], key = node + node_size;
        const std::uint64_t value = key + string_size + byte_array_size(lengths[j]);
        auto& nf = fields();
        test::put_u4(nf, hashes[j]);
        test::put_u8(nf, key);
        test::put_u8(nf, value);
        test::put_u8(nf, next[j]);
        instance(node, node_);
        string(key, random_text(random_, lengths[j]));
        auto& vf = fields();
        test::put_u8(vf, 0);    // next
        test::put_u8(vf, key);  // name: the key
        test::put_u8(vf, j);    // value
        instance(value, l.item);
        if (!maybe_flush()) return 0;
    }
    data_.next = at;
    l.held[maps].push_back(map);
    out_.containers.push_back({map, "map", static_cast<unsigned>(&l - loaders_.data()), retained});
    return retained;
}

std::uint64_t heap_writer::write_list(loader_state& l) {
    const std::uint32_t n = o_.round_objects, capacity = n + n / 2;  // as ArrayList grows: room left
    const std::uint64_t list = data_.take(list_size), array = data_.take(ref_array_size(capacity));
    ids_.assign(capacity, 0);
    for (std::uint32_t j = 0; j < n; ++j) ids_[j] = data_.take(item_size);
    auto& f = fields();
    test::put_u8(f, array);  // elementData
    test::put_u4(f, n);      // size
    test::put_u4(f, n);      // modCount
    instance(list, array_list_);
    object_array(array, object_array_, ids_);
    for (std::uint32_t j = 0; j < n; ++j) {
        auto& itf = fields();
        test::put_u8(itf, 0);                                         // next
        test::put_u8(itf, l.words[random_.next() % l.words.size()]);  // name: a shared word
        test::put_u8(itf, j);                                         // value
        instance(ids_[j], l.item);
        if (j % 65536 == 0 && !maybe_flush()) return 0;
    }
    l.held[lists].push_back(list);
    const std::uint64_t retained = list_size + ref_array_size(capacity) + std::uint64_t{n} * item_size;
    out_.containers.push_back({list, "list", static_cast<unsigned>(&l - loaders_.data()), retained});
    return retained;
}

std::uint64_t heap_writer::write_blobs(loader_state& l) {
    const std::uint32_t n = std::max<std::uint32_t>(o_.round_objects / 24, 1);
    const std::uint64_t array = data_.take(ref_array_size(n));
    std::vector<std::uint32_t> lengths(n);
    ids_.resize(n);
    std::uint64_t retained = ref_array_size(n);
    for (std::uint32_t j = 0; j < n; ++j) {
        lengths[j] = random_.between(16, 384);
        ids_[j] = data_.take(long_array_size(lengths[j]));
        retained += long_array_size(lengths[j]);
    }
    object_array(array, object_array_, ids_);
    if (payload_.empty()) {
        payload_.resize(8 * 384);
        for (std::byte& x : payload_) x = static_cast<std::byte>(random_.next());
    }
    for (std::uint32_t j = 0; j < n; ++j) {
        b_.primitive_array(ids_[j], t_long, lengths[j], std::span(payload_).first(8 * std::size_t{lengths[j]}));
        ++objects_;
    }
    l.held[blobs].push_back(array);
    out_.containers.push_back({array, "blobs", static_cast<unsigned>(&l - loaders_.data()), retained});
    return retained;
}

bool heap_writer::write_round(loader_state& l) {
    if (l.words.empty()) {
        // The vocabulary: words shared by the items of the lists; every loader has the same words,
        // so each is a duplicated string, as in real heaps.
        random_stream words{o_.seed * 7919 + 1};
        for (std::uint32_t w = 0; w < vocabulary; ++w) {
            std::string text =
                "word-" + std::to_string(w) + "-" + std::string(random_text(words, words.between(4, 16)));
            std::uint64_t id = data_.next;
            data_.take(string(id, text));
            l.words.push_back(id);
        }
    }
    if (write_chain(l) == 0 || write_map(l) == 0) return false;
    if (write_list(l) == 0) return false;
    if (!maybe_flush()) return false;
    write_blobs(l);
    return maybe_flush();
}

void heap_writer::write_loader_objects(loader_state& l) {
    auto& f = fields();
    test::put_u8(f, 0);             // parent
    test::put_u8(f, l.class_list);  // classes
    instance(l.loader, loader_class_);
    auto& lf = fields();
    test::put_u8(lf, l.class_array);
    test::put_u4(lf, 2);
    test::put_u4(lf, 2);
    instance(l.class_list, array_list_);
    const std::uint64_t classes[] = {l.item.id, l.holder.id};
    object_array(l.class_array, object_array_, classes);
    object_array(l.vocabulary_array, object_array_, l.words);
    for (std::size_t s = 0; s < 4; ++s) {
        const std::vector<std::uint64_t>& held = l.held[s];
        const std::uint64_t array = meta_.take(ref_array_size(held.size()));
        auto& hf = fields();
        test::put_u8(hf, array);
        test::put_u4(hf, static_cast<std::uint32_t>(held.size()));
        test::put_u4(hf, static_cast<std::uint32_t>(held.size()));
        instance(l.holder_lists[s], array_list_);
        object_array(array, object_array_, held);
        const unsigned loader = static_cast<unsigned>(&l - loaders_.data());
        std::uint64_t retained = list_size + ref_array_size(held.size());
        for (const generated_container& c : out_.containers)
            if (c.loader == loader && std::find(held.begin(), held.end(), c.id) != held.end()) retained += c.retained;
        static const char* const kinds[] = {"maps", "chains", "lists", "blobs-lists"};
        out_.holders.push_back({l.holder_lists[s], kinds[s], loader, retained});
    }
}

void heap_writer::write_properties() {
    const std::pair<const char*, const char*> properties[] = {{"java.version", "17.0.13"},
                                                              {"java.vm.name", "heapd benchmark generator"},
                                                              {"java.vm.compressedOopsMode", "Zero based"},
                                                              {"sun.arch.data.model", "64"}};
    const std::uint64_t table = meta_.take(ref_array_size(std::size(properties)));
    ids_.clear();
    for (std::size_t i = 0; i < std::size(properties); ++i) ids_.push_back(meta_.take(node_size));
    auto& f = fields();
    test::put_u8(f, 0);      // defaults
    test::put_u8(f, table);  // table
    instance(properties_id_, properties_);
    object_array(table, object_array_, ids_);
    for (std::size_t i = 0; i < std::size(properties); ++i) {
        auto [key, value] = properties[i];
        const std::uint64_t key_id = meta_.take(string_size + byte_array_size(std::strlen(key)));
        const std::uint64_t value_id = meta_.take(string_size + byte_array_size(std::strlen(value)));
        auto& ef = fields();
        test::put_u4(ef, 0);  // hash
        test::put_u8(ef, key_id);
        test::put_u8(ef, value_id);
        test::put_u8(ef, 0);  // next
        instance(ids_[i], table_entry_);
        string(key_id, key);
        string(value_id, value);
    }
}

std::expected<generated_heap, std::string> heap_writer::run() {
    b_.reserve(segment_bytes + (64u << 20));
    declare_classes();
    write_roots();
    unsigned rounds = 0;
    while (b_.size() < o_.target_bytes || rounds == 0) {
        for (loader_state& l : loaders_)
            if (!write_round(l)) return std::unexpected("cannot write the dump");
        ++rounds;
    }
    for (loader_state& l : loaders_) write_loader_objects(l);
    write_properties();
    const std::uint64_t name = meta_.take(string_size + byte_array_size(4));
    auto& f = fields();
    test::put_u8(f, name);  // name
    test::put_u8(f, 1);     // tid
    test::put_u1(f, 0);     // daemon
    test::put_u4(f, 5);     // priority
    instance(thread_id_, thread_);
    string(name, "main");
    b_.end_segment();
    b_.heap_dump_end();
    if (!b_.flush_to(fd_)) return std::unexpected("cannot write the dump");
    out_.bytes = b_.size();
    out_.objects = objects_;
    out_.classes = next_serial_ - 1;
    out_.rounds = rounds;
    return std::move(out_);
}

}  // namespace

std::expected<generated_heap, std::string> generate_heap(int fd, const generator_options& options) {
    if (options.loaders == 0 || options.round_objects == 0) return std::unexpected("nothing to generate");
    return heap_writer(fd, options).run();
}

}  // namespace heapd::bench
