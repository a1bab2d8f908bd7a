// coloc-workload: an emulated training job. Each iteration computes on the job's GPU, does host
// work on its CPU, waits on its input, then sends a communication burst over the shared link
// (coloc-link):
//   compute  holds every GPU in CUDA_VISIBLE_DEVICES for --compute-ms: one lock file per GPU under
//            the node's state directory, so jobs given the same GPU time-slice for real (the GPU
//            runs one job's compute phase at a time);
//   host     spins for --host-ms of the thread's own CPU time, so a busy CPU slows it;
//   io       sleeps for --io-ms: input the job waits for from a source no neighbour shares (its
//            own loader workers or storage), so a job can leave its GPU idle without using the
//            host's few cores;
//   burst    moves --burst-ms worth of bytes at the link's full rate through coloc-link, which
//            shares its rate fairly among the bursts in progress.
// It prints "iter I SECONDS START EPOCH NODE" per iteration (SECONDS from the previous iteration's
// end, START on CLOCK_MONOTONIC, EPOCH the same instant in seconds since the epoch, NODE its
// SLURMD_NODENAME or "-": which of a job's tasks ran it, and beside whom, in Slurm's terms) and
// at the end "mean SECONDS COUNT"; it reports each iteration through
// libcoloc_report (coloc_report(3)); with COLOC_PHASE_ALIGN=1 it keeps the phase colocd chose
// (coloc_report_align).
//
// Usage: coloc-workload [--compute-ms C] [--host-ms H] [--io-ms W] [--burst-ms B] [--link HOST:PORT]
//                       [--iterations N | --seconds S] [--start-at EPOCH_S] [--state-dir DIR]
//                       [--lockstep]
// --start-at starts the first iteration at that wall-clock time (jobs launched together in step).
// --lockstep: the tasks of the Slurm step wait for each other before each burst, as the ranks of
// a data-parallel job meet in its all-reduce, so that the job runs at its slowest task's pace,
// and each moves its share of the burst (the all-reduce crosses the link once)
// (SLURM_JOB_ID, SLURM_STEP_ID and SLURM_STEP_NUM_TASKS name the step, a task alone outside
// Slurm; its tasks share the state directory, as bench/live's nodes on one host do).
// Environment: CUDA_VISIBLE_DEVICES (the GPUs; unset = none), SLURMD_NODENAME (the node, for the
// lock directory), COLOC_WORKLOAD_DIR (default state directory, /tmp/coloc-workload),
// COLOC_WORKLOAD_LINK (default --link).
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "client/coloc_report.h"

namespace {

struct Options {
    double compute_s = 0, host_s = 0, io_s = 0, burst_s = 0;
    long iterations = 0;
    double seconds = 0;
    double start_at = 0;  // seconds since the epoch at which the first iteration starts; 0 = now
    std::string link, state_dir;
    bool lockstep = false;
};

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "coloc-workload: %s\n", what.c_str());
    std::exit(2);
}

double clock_s(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double number(const char* opt, const char* v) {
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (*end || !std::isfinite(x) || x < 0) fail(std::string(opt) + " " + v + ": not a number >= 0");
    return x;
}

Options parse(int argc, char** argv) {
    Options o;
    if (const char* d = std::getenv("COLOC_WORKLOAD_DIR")) o.state_dir = d;
    if (o.state_dir.empty()) o.state_dir = "/tmp/coloc-workload";
    if (const char* l = std::getenv("COLOC_WORKLOAD_LINK")) o.link = l;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--lockstep") {
            o.lockstep = true;
            continue;
        }
        if (i + 1 >= argc) fail(a + ": missing value");
        const char* v = argv[++i];
        if (a == "--compute-ms")
            o.compute_s = number(argv[i - 1], v) / 1000;
        else if (a == "--host-ms")
            o.host_s = number(argv[i - 1], v) / 1000;
        else if (a == "--io-ms")
            o.io_s = number(argv[i - 1], v) / 1000;
        else if (a == "--burst-ms")
            o.burst_s = number(argv[i - 1], v) / 1000;
        else if (a == "--iterations")
            o.iterations = long(number(argv[i - 1], v));
        else if (a == "--seconds")
            o.seconds = number(argv[i - 1], v);
        else if (a == "--start-at")
            o.start_at = number(argv[i - 1], v);
        else if (a == "--link")
            o.link = v;
        else if (a == "--state-dir")
            o.state_dir = v;
        else
            fail("unknown option " + a);
    }
    if (o.iterations <= 0 && o.seconds <= 0) fail("give --iterations or --seconds");
    if (o.burst_s > 0 && o.link.empty()) fail("--burst-ms needs --link HOST:PORT (coloc-link's port)");
    return o;
}

// The node's GPU lock files, one per entry of CUDA_VISIBLE_DEVICES, in ascending order so that
// jobs on several GPUs never wait on each other in a cycle.
std::vector<int> open_gpu_locks(const Options& o) {
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    if (!cvd || !*cvd) return {};
    const char* node = std::getenv("SLURMD_NODENAME");
    const std::string dir = o.state_dir + "/" + (node && *node ? node : "local");
    mkdir(o.state_dir.c_str(), 0777);
    mkdir(dir.c_str(), 0777);
    std::vector<std::string> ids;
    std::string cur;
    for (const char* p = cvd;; ++p) {
        if (*p == ',' || !*p) {
            if (!cur.empty()) ids.push_back(cur);
            cur.clear();
            if (!*p) break;
        } else {
            cur += *p;
        }
    }
    std::sort(ids.begin(), ids.end());
    std::vector<int> fds;
    for (auto& id : ids) {
        const std::string path = dir + "/gpu" + id + ".lock";
        int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) fail(path + ": " + std::strerror(errno));
        fds.push_back(fd);
    }
    return fds;
}

void sleep_s(double s) {
    if (s <= 0) return;
    timespec ts{};
    ts.tv_sec = time_t(s);
    ts.tv_nsec = long((s - double(ts.tv_sec)) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void compute(const std::vector<int>& gpus, double s) {
    for (int fd : gpus)
        while (flock(fd, LOCK_EX) != 0)
            if (errno != EINTR) fail(std::string("GPU lock: ") + std::strerror(errno));
    sleep_s(s);
    for (int fd : gpus) flock(fd, LOCK_UN);
}

void host_work(double s) {
    if (s <= 0) return;
    const double until = clock_s(CLOCK_THREAD_CPUTIME_ID) + s;
    volatile std::uint64_t x = 1;
    while (clock_s(CLOCK_THREAD_CPUTIME_ID) < until)
        for (int i = 0; i < 1000; ++i) x = x * 6364136223846793005ULL + 1;
}

bool io_all(int fd, void* buf, std::size_t n, bool out) {
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
        const ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= std::size_t(k);
    }
    return true;
}

struct Link {
    int fd = -1;
    double rate = 0;  // bytes per second at full speed
};

Link connect_link(const std::string& where) {
    const auto colon = where.rfind(':');
    if (colon == std::string::npos) fail("--link " + where + ": expected HOST:PORT");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(std::uint16_t(std::atoi(where.c_str() + colon + 1)));
    if (inet_pton(AF_INET, where.substr(0, colon).c_str(), &addr.sin_addr) != 1 ||
        (ntohl(addr.sin_addr.s_addr) >> 24) != 127)
        fail("--link " + where + ": a loopback address (127.x.x.x) and a port");
    Link l;
    l.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(l.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(l.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0)
        fail("--link " + where + ": " + std::strerror(errno));
    std::uint64_t rate = 0;
    if (!io_all(l.fd, &rate, sizeof rate, false) || rate == 0) fail("--link " + where + ": no rate from coloc-link");
    l.rate = double(rate);
    return l;
}

void burst(const Link& l, double s, std::vector<char>& payload) {
    const std::uint64_t n = std::uint64_t(std::llround(s * l.rate));
    if (n == 0) return;
    if (payload.size() < n) payload.resize(n, 'x');
    char ack = 0;
    std::uint64_t header = n;
    if (!io_all(l.fd, &header, sizeof header, true) || !io_all(l.fd, payload.data(), n, true) ||
        !io_all(l.fd, &ack, 1, false))
        fail("the link closed during a burst");
}

// The step's meeting point: counters in a file of the state directory that every task maps,
// waited on with a futex (shared between processes through the mapping): [0] arrivals, [1] tasks
// done. The last task done removes the file, so that a later job of the same id (a cluster
// started afresh) starts from zero; a file left by a task that died is refused, not followed.
class StepBarrier {
public:
    explicit StepBarrier(const Options& o) {
        const char* job = std::getenv("SLURM_JOB_ID");
        const char* step = std::getenv("SLURM_STEP_ID");
        const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
        if (!job || !step || !tasks) return;  // outside Slurm: a step of one task
        tasks_ = std::uint32_t(std::atoi(tasks));
        if (tasks_ <= 1) return;
        mkdir(o.state_dir.c_str(), 0777);
        path_ = o.state_dir + "/step-" + job + "." + step + ".barrier";
        const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0 || ftruncate(fd, kBytes) != 0) fail(path_ + ": " + std::strerror(errno));
        void* at = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (at == MAP_FAILED) fail(path_ + ": mmap: " + std::strerror(errno));
        word_ = static_cast<std::uint32_t*>(at);
    }
    // Returns once every task of the step reached its meeting number `round` (0, 1, ...).
    void meet(long round) {
        if (!word_) return;
        const std::uint32_t target = std::uint32_t(round + 1) * tasks_;
        std::uint32_t seen = __atomic_add_fetch(&word_[0], 1, __ATOMIC_SEQ_CST);
        // No task passes a meeting before all arrive: more arrivals than that are another job's.
        if (seen > target) fail("--lockstep: " + path_ + " holds an earlier job's count; remove it");
        if (seen == target) {
            syscall(SYS_futex, &word_[0], FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
            return;
        }
        const double give_up = clock_s(CLOCK_MONOTONIC) + 60;
        while ((seen = __atomic_load_n(&word_[0], __ATOMIC_SEQ_CST)) < target) {
            if (clock_s(CLOCK_MONOTONIC) > give_up) fail("--lockstep: the step's other tasks stopped meeting");
            timespec wait{1, 0};
            syscall(SYS_futex, &word_[0], FUTEX_WAIT, seen, &wait, nullptr, 0);
        }
    }
    std::uint32_t tasks() const { return tasks_; }
    ~StepBarrier() {
        if (word_ && __atomic_add_fetch(&word_[1], 1, __ATOMIC_SEQ_CST) == tasks_) unlink(path_.c_str());
    }

private:
    static constexpr std::size_t kBytes = 2 * sizeof(std::uint32_t);
    std::string path_;
    std::uint32_t* word_ = nullptr;
    std::uint32_t tasks_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    const auto gpus = open_gpu_locks(o);
    Link link;
    if (o.burst_s > 0) link = connect_link(o.link);
    std::vector<char> payload;
    std::optional<StepBarrier> step;
    if (o.lockstep) step.emplace(o);
    // The step's all-reduce crosses the link once: each task moves its share of the burst, so
    // that the job alone moves --burst-ms worth per iteration, as a single task calibrated.
    const double burst_s = step ? o.burst_s / step->tasks() : o.burst_s;
    coloc_report_init();
    if (o.start_at > 0) sleep_s(o.start_at - clock_s(CLOCK_REALTIME));
    const double t_end = clock_s(CLOCK_MONOTONIC) + o.seconds;
    const double period = o.compute_s + o.host_s + o.io_s + o.burst_s;
    const char* node = std::getenv("SLURMD_NODENAME");
    if (!node || !*node) node = "-";
    double last_end = 0, sum = 0;
    long count = 0;
    for (long i = 0; o.iterations > 0 ? i < o.iterations : clock_s(CLOCK_MONOTONIC) < t_end; ++i) {
        coloc_report_align(period);
        const double t0 = clock_s(CLOCK_MONOTONIC), epoch = clock_s(CLOCK_REALTIME);
        compute(gpus, o.compute_s);
        host_work(o.host_s);
        sleep_s(o.io_s);
        if (step) step->meet(i);
        if (burst_s > 0) burst(link, burst_s, payload);
        const double end = clock_s(CLOCK_MONOTONIC);
        // From the previous iteration's end: a wait for the job's phase counts as its time.
        const double dt = end - (i == 0 ? t0 : last_end);
        last_end = end;
        std::printf("iter %ld %.6f %.6f %.6f %s\n", i, dt, t0, epoch, node);
        coloc_report_iteration(dt);
        sum += dt;
        ++count;
    }
    std::printf("mean %.6f %ld\n", count ? sum / double(count) : 0.0, count);
    std::fflush(stdout);
    coloc_report_close();
    return 0;
}
