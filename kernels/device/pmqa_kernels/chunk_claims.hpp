// fused-mma's wgmma kernel, dynamic shares: which chunk a CTA copies next.
//
// The static split (chunk_work.hpp) gives every CTA the same number of chunks, but not the same
// time: at the decode shape CTAs with the same 12-13 chunks spend 12 to 23 us in their loops
// (DRAM serves them unequally, some start late, some cross into a second sequence), and the
// slowest sets the launch's end (notes v9d). So a share is cut in two:
// - its first half (rounded up) is private: the owner walks it with no atomics;
// - its second half is claimable: a counter per share in global memory hands out its chunks one
//   ticket at a time (atomicAdd), to the owner and, once a CTA has run out of its own, to the
//   CTAs of the kStealVictims shares before it (CTA u claims from u+1, u+2, ...: the share after
//   u's starts where u's ends, usually in the same sequence, so a taken chunk rarely costs a
//   sequence switch).
// Every chunk goes to exactly one claimer (the tickets of one counter are distinct), and every
// claimable chunk is claimed: its owner claims until its counter runs past it.
//
// The counters: two sets of `claim_units` (LogitsParams::claims); a launch claims from set
// claim_set and zeroes the other for the next launch (launches of one stream run in order: the
// launch before used the other set and is done). PreparedRun owns them and flips the set per
// launch. Without counters (nullptr) every share is private: the static split.
//
// Only thread 0 (the TMA producer) runs a ChunkSource; the kernel passes the chunks it yields to
// the other threads through shared memory with each stage.
#pragma once

#include "pmqa_kernels/chunk_work.hpp"

PMQA_KDEV_BEGIN

inline constexpr std::uint32_t kStealVictims = 3;

// The private part of a share of `len` chunks.
PMQA_DEV std::uint32_t private_chunks(std::uint32_t len) { return (len + 1) / 2; }

// Moves cursor k forward by n live chunks (crossing sequences, skipping empty ones).
template <class Hooks>
PMQA_DEV void advance_chunks(const LogitsParams& p, ChunkCursor& k, std::uint32_t n) {
  k.c += static_cast<std::int32_t>(n);
  while (k.c >= k.chunks && k.b < p.batch) {
    k.c -= k.chunks;
    k.chunks = 0;
    while (k.chunks == 0 && ++k.b < p.batch) {
      k.keys = live_keys<Hooks>(p, k.b);
      k.chunks = chunks_of(k.keys);
    }
  }
}

// Zeroes the counter set the next launch claims from: thread t of CTA c takes counters
// c + t * CTAs, ... (one store a thread at the decode shape).
PMQA_DEV void reset_next_claims(const LogitsParams& p, int tid, int threads) {
  if (p.claims == nullptr) return;
  std::uint32_t* next = p.claims + (p.claim_set ^ 1) * p.claim_units;
  const std::uint32_t step = gridDim.x * static_cast<std::uint32_t>(threads);
  for (std::uint32_t i = blockIdx.x + static_cast<std::uint32_t>(tid) * gridDim.x; i < static_cast<std::uint32_t>(p.claim_units);
       i += step)
    next[i] = 0;
}

// The chunks one CTA copies, in order: its private part, then tickets of its own claimable part,
// then of the next shares' (see the top). A ticket is claimed one call ahead of its use, so the
// atomic's round trip overlaps a chunk's copy instead of holding up the warpgroup (thread 0 waits
// for it, and every wgmma waits for thread 0): the next share's first claim is fired as this
// share's last chunk is taken. A ticket past a share's end means others took the rest; the shares
// around are then done or nearly, and the CTA stops rather than wait for more round trips.
template <class Hooks>
class ChunkSource {
 public:
  // `dynamic`: claim through p.claims; otherwise the whole share is private.
  PMQA_DEV ChunkSource(const LogitsParams& p, const ChunkShare& share, std::uint32_t unit, std::uint32_t units, bool dynamic)
      : at_(share.first), pos_(share.begin), total_(share.total), unit_(unit), units_(units) {
    const std::uint32_t own = dynamic ? private_chunks(share.count) : share.count;
    next_private_ = share.begin;
    private_end_ = share.begin + own;
    if (!dynamic) return;
    counters_ = p.claims + p.claim_set * p.claim_units;
    victim_ = unit;
    claim_begin_ = private_end_;
    claim_len_ = share.count - own;
    if (claim_len_ > 0) fire();
    else claim_next_share();
  }

  // The next chunk to copy into `k`; false when the CTA is done.
  PMQA_DEV bool next(const LogitsParams& p, ChunkCursor& k) {
    if (next_private_ < private_end_) {
      move_to(p, next_private_++);
      k = at_;
      return true;
    }
    if (!pending_) return false;
    const std::uint32_t t = ticket_;
    pending_ = false;
    if (t >= claim_len_) return false;  // taken by others
    move_to(p, claim_begin_ + t);
    k = at_;
    if (t + 1 < claim_len_) fire();  // the next ticket, ahead of its use
    else claim_next_share();
    return true;
  }

 private:
  PMQA_DEV void fire() {
    ticket_ = atomicAdd(counters_ + victim_, 1u);
    pending_ = true;
  }
  // The first claim on the next share within reach that has a claimable part (none: no claim).
  PMQA_DEV void claim_next_share() {
    while (victim_ + 1 < units_ && victim_ - unit_ < kStealVictims) {
      ++victim_;
      const std::uint32_t b = share_bound(total_, victim_, units_), e = share_bound(total_, victim_ + 1, units_);
      claim_begin_ = b + private_chunks(e - b);
      claim_len_ = e - claim_begin_;
      if (claim_len_ > 0) {
        fire();
        return;
      }
    }
  }
  // Positions the cursor at chunk `pos` of the launch (pos >= pos_: tickets and shares only move
  // forward).
  PMQA_DEV void move_to(const LogitsParams& p, std::uint32_t pos) {
    advance_chunks<Hooks>(p, at_, pos - pos_);
    pos_ = pos;
  }

  ChunkCursor at_;  // the launch's chunk number pos_
  std::uint32_t pos_;
  std::uint32_t total_, unit_, units_;
  std::uint32_t next_private_ = 0, private_end_ = 0;
  std::uint32_t* counters_ = nullptr;  // this launch's set (dynamic shares only)
  std::uint32_t victim_ = 0, claim_begin_ = 0, claim_len_ = 0;  // the share claimed from
  std::uint32_t ticket_ = 0;
  bool pending_ = false;  // ticket_ is claimed and not yet used
};

PMQA_KDEV_END
