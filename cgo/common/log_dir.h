// log_dir.h: the once-per-process choice of a log directory
// (mcgo_set_log), shared by the embedded and the native backend so that
// both refuse the same calls. Header-only, C++17.
#ifndef MCGO_COMMON_LOG_DIR_H_
#define MCGO_COMMON_LOG_DIR_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "mcgo/codes.h"

namespace mcgo {

// ChooseLogDir records dir as the process's log directory. It returns
// MCGO_OK and sets *first when dir is chosen now (the caller then sends the
// log there), MCGO_OK when dir is the one chosen before, and
// MCGO_INVALID_PARAMS when another directory was chosen (by an earlier call
// or by upstream's MC_LOG_DIR, which makes upstream's engine initialise
// glog itself: a second initialisation aborts the process) or dir is not a
// writable directory. Thread safe.
inline int32_t ChooseLogDir(const std::string &dir, bool *first) {
  static std::mutex mu;
  static std::string chosen;
  std::lock_guard<std::mutex> lock(mu);
  *first = false;
  if (!chosen.empty()) return dir == chosen ? MCGO_OK : MCGO_INVALID_PARAMS;
  if (const char *env = std::getenv("MC_LOG_DIR"); env != nullptr && *env != '\0') {
    return dir == env ? MCGO_OK : MCGO_INVALID_PARAMS;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec) || access(dir.c_str(), W_OK) != 0) {
    return MCGO_INVALID_PARAMS;
  }
  chosen = dir;
  *first = true;
  return MCGO_OK;
}

// LogArgsOk checks mcgo_set_log's arguments.
inline bool LogArgsOk(int32_t min_level, const char *dir, size_t dir_len) {
  return min_level >= -1 && min_level <= 3 && (dir != nullptr || dir_len == 0);
}

}  // namespace mcgo

#endif  // MCGO_COMMON_LOG_DIR_H_
