#include "pmqa/dispatch/trace.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace pmqa::dispatch {

std::string TraceEntry::describe() const {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string temporaries here.
  std::string out = "#";
  out += std::to_string(id);
  out += ' ';
  out += arch;
  out += " [";
  out += dispatch::describe(context, vendor);
  out += "] policy ";
  out += policy;
  out += ": ";
  out += decision.summary();
  if (!decision.kernel.empty()) {
    out += " [";
    out += decision.kernel;
    out += ']';
  }
  out += " (reason: ";
  out += decision.reason;
  out += ')';
  if (executor) out += "; ran on " + *executor;
  return out;
}

Trace& Trace::global() {
  static Trace trace;
  return trace;
}

std::uint64_t Trace::record(const Arch& arch, const Context& ctx, std::string policy, const Decision& decision) {
  TraceEntry e;
  e.arch = arch.text.empty() ? arch.target : arch.text;
  e.target = arch.target;
  e.vendor = arch.vendor;
  e.context = ctx;
  e.policy = std::move(policy);
  e.decision = decision;
  std::lock_guard lock(mutex_);
  e.id = next_id_++;
  e.decision.trace_id = e.id;
  for (ScopedTraceRecorder* r : recorders_) r->entries_.push_back(e);
  while (entries_.size() >= capacity_) {
    entries_.pop_front();
    ++dropped_;
  }
  entries_.push_back(std::move(e));
  return entries_.back().id;
}

bool Trace::note_executor(std::uint64_t id, std::string executor) {
  std::lock_guard lock(mutex_);
  bool found = false;
  auto note = [&](auto& list) {
    // ids increase along each list: binary search.
    auto it = std::lower_bound(list.begin(), list.end(), id,
                               [](const TraceEntry& e, std::uint64_t v) { return e.id < v; });
    if (it != list.end() && it->id == id) {
      it->executor = executor;
      found = true;
    }
  };
  note(entries_);
  for (ScopedTraceRecorder* r : recorders_) note(r->entries_);
  return found;
}

std::vector<TraceEntry> Trace::entries() const {
  std::lock_guard lock(mutex_);
  return {entries_.begin(), entries_.end()};
}

std::optional<TraceEntry> Trace::find(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  for (const auto& e : entries_)
    if (e.id == id) return e;
  return std::nullopt;
}

std::size_t Trace::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::uint64_t Trace::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

void Trace::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  dropped_ = 0;
}

void Trace::set_capacity(std::size_t capacity) {
  if (capacity == 0) throw std::invalid_argument("Trace::set_capacity: capacity must be >= 1");
  std::lock_guard lock(mutex_);
  capacity_ = capacity;
  while (entries_.size() > capacity_) {
    entries_.pop_front();
    ++dropped_;
  }
}

std::size_t Trace::capacity() const {
  std::lock_guard lock(mutex_);
  return capacity_;
}

ScopedTraceRecorder::ScopedTraceRecorder(Trace& trace) : trace_(trace) {
  std::lock_guard lock(trace_.mutex_);
  trace_.recorders_.push_back(this);
}

ScopedTraceRecorder::~ScopedTraceRecorder() {
  std::lock_guard lock(trace_.mutex_);
  auto& list = trace_.recorders_;
  list.erase(std::remove(list.begin(), list.end(), this), list.end());
}

std::vector<TraceEntry> ScopedTraceRecorder::entries() const {
  std::lock_guard lock(trace_.mutex_);
  return entries_;
}

std::size_t ScopedTraceRecorder::size() const {
  std::lock_guard lock(trace_.mutex_);
  return entries_.size();
}

void ScopedTraceRecorder::clear() {
  std::lock_guard lock(trace_.mutex_);
  entries_.clear();
}

}  // namespace pmqa::dispatch
