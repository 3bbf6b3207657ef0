// How this process's heap gives memory back to the kernel.
#pragma once

namespace leasefs::base {

// Keeps freed heap memory for reuse instead of handing it back after every
// request. glibc returns the free top of a thread's heap once it passes 128 KiB,
// with madvise(MADV_DONTNEED); a control request crosses that line (SQLite's
// page cache for one transaction alone is about 100 KiB), so every grant paid
// for a madvise, a TLB shootdown on every CPU, and page faults to get the memory
// back. Up to 2 MiB per heap now stays, and blocks under 1 MiB come from the
// heap rather than from mmap. Call it first thing in main(), before any thread.
void keep_freed_heap() noexcept;

}  // namespace leasefs::base
