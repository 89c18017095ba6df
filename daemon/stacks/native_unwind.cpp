#include "daemon/stacks/native_unwind.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <libunwind-ptrace.h>
#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "attach/attach_session.h"
#include "attach/process_info.h"
#include "base/fd_io.h"
#include "base/unique_fd.h"
#include "daemon/stacks/proc_files.h"

namespace heapd::daemon {
namespace {

// One entry of a perf map: "START SIZE NAME", START and SIZE in hex.
struct perf_symbol {
    std::uint64_t start = 0, size = 0;
    std::string name;
};

// Calls f(line) for each line of text, without its newline.
template <class F>
void for_each_line(const std::string& text, F&& f) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) eol = text.size();
        f(text.substr(pos, eol - pos));
        pos = eol + 1;
    }
}

std::vector<perf_symbol> parse_perf_map(const std::string& text) {
    std::vector<perf_symbol> out;
    for_each_line(text, [&](const std::string& line) {
        char* end = nullptr;
        perf_symbol s;
        s.start = std::strtoull(line.c_str(), &end, 16);
        if (end == line.c_str() || *end != ' ') return;
        char* size_end = nullptr;
        s.size = std::strtoull(end + 1, &size_end, 16);
        if (size_end == end + 1 || *size_end != ' ' || s.size == 0) return;
        s.name = size_end + 1;
        out.push_back(std::move(s));
    });
    std::sort(out.begin(), out.end(), [](const perf_symbol& a, const perf_symbol& b) { return a.start < b.start; });
    return out;
}

std::string demangle(const char* name) {
    int status = 0;
    char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status != 0 || plain == nullptr) return name;
    std::string out = plain;
    std::free(plain);
    return out;
}

// The function name at a frame and the offset into it.
struct frame_name {
    bool found = false;
    std::string symbol;
    std::uint64_t offset = 0;
};

}  // namespace

std::vector<mapping> parse_maps(const std::string& text) {
    std::vector<mapping> out;
    for_each_line(text, [&](const std::string& line) {
        mapping m;
        char perms[8] = {};
        unsigned long long start = 0, end = 0, offset = 0, inode = 0;
        int consumed = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %llu %n", &start, &end, perms, &offset, &inode,
                        &consumed) < 5)
            return;
        m.start = start;
        m.end = end;
        m.file_offset = offset;
        m.executable = perms[2] == 'x';
        if (consumed > 0 && static_cast<std::size_t>(consumed) <= line.size()) m.path = line.substr(consumed);
        out.push_back(std::move(m));
    });
    return out;
}

// libunwind's address space (shared by all threads of the process), the maps and the caches.
struct native_unwinder::state {
    unw_addr_space_t space = nullptr;
    std::vector<mapping> maps;
    std::vector<perf_symbol> perf;
    std::map<std::pair<std::uint64_t, bool>, frame_name> names;  // (ip, innermost) -> name

    const mapping* find_mapping(std::uint64_t addr) const {
        auto it = std::upper_bound(maps.begin(), maps.end(), addr,
                                   [](std::uint64_t a, const mapping& m) { return a < m.start; });
        if (it == maps.begin()) return nullptr;
        --it;
        return addr < it->end ? &*it : nullptr;
    }

    const perf_symbol* find_perf(std::uint64_t addr) const {
        auto it = std::upper_bound(perf.begin(), perf.end(), addr,
                                   [](std::uint64_t a, const perf_symbol& s) { return a < s.start; });
        if (it == perf.begin()) return nullptr;
        --it;
        return addr < it->start + it->size ? &*it : nullptr;
    }

    // Names the cursor's frame with libunwind (which reads .symtab/.dynsym of the mapped file).
    const frame_name& elf_name(unw_cursor_t& cursor, std::uint64_t ip, bool innermost) {
        auto [it, fresh] = names.try_emplace({ip, innermost});
        if (!fresh) return it->second;
        char buf[2048];
        unw_word_t offset = 0;
        int r = unw_get_proc_name(&cursor, buf, sizeof buf, &offset);
        if (r != 0 && r != -UNW_ENOMEM) return it->second;  // ENOMEM: truncated to the buffer, still useful
        buf[sizeof buf - 1] = '\0';
        if (buf[0] == '\0') return it->second;
        // libunwind names an address after the nearest symbol below it, however far: in a library
        // stripped to its dynamic symbols, a static function takes the name of an exported one
        // before it. The function's bounds from its unwind info (FDE) tell the two apart: a
        // name is kept only if its symbol starts where the function does.
        unw_proc_info_t info{};
        if (unw_get_proc_info(&cursor, &info) == 0 && info.start_ip != 0) {
            if (ip - offset != info.start_ip) return it->second;
        }
        it->second = frame_name{true, demangle(buf), offset};
        return it->second;
    }
};

namespace {

// The JVM's perf map, /tmp/perf-NSPID.map in its own root (-XX:+DumpPerfMapAtExit, jcmd
// Compiler.perfmap). That /tmp is its user's to change: neither it nor the map is followed if it is
// a symbolic link, and the map must be a regular file of the JVM's user (or root).
std::optional<std::string> read_perf_map(pid_t pid) {
    unique_fd tmp(attach::open_jvm_tmp(pid));
    if (!tmp) return std::nullopt;
    const std::string name = "perf-" + std::to_string(namespace_pid(pid)) + ".map";
    unique_fd fd(::openat(tmp.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat map {
    }, process{};
    if (!fd || ::fstat(fd.get(), &map) != 0 || !S_ISREG(map.st_mode)) return std::nullopt;
    if (::stat(attach::proc_path(pid).c_str(), &process) != 0) return std::nullopt;
    if (map.st_uid != process.st_uid && map.st_uid != 0) return std::nullopt;
    return read_to_end(fd.get(), max_proc_file_bytes);
}

}  // namespace

native_unwinder::native_unwinder(pid_t pid) : state_(std::make_unique<state>()) {
    if (auto maps = read_small_file(attach::proc_path(pid, "maps"), max_proc_file_bytes))
        state_->maps = parse_maps(*maps);
    if (auto text = read_perf_map(pid)) state_->perf = parse_perf_map(*text);
    state_->space = unw_create_addr_space(&_UPT_accessors, 0);
    if (state_->space != nullptr) unw_set_caching_policy(state_->space, UNW_CACHE_GLOBAL);
}

native_unwinder::~native_unwinder() {
    if (state_->space != nullptr) unw_destroy_addr_space(state_->space);
}

std::vector<native_frame> native_unwinder::unwind(pid_t tid, unsigned max_frames, std::string& error) {
    std::vector<native_frame> frames;
    if (state_->space == nullptr) {
        error = "libunwind could not create an address space";
        return frames;
    }
    void* upt = _UPT_create(tid);
    if (upt == nullptr) {
        error = "libunwind could not attach its ptrace accessors";
        return frames;
    }
    unw_cursor_t cursor;
    int r = unw_init_remote(&cursor, state_->space, upt);
    if (r < 0) {
        error = std::string("cannot read the registers: ") + unw_strerror(r);
        _UPT_destroy(upt);
        return frames;
    }
    std::uint64_t last_ip = 0, last_sp = 0;
    for (unsigned depth = 0;; ++depth) {
        if (depth == max_frames) {
            error = "stopped after " + std::to_string(max_frames) + " frames";
            break;
        }
        unw_word_t ip = 0, sp = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        unw_get_reg(&cursor, UNW_REG_SP, &sp);
        if (ip == 0) break;  // the outermost frame of a thread
        if (depth > 0 && ip == last_ip && sp == last_sp) {
            error = "the unwind repeats a frame";
            break;
        }
        last_ip = ip;
        last_sp = sp;
        native_frame f;
        f.ip = ip;
        // A caller's ip is a return address: the call itself is the byte before.
        std::uint64_t lookup = depth == 0 ? ip : ip - 1;
        if (const mapping* m = state_->find_mapping(lookup)) {
            bool file = !m->path.empty() && m->path[0] == '/';
            f.module = m->path.empty() ? "[anon]" : m->path;
            if (file) {
                f.module_offset = ip - m->start + m->file_offset;
                const frame_name& n = state_->elf_name(cursor, ip, depth == 0);
                if (n.found) {
                    f.symbol = n.symbol;
                    f.symbol_offset = n.offset;
                    f.symbol_source = "elf";
                }
            } else if (m->path.empty() && m->executable) {
                // JIT-compiled or interpreter code: named only if the JVM wrote a perf map.
                if (const perf_symbol* s = state_->find_perf(lookup)) {
                    f.symbol = s->name;
                    f.symbol_offset = ip - s->start;
                    f.symbol_source = "perf-map";
                }
            }
        }
        frames.push_back(std::move(f));
        r = unw_step(&cursor);
        if (r == 0) break;
        if (r < 0) {
            error = std::string("the unwind stops here: ") + unw_strerror(r);
            break;
        }
    }
    _UPT_destroy(upt);
    return frames;
}

}  // namespace heapd::daemon
