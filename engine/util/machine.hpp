// machine.hpp — facts about the host that size checks need: memory available now (MemAvailable
// from /proc/meminfo; 0 when unknown) and a human-readable byte count.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace zk {

inline uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

inline std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  return fmt::format("{:.1f} {}", bytes, units[u]);
}

}  // namespace zk
