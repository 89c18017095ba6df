#include "heap_writer.h"

namespace heapd::bench::internal {

// Each shape writes its objects in address order and notes the container with the bytes it retains.

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

}  // namespace heapd::bench::internal
