#include "heap_generator.h"

#include <cstring>

#include "heap_writer.h"

namespace heapd::bench {
namespace internal {

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

}  // namespace internal

std::expected<generated_heap, std::string> generate_heap(int fd, const generator_options& options) {
    if (options.loaders == 0 || options.round_objects == 0) return std::unexpected("nothing to generate");
    return internal::heap_writer(fd, options).run();
}

}  // namespace heapd::bench
