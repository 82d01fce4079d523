// crc64(): the one place locus calls isa-l's CRC64 kernel (see crc64.h).
//
// crc64_ecma_refl inverts the seed on entry and the result on exit, which is
// exactly what makes a previous result usable as the seed of the next piece;
// so no extra inversion is needed here for incremental use to work.
#include "core/common/crc64.h"

#include <isa-l/crc64.h>

namespace locus {

uint64_t crc64(const void* data, size_t len, uint64_t seed) {
  if (len == 0) return seed;  // isa-l would also return it, but need not read a null pointer
  return crc64_ecma_refl(seed, static_cast<const unsigned char*>(data), static_cast<uint64_t>(len));
}

}  // namespace locus
