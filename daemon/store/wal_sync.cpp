#include "daemon/store/wal_sync.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <limits>

namespace coloc::daemon {

namespace {
constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();
}  // namespace

WalSync::WalSync() : event_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

WalSync::~WalSync() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    settled_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (event_fd_ >= 0) close(event_fd_);
}

std::uint64_t WalSync::request() {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    const std::uint64_t ticket = ++requested_;
    if (failed_from_ != 0 && failed_through_ == kForever) {
        signal();  // failed already: the WAL is not trusted
    } else {
        wake_.notify_one();
    }
    return ticket;
}

std::uint64_t WalSync::latest() const {
    std::lock_guard lock(mutex_);
    return requested_;
}

WalSync::Outcome WalSync::outcome_locked(std::uint64_t ticket) const {
    if (failed_from_ != 0 && ticket >= failed_from_ && ticket <= failed_through_) return Outcome::Failed;
    return ticket <= synced_ ? Outcome::Synced : Outcome::Pending;
}

WalSync::Outcome WalSync::outcome(std::uint64_t ticket) const {
    std::lock_guard lock(mutex_);
    return outcome_locked(ticket);
}

WalSync::Outcome WalSync::wait(std::uint64_t ticket) {
    std::unique_lock lock(mutex_);
    settled_.wait(lock, [&] { return stop_ || outcome_locked(ticket) != Outcome::Pending; });
    const Outcome o = outcome_locked(ticket);
    return o == Outcome::Pending ? Outcome::Failed : o;  // stopped before it was synced
}

std::string WalSync::error() const {
    std::lock_guard lock(mutex_);
    return error_;
}

void WalSync::read_events() {
    std::uint64_t n = 0;
    while (read(event_fd_, &n, sizeof n) == static_cast<ssize_t>(sizeof n)) {}
}

void WalSync::reset() {
    std::lock_guard lock(mutex_);
    if (failed_from_ == 0 || failed_through_ != kForever) return;
    failed_through_ = requested_;  // those stay failed; the next ones are synced afresh
}

void WalSync::set_sync_call(SyncCall call) {
    std::lock_guard lock(mutex_);
    call_ = std::move(call);
}

void WalSync::signal() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(event_fd_, &one, sizeof one);
}

void WalSync::loop() {
    std::unique_lock lock(mutex_);
    while (true) {
        const auto broken = [&] { return failed_from_ != 0 && failed_through_ == kForever; };
        wake_.wait(lock, [&] { return stop_ || (requested_ > synced_ && !broken() && requested_ > failed_through_); });
        if (stop_) return;
        // Every commit written before this point is covered by this sync.
        const std::uint64_t target = requested_;
        const SyncCall call = call_;
        lock.unlock();
        const std::string failure = call ? call() : "no way to sync the WAL";
        lock.lock();
        if (failure.empty()) {
            synced_ = target;
        } else {
            failed_from_ = synced_ + 1;
            failed_through_ = kForever;
            error_ = failure;
        }
        signal();
        settled_.notify_all();
    }
}

}  // namespace coloc::daemon
