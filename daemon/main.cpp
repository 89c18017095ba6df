#include <cstdio>
#include "formats/mapped_file.h"
#include "formats/hprof_reader.h"
#include "formats/record_index.h"
#include "formats/census.h"
#include "formats/heap_walk.h"
using namespace heapd;
int main(int argc, char** argv) {
  auto m = mapped_file::open(argv[1]);
  if (!m) { fprintf(stderr, "%s\n", m.error().describe().c_str()); return 2; }
  auto r = hprof_reader::parse(m->bytes());
  if (!r) { fprintf(stderr, "%s\n", r.error().describe().c_str()); return 2; }
  auto idx = record_index::build(*r);
  class_table ct(idx);
  heap_census c(idx, ct, 20);
  std::vector<error_info> probs;
  walk_heap(idx, c, &probs);
  auto res = c.finish();
  printf("layout %s evidence %llu\n", res.layout.c_str(), (unsigned long long)res.layout_evidence);
  for (auto& e : res.histogram) printf("%llu %llu %s\n", (unsigned long long)e.instances, (unsigned long long)e.shallow_bytes, e.class_name.c_str());
  for (auto& p : idx.problems()) fprintf(stderr, "problem: %s\n", p.describe().c_str());
  for (auto& p : probs) fprintf(stderr, "problem: %s\n", p.describe().c_str());
}
