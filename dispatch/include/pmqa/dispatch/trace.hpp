// The process-wide trace of dispatch decisions: every Policy::select records the arch, the context,
// the policy, the decision and its reason, so tests and users can assert what actually ran. The
// kernel host API adds "ran on executor X" to an entry through note_executor. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pmqa/dispatch/arch.hpp"
#include "pmqa/dispatch/policy.hpp"

namespace pmqa::dispatch {

struct TraceEntry {
  std::uint64_t id = 0;    // 1, 2, ... in the order recorded (ids are never reused, even after clear)
  std::string arch;        // the name as given ("gfx942:sramecc+:xnack-")
  std::string target;      // "gfx942"
  Vendor vendor = Vendor::amd;
  Context context;
  std::string policy;      // Policy::name()
  Decision decision;
  std::optional<std::string> executor;  // where the decided path then ran, when someone said so

  // "#7 gfx950 [AITER present, block_size 64, next_n 1, heads 64] policy default: fused, e4m3fn, SHUFFLE (reason...)"
  std::string describe() const;
};

class ScopedTraceRecorder;

class Trace {
 public:
  static constexpr std::size_t kDefaultCapacity = 4096;

  Trace() = default;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // The trace Policy::select records into.
  static Trace& global();

  // Appends an entry and returns its id. When the trace holds `capacity()` entries the oldest is
  // dropped (counted in dropped()); scoped recorders keep everything recorded while they live.
  std::uint64_t record(const Arch& arch, const Context& ctx, std::string policy, const Decision& decision);

  // Adds the "ran on executor X" note to entry `id` (and to the recorders holding it). Returns false
  // when no entry has that id any more.
  bool note_executor(std::uint64_t id, std::string executor);

  std::vector<TraceEntry> entries() const;          // oldest first
  std::optional<TraceEntry> find(std::uint64_t id) const;
  std::size_t size() const;
  std::uint64_t dropped() const;                    // entries evicted by the capacity since the last clear()
  void clear();                                     // entries and the dropped count; recorders keep theirs

  void set_capacity(std::size_t capacity);          // at least 1
  std::size_t capacity() const;

 private:
  friend class ScopedTraceRecorder;
  mutable std::mutex mutex_;
  std::deque<TraceEntry> entries_;
  std::vector<ScopedTraceRecorder*> recorders_;
  std::size_t capacity_ = kDefaultCapacity;
  std::uint64_t next_id_ = 1;
  std::uint64_t dropped_ = 0;
};

// Collects the entries recorded (from any thread) between its construction and its destruction,
// without touching the trace's own contents. Recorders nest.
class ScopedTraceRecorder {
 public:
  explicit ScopedTraceRecorder(Trace& trace = Trace::global());
  ~ScopedTraceRecorder();
  ScopedTraceRecorder(const ScopedTraceRecorder&) = delete;
  ScopedTraceRecorder& operator=(const ScopedTraceRecorder&) = delete;

  std::vector<TraceEntry> entries() const;
  std::size_t size() const;
  void clear();

 private:
  friend class Trace;
  Trace& trace_;
  std::vector<TraceEntry> entries_;  // guarded by trace_.mutex_
};

}  // namespace pmqa::dispatch
