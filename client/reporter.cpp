#include "client/reporter.hpp"

#include <unistd.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "proto/client.hpp"
#include "proto/errors.hpp"

namespace coloc::client {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

// A whole number or a decimal in [lo, hi]; nullopt otherwise.
std::optional<double> number(const std::string& text, double lo, double hi) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (!end || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) return std::nullopt;
    return v;
}

void to_stderr(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

}  // namespace

std::optional<ReportSettings> settings_from_env(std::string& why) {
    why.clear();
    if (env("COLOC_REPORT") == "0") return std::nullopt;
    ReportSettings s;
    auto job = number(env("SLURM_JOB_ID"), 1, 0xFFFFFFFFLL);
    if (!job || env("COLOC_DECISION").empty()) return std::nullopt;  // not a job coloc placed
    s.job_id = static_cast<std::int64_t>(*job);
    if (std::string e = env("COLOC_ENDPOINT"); !e.empty()) s.endpoint = e;
    s.node = env("SLURMD_NODENAME");
    s.munge_socket = env("COLOC_MUNGE_SOCKET");
    if (std::string v = env("COLOC_REPORT_INTERVAL_S"); !v.empty()) {
        auto i = number(v, 0, 1e6);
        if (!i) {
            why = "COLOC_REPORT_INTERVAL_S=" + v + " is not a number of seconds from 0 to 1e6";
            return std::nullopt;
        }
        s.interval_s = *i;
    }
    if (std::string v = env("COLOC_REPORT_TIMEOUT_MS"); !v.empty()) {
        auto t = number(v, 1, 60000);
        if (!t || *t != std::floor(*t)) {
            why = "COLOC_REPORT_TIMEOUT_MS=" + v + " is not a whole number of milliseconds from 1 to 60000";
            return std::nullopt;
        }
        s.timeout_ms = static_cast<int>(*t);
    }
    return s;
}

nlohmann::json observe_body(const ReportSettings& s, const Batch& b) {
    nlohmann::json body = {{"op", "observe"}, {"job_id", s.job_id}, {"iter_time_s", b.mean_s}, {"iterations", b.count}};
    if (!s.node.empty()) body["node"] = s.node;
    return body;
}

Reporter::Reporter(ReportSettings s, LogSink log)
    : settings_(std::move(s)), log_(log ? std::move(log) : LogSink(to_stderr)), pid_(getpid()), window_start_(now_s()) {
    thread_ = std::thread([this] { run(); });
}

Reporter::~Reporter() { close(); }

void Reporter::iteration(double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0 || getpid() != pid_) return;
    std::lock_guard lock(mu_);
    if (closed_) return;
    sum_ += seconds;
    ++count_;
    if (now_s() - window_start_ >= settings_.interval_s) enqueue_locked();
}

void Reporter::flush() {
    if (getpid() != pid_) return;
    std::lock_guard lock(mu_);
    if (!closed_ && count_ > 0) enqueue_locked();
}

// A batch still waiting (the thread is busy with the one before) takes this one in.
void Reporter::enqueue_locked() {
    if (pending_) {
        const std::int64_t n = pending_->count + count_;
        pending_->mean_s = (pending_->mean_s * static_cast<double>(pending_->count) + sum_) / static_cast<double>(n);
        pending_->count = n;
    } else {
        pending_ = Batch{sum_ / static_cast<double>(count_), count_};
    }
    sum_ = 0;
    count_ = 0;
    window_start_ = now_s();
    wake_.notify_one();
}

void Reporter::close() {
    {
        std::lock_guard lock(mu_);
        if (closed_) return;
        closed_ = true;
        // In a forked child the sending thread is not there: nothing to send, nothing to join.
        if (getpid() != pid_) {
            thread_.detach();
            return;
        }
        if (count_ > 0) enqueue_locked();
        stop_ = true;
        wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
}

void Reporter::run() {
    std::unique_lock lock(mu_);
    for (;;) {
        wake_.wait(lock, [this] { return pending_ || stop_; });
        if (!pending_) break;
        Batch b = *pending_;
        pending_.reset();
        sending_ = true;
        lock.unlock();
        send(b);
        lock.lock();
        sending_ = false;
        idle_.notify_all();
    }
    idle_.notify_all();
}

void Reporter::send(const Batch& b) {
    std::string why;
    try {
        proto::CallOptions opts;
        opts.munge_socket = settings_.munge_socket;
        opts.timeout_ms = settings_.timeout_ms;
        proto::call(settings_.endpoint, observe_body(settings_, b), opts);
        std::lock_guard lock(mu_);
        ++sent_;
        return;
    } catch (const proto::ProtoError& e) {
        why = std::string(e.code()) + ": " + e.what();
    } catch (const std::exception& e) {
        why = e.what();
    }
    bool first = false;
    {
        std::lock_guard lock(mu_);
        ++failed_;
        first = !failure_logged_;
        failure_logged_ = true;
    }
    if (first)
        log_("coloc: job " + std::to_string(settings_.job_id) + ": iteration times not reported to colocd at " +
             settings_.endpoint + " (" + why + "); later failures are dropped without a word");
}

std::int64_t Reporter::sent() const {
    std::lock_guard lock(mu_);
    return sent_;
}

std::int64_t Reporter::failed() const {
    std::lock_guard lock(mu_);
    return failed_;
}

bool Reporter::wait_idle(int timeout_ms) {
    std::unique_lock lock(mu_);
    return idle_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return !pending_ && !sending_; });
}

}  // namespace coloc::client
