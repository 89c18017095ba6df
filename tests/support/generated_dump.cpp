#include "support/generated_dump.h"

#include <sstream>
#include <stdexcept>

#include "support/jvm_process.h"

namespace heapd::test {

generated_dump generate_dump(const std::string& path, const std::string& size, std::uint32_t round_objects) {
    const std::string generator = std::string(HEAPD_BINARY_DIR) + "/bench/hprof_generator";
    command_result r = run_command(
        {generator, "--size", size, "--round-objects", std::to_string(round_objects), "--containers", path});
    if (r.exit_code != 0) throw std::runtime_error("hprof_generator failed: " + r.err);
    generated_dump out;
    out.path = path;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string first;
        words >> first;
        if (first == "wrote") {
            std::string file, bytes_word, objects_word;
            words >> file >> out.bytes >> bytes_word >> out.objects >> objects_word;
            if (bytes_word != "bytes," || objects_word != "objects") throw std::runtime_error("bad summary: " + line);
        } else if (first == "container" || first == "holder") {
            generated_dump::container c;
            if (!(words >> c.id >> c.kind >> c.loader >> c.retained)) throw std::runtime_error("bad line: " + line);
            (first == "holder" ? out.holders : out.containers).push_back(std::move(c));
        }
    }
    if (out.objects == 0 || out.containers.empty()) throw std::runtime_error("hprof_generator printed: " + r.out);
    return out;
}

}  // namespace heapd::test
