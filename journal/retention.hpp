// How much room the journal takes, and gives back: the bytes a turn's
// directory holds and the free-space budget that keeps the
// journal off the disk's last space (DESIGN.md, "The journal on a full disk").
#pragma once

#include <cstdint>

namespace leasefs::journal {

// Allocated bytes of the regular files directly in `dirfd` (a turn's blobs and index).
uint64_t dir_bytes(int dirfd);

// The file system holding `fd`, as the budget sees it.
struct Space {
  uint64_t total = 0;  // its size
  uint64_t avail = 0;  // free to an unprivileged writer
  // What the journal leaves free whatever it keeps: twice the disk reserve
  // (base/disk_reserve.hpp: min(16 MiB, total / 8)), and at least 5% of the disk.
  uint64_t floor() const noexcept;
};
Space space_of(int fd);

}  // namespace leasefs::journal
