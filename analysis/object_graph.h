#pragma once
// The heap as a graph: dense node numbers for object ids, shallow sizes, classes and the strong
// references between objects, built from the mapped dump in three walks.
//
// Memory, beyond the mapping: 20 bytes per node (record offset 8, class key 4, shallow size 4,
// first-edge index 4) and 4 bytes per reference. Ids are not kept: each is read from its record in
// the dump, so the graph must not outlive the dump's mapping. While it is built, 16 bytes per node
// hold ids and offsets, plus up to 8 bytes per node while sorting them and 8 while the offsets are
// taken out at the end.
// First-edge indexes keep their low 32 bits per node; where they pass each multiple of 2^32, the
// node is noted (a few entries for billions of references), so any number of references works.
// Node numbers are 32-bit (object_graph) for heaps of fewer than 2^32 - 1 objects; wider heaps take
// 64-bit ones (wide_object_graph): 4 bytes more per reference, and per node in the arrays the
// analyses keep by node (dominator_tree.h). analyze_dump chooses by the census's object count.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "analysis/census.h"
#include "base/big_memory.h"
#include "base/error.h"
#include "formats/hprof/big_endian.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace analysis {

// Told now and then how much of a long computation is done (0 to 1), on the thread that runs it.
using progress_callback = std::function<void(double done)>;

// What counts as a reference when building the graph.
struct graph_options {
    bool instances_reference_their_class = true;  // an object keeps its class alive, as in the JVM
    unsigned threads = 0;  // walks of the dump in parallel (0: one per core, at most 4); same graph for any count
    unsigned edge_index_bits = 32;  // bits of each node's first-edge index kept per node (a test lowers
                                    // it to take the path of more than 2^32 references on a small graph)
    progress_callback progress;     // told as the walks go (the first part's share of each walk)
    // A graph of 32-bit nodes refuses a heap of this many objects or more (a test lowers it to take
    // the 64-bit path on a small heap); it can never number more than 2^32 - 2.
    std::uint64_t narrow_nodes_below = ~std::uint32_t{0};
};

template <typename Node>
struct graph_builder;

// The strong object graph of a dump; nodes (of type Node: std::uint32_t or std::uint64_t) are
// numbered in ascending id order.
template <typename Node>
class basic_object_graph {
public:
    using node_type = Node;
    static constexpr Node no_node = ~Node{0};

    // Builds the graph. census gives the shallow sizes (it must come from the same dump).
    static result<basic_object_graph> build(const record_index& idx, const class_table& classes,
                                            const census_result& census, const graph_options& options = {});

    Node size() const { return static_cast<Node>(offsets_.size()); }
    // The node of an object id, or no_node.
    Node node_of(std::uint64_t id) const;
    // The object id of a node, read from its record in the dump.
    std::uint64_t id(Node node) const { return be::id(dump_ + offsets_[node] + 1, id_size_); }
    std::uint64_t record_offset(Node node) const { return offsets_[node]; }
    std::uint64_t shallow_size(Node node) const { return std::uint64_t{shallow_[node]} * 8; }
    std::uint32_t class_key(Node node) const { return key_[node]; }
    // The Java name of a class key ("java.util.HashMap$Node", "byte[]", "java.lang.Class").
    const std::string& key_name(std::uint32_t key) const { return key_names_[key]; }
    std::uint32_t key_count() const { return static_cast<std::uint32_t>(key_names_.size()); }
    // The class id a key stands for (that of java.lang.Class for class objects); 0 for primitive
    // arrays and objects of no known class.
    std::uint64_t key_class_id(std::uint32_t key) const { return key_class_ids_[key]; }
    // The nodes node references (no_node entries stand for ids the dump does not hold).
    std::span<const Node> references(Node node) const {
        return {edges_.data() + edge_begin(node), edges_.data() + edge_begin(node + 1)};
    }
    std::uint64_t reference_count() const { return edges_.size(); }
    // GC roots as nodes, each once, in ascending node order.
    const std::vector<Node>& roots() const { return roots_; }
    // Per root (parallel to roots()), its kinds as bits 1 << root_kind.
    const std::vector<std::uint32_t>& root_kinds() const { return root_kinds_; }
    // The kinds of root a node is (bits 1 << root_kind), 0 when it is none.
    std::uint32_t root_kinds_of(Node node) const;

private:
    struct node_record {
        std::uint64_t id;
        std::uint64_t offset;
    };
    friend struct graph_builder<Node>;

    big_vector<node_record> nodes_;      // while building only: ids and offsets, by id
    big_vector<std::uint64_t> offsets_;  // each node's record offset in the dump (its tag)
    const std::byte* dump_ = nullptr;    // the dump's first byte: dump_ + offset is a record
    unsigned id_size_ = 8;
    big_vector<Node> bucket_start_;  // directory over id >> shift_ for node_of
    std::uint64_t min_id_ = 0;
    unsigned shift_ = 0;
    big_vector<std::uint32_t> key_;
    big_vector<std::uint32_t> shallow_;  // in units of 8 bytes (sizes are 8-aligned)
    // Where node's references start in edges_ (node up to size()).
    std::uint64_t edge_begin(Node node) const {
        std::uint64_t high = 0;
        if (!edge_wraps_.empty()) [[unlikely]]
            high = static_cast<std::uint64_t>(std::upper_bound(edge_wraps_.begin(), edge_wraps_.end(), node) -
                                              edge_wraps_.begin());
        return high << edge_bits_ | edge_low_[node];
    }

    big_vector<std::uint32_t> edge_low_;  // first-edge index modulo 2^edge_bits_, size() + 1 entries
    std::vector<Node> edge_wraps_;        // k-th entry: the first node whose index is k * 2^edge_bits_ or more
    unsigned edge_bits_ = 32;
    big_vector<Node> edges_;
    std::vector<Node> roots_;
    std::vector<std::uint32_t> root_kinds_;
    std::vector<std::string> key_names_;
    std::vector<std::uint64_t> key_class_ids_;
};

using object_graph = basic_object_graph<std::uint32_t>;       // fewer than 2^32 - 1 objects
using wide_object_graph = basic_object_graph<std::uint64_t>;  // any number of objects
extern template class basic_object_graph<std::uint32_t>;
extern template class basic_object_graph<std::uint64_t>;

}  // namespace analysis
}  // namespace heapd
