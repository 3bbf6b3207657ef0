// Names the calling thread as `top -H`, `perf report --sort comm` and
// /proc/PID/task/TID/comm show it, so that a busy daemon says which of its
// threads is busy. Linux keeps at most 15 characters; longer names are cut.
#pragma once

#include <pthread.h>

#include <string>

namespace leasefs::base {

inline void name_this_thread(std::string name) {
  if (name.size() > 15) name.resize(15);
  ::pthread_setname_np(::pthread_self(), name.c_str());
}

}  // namespace leasefs::base
