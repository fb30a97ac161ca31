#include "engine/util/secure_random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "engine/util/error.hpp"

namespace zk {

void fill_random_bytes(std::span<std::byte> out, ReadRandomBytes read) {
  size_t filled = 0;
  while (filled < out.size()) {
    const ssize_t got = read(out.data() + filled, out.size() - filled, 0);
    if (got > 0) {
      filled += size_t(got);
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      fail("getrandom failed ({}): the operating system's random source is unavailable, so no proof can be "
           "blinded; run on Linux 3.17 or later with a working /dev/urandom",
           got == 0 ? "no bytes returned" : std::strerror(errno));
    }
  }
}

uint64_t SecureRandom::next_u64() {
  uint64_t word = 0;
  fill_random_bytes(std::as_writable_bytes(std::span(&word, 1)), ::getrandom);
  return word;
}

}  // namespace zk
