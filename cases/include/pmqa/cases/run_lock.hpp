// The lock a pmqa-run holds on its --out folder, OUT/pmqa-run.lock, for the whole run: a second
// pmqa-run into the same folder is refused with the holder's pid and run id instead of overwriting
// its results, and pmqa verify says "still running" while it is held.
//
// It is an open-file-description lock (Linux F_OFD_SETLK), not a POSIX record lock: a POSIX lock
// belongs to the process and is dropped when the process closes ANY descriptor of the file, so a
// runner that read the folder's lock state, or its record beside it, after locking (run_lock_held
// opens and closes the file) silently let a second run in. An OFD lock belongs to the open file
// description: only closing the descriptor it was taken on releases it, and the kernel still drops
// it when the process ends, however it ends, so a killed run never leaves a stale lock. OFD locks
// and POSIX locks conflict, so pmqa verify's F_GETLK query (and a lockf of any other tool) sees it.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace pmqa::cases {

// Another process holds the lock; what() says who ("pid P on H, run R of X, since T").
class RunLockBusy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Takes the write lock on `fd` (the lock file, opened read-write by the caller, who closes it to
// release the lock) without waiting, and writes who holds it into the file (pid, host, run id,
// producer, since) for the message a second run prints. RunLockBusy when another run holds it;
// std::system_error carrying errno when the system refuses the lock itself.
void lock_run_folder(int fd, const std::string& run_id, const std::string& producer);

// Whether a process holds the folder's lock (a pmqa-run that is still going), asked without taking it.
bool run_lock_held(const std::filesystem::path& folder);

}  // namespace pmqa::cases
