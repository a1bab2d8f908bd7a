#include "spank/bounded_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace coloc::spank {

namespace {

void write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the parent gave up on us
        done += static_cast<std::size_t>(n);
    }
}

// The host's signal handlers act on the host's state (slurmstepd's job, a test runner): none of
// them may run in a child.
void reset_signals() {
    for (int sig = 1; sig < NSIG; ++sig)
        if (sig != SIGKILL && sig != SIGSTOP) std::signal(sig, SIG_DFL);
    std::signal(SIGPIPE, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void child_main(int fd, const std::function<void(const Emit&)>& work) {
    reset_signals();
    int status = 0;
    try {
        Emit emit = [fd](const std::string& line) { write_all(fd, line + "\n"); };
        work(emit);
    } catch (...) {
        status = 1;
    }
    ::_exit(status);
}

std::string describe(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("died of signal ") + std::to_string(WTERMSIG(status));
    return "ended oddly";
}

}  // namespace

ChildResult run_in_child(Clock::time_point kill_at, const std::function<void(const Emit&)>& work) {
    ChildResult result;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        result.failure = std::string("cannot make a pipe: ") + std::strerror(errno);
        return result;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
        result.failure = std::string("cannot fork: ") + std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        return result;
    }
    if (pid == 0) {
        ::close(fds[0]);
        child_main(fds[1], work);
    }
    ::close(fds[1]);

    std::string buffer;
    bool eof = false;
    bool killed = false;
    while (!eof) {
        // Rounded up: poll waits whole ms, and a child must not be killed before its deadline.
        auto left = std::chrono::ceil<std::chrono::milliseconds>(kill_at - Clock::now()).count();
        if (left <= 0) {
            ::kill(pid, SIGKILL);
            killed = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        int rc = ::poll(&p, 1, static_cast<int>(left));
        if (rc < 0 && errno == EINTR) continue;
        if (rc < 0) {
            ::kill(pid, SIGKILL);
            killed = true;
            break;
        }
        if (rc == 0) continue;  // the deadline check above ends the loop
        char chunk[4096];
        ssize_t n = ::read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            eof = true;
        else
            buffer.append(chunk, static_cast<std::size_t>(n));
        if (buffer.size() > (1u << 20)) {  // a reply larger than any message we expect
            ::kill(pid, SIGKILL);
            killed = true;
            break;
        }
    }
    ::close(fds[0]);

    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);

    std::size_t start = 0;
    for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1)
        result.lines.push_back(buffer.substr(start, nl - start));

    result.killed = killed;
    if (killed)
        result.failure = "killed at the deadline";
    else if (r < 0)
        result.finished = true;  // reaped by someone else; the pipe closed, so it ended
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        result.finished = true;
    else
        result.failure = describe(status);
    return result;
}

std::string run_detached(int limit_ms, const std::function<void()>& work) {
    // One fork and no wait: the caller's own child reaper collects it (slurmstepd waits for any
    // child once the tasks run); a double fork would cost a second fork plus a wait on the hot path.
    pid_t pid = ::fork();
    if (pid < 0) return std::string("cannot fork: ") + std::strerror(errno);
    if (pid == 0) {
        reset_signals();
        itimerval limit{};
        limit.it_value.tv_sec = limit_ms / 1000;
        limit.it_value.tv_usec = (limit_ms % 1000) * 1000;
        ::setitimer(ITIMER_REAL, &limit, nullptr);  // SIGALRM's default action ends the child
        try {
            work();
        } catch (...) {}
        ::_exit(0);
    }
    return {};
}

}  // namespace coloc::spank
