// colocctl probe's runs through Slurm (ctl/probe_runs.hpp).
#include "ctl/probe_runs.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/files.hpp"
#include "ctl/output.hpp"
#include "proto/errors.hpp"
#include "slurm/jobs.hpp"

namespace coloc::ctl::probe {

std::atomic<bool> g_interrupted{false};

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBarrierS = 120;  // the slowest job of a run to start, from the first
constexpr int kPlaceS = 120;    // slurmctld's scheduling pass and the plugin's request
constexpr int kIdleS = 120;     // the previous run's ends reaching colocd
constexpr int kCancelS = 30;    // scancel to the jobs' processes stopped (KillWait and more)

struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("interrupted") {}
};

void pause_or_stop() {
    if (g_interrupted) throw Interrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    if (g_interrupted) throw Interrupted();
}

// Runs argv (no shell); its stdout and stderr together, and its exit status.
std::string run_program(const std::vector<std::string>& argv, int& status) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe: " + base::os_reason());
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork: " + base::os_reason());
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        ::close(fds[0]);
        ::close(fds[1]);
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        std::string why = argv[0] + ": cannot run: " + base::os_reason() + "\n";
        (void)!::write(2, why.data(), why.size());
        ::_exit(127);
    }
    ::close(fds[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int ws = 0;
    while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
    status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    return out;
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

std::string shell_quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// One run's jobs in Slurm; whatever is still queued or running goes when it does.
class RunJobs {
public:
    RunJobs(const Target& t, std::string dir) : t_(t), dir_(std::move(dir)) {}
    ~RunJobs() { cancel(); }
    RunJobs(const RunJobs&) = delete;
    RunJobs& operator=(const RunJobs&) = delete;

    std::int64_t submit(const std::string& name, const std::string& script) {
        const std::string path = dir_ + "/" + name + "-" + std::to_string(ids_.size() + 1) + ".sh";
        std::ofstream f;
        if (auto why = base::open_for_writing(f, path); !why.empty()) throw std::runtime_error(path + ": " + why);
        if (!(f << script << std::flush)) throw std::runtime_error(path + ": cannot write: " + base::os_reason());
        f.close();
        // Slurm's limit in minutes, beyond the command's own stop: a backstop only.
        const int minutes = (t_.seconds + kBarrierS + 60 + 59) / 60;
        // --coloc=off: the plugin's own rule places the job (see the header), colocd records it.
        std::vector<std::string> argv = {"sbatch",
                                         "--parsable",
                                         "-J",
                                         name,
                                         "-w",
                                         t_.node,
                                         "--gres=" + t_.gres,
                                         "--time=" + std::to_string(minutes),
                                         "-o",
                                         dir_ + "/%j.out",
                                         "--coloc=off"};
        if (!t_.partition.empty()) argv.insert(argv.begin() + 2, {"-p", t_.partition});
        argv.insert(argv.end(), t_.sbatch_args.begin(), t_.sbatch_args.end());
        argv.push_back(path);
        int status = 0;
        const std::string out = trimmed(run_program(argv, status));
        const std::string last =
            out.substr(out.find_last_of('\n') == std::string::npos ? 0 : out.find_last_of('\n') + 1);
        std::int64_t id = 0;
        try {
            id = std::stoll(last.substr(0, last.find(';')));
        } catch (const std::exception&) {}
        if (status != 0 || id <= 0)
            throw std::runtime_error("sbatch refused the job (exit " + std::to_string(status) + "): " + out);
        ids_.push_back(id);
        return id;
    }

    // Those of this run's jobs Slurm still has queued, running or completing.
    std::vector<std::int64_t> active() const {
        const slurm::SlurmSnapshot snap = slurm::load_slurm_jobs();
        std::vector<std::int64_t> out;
        for (const slurm::SlurmJob& j : snap.jobs)
            if ((j.running || j.pending || j.completing) && std::find(ids_.begin(), ids_.end(), j.job_id) != ids_.end())
                out.push_back(j.job_id);
        return out;
    }

    // The first of this run's ended jobs that failed, as "job ID ended with exit status N"; "".
    std::string failure() const {
        const slurm::SlurmSnapshot snap = slurm::load_slurm_jobs();
        for (const slurm::SlurmJob& j : snap.jobs)
            if (std::find(ids_.begin(), ids_.end(), j.job_id) != ids_.end() && j.exit_status && *j.exit_status != 0)
                return "job " + std::to_string(j.job_id) + " (" + j.name + ") ended with exit status " +
                       std::to_string(*j.exit_status) + ": see " + dir_ + "/" + std::to_string(j.job_id) + ".out";
        return "";
    }

    void cancel() noexcept {
        try {
            if (ids_.empty() || active().empty()) return;
        } catch (const std::exception&) {}  // cannot tell: cancel them all
        std::vector<std::string> argv = {"scancel"};
        for (std::int64_t id : ids_) argv.push_back(std::to_string(id));
        try {
            int status = 0;
            run_program(argv, status);
            // Gone from squeue before the probe says so or starts the next run.
            const auto deadline = Clock::now() + std::chrono::seconds(kCancelS);
            while (!active().empty() && Clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(250));
        } catch (const std::exception&) {}
    }

private:
    const Target& t_;
    const std::string dir_;
    std::vector<std::int64_t> ids_;
};

json history_of(const CtlOptions& opts, std::int64_t id) {
    json req = op_request(proto::Op::History);
    req["job_id"] = id;
    try {
        const json reply = ask_daemon(opts, req);
        return reply.value("history", json::array()).empty() ? json() : reply["history"][0];
    } catch (const proto::ProtoError& e) {
        if (e.code() == proto::code::kNotFound) return json();  // not placed yet
        throw;
    }
}

// The GPU colocd placed each job on, once it has placed them all.
std::vector<int> wait_placed(const CtlOptions& opts, const RunJobs& slurm, const std::vector<std::int64_t>& ids) {
    const auto deadline = Clock::now() + std::chrono::seconds(kPlaceS);
    std::vector<int> gpus(ids.size(), -1);
    for (;;) {
        bool all = true;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (gpus[i] >= 0) continue;
            const json h = history_of(opts, ids[i]);
            const json placements = h.is_object() ? h.value("placements", json::array()) : json::array();
            if (!placements.empty() && placements[0].value("gpus", json::array()).size() == 1)
                gpus[i] = placements[0]["gpus"][0].get<int>();
            else if (!placements.empty())
                throw std::runtime_error("job " + std::to_string(ids[i]) + " got GPUs " +
                                         placements[0].value("gpus", json::array()).dump() + ", not one");
            else
                all = false;
        }
        if (all) return gpus;
        if (Clock::now() > deadline) {
            std::string ids_left;
            for (std::size_t i = 0; i < ids.size(); ++i)
                if (gpus[i] < 0) ids_left += (ids_left.empty() ? "" : ",") + std::to_string(ids[i]);
            const bool queued = !slurm.active().empty();
            throw std::runtime_error("colocd placed no GPU for job(s) " + ids_left + " within " +
                                     std::to_string(kPlaceS) + " s" + (queued ? " (still queued in Slurm)" : ""));
        }
        pause_or_stop();
    }
}

void wait_node_idle(const CtlOptions& opts, const std::string& node) {
    const auto deadline = Clock::now() + std::chrono::seconds(kIdleS);
    int jobs = 0;
    while ((jobs = node_shape(opts, node).jobs) > 0) {
        if (Clock::now() > deadline)
            throw std::runtime_error(node + " still runs " + std::to_string(jobs) + " job(s) after " +
                                     std::to_string(kIdleS) + " s: the probe needs the node to itself");
        pause_or_stop();
    }
}

void wait_ended(const RunJobs& slurm, int seconds) {
    const auto deadline = Clock::now() + std::chrono::seconds(seconds + kBarrierS + 30);
    while (!slurm.active().empty()) {
        if (Clock::now() > deadline) throw std::runtime_error("the run's jobs did not end within its budget");
        pause_or_stop();
    }
    if (const std::string why = slurm.failure(); !why.empty()) throw std::runtime_error(why);
}

// Adds what each job reported (as colocd stored it) to `m`; says which job reported nothing.
void collect(const CtlOptions& opts, const std::vector<std::int64_t>& ids, int warmup, bool pair, Mean& m,
             const std::string& dir) {
    for (std::int64_t id : ids) {
        const json h = history_of(opts, id);
        const std::vector<Report> reports = reports_from(h.is_object() ? h.value("observations", json()) : json());
        if (reports.empty())
            throw std::runtime_error("job " + std::to_string(id) +
                                     " reported no iteration time (does the command report with coloc_report? see " +
                                     dir + "/" + std::to_string(id) + ".out)");
        add_reports(m, reports, warmup, pair);
    }
}

}  // namespace

void check_node(const CtlOptions& opts, const std::string& node, bool pairs) {
    const NodeShape shape = node_shape(opts, node);
    if (pairs && shape.slots_per_gpu < 2)
        throw std::runtime_error(node + " has " + std::to_string(shape.slots_per_gpu) +
                                 " slot per GPU: no two jobs share a GPU there (pairs need a node of a bind "
                                 "partition with slots_per_gpu >= 2 in colocd.yaml)");
    if (shape.gpus < 1) throw std::runtime_error(node + " has no GPU in colocd.yaml");
}

NodeShape node_shape(const CtlOptions& opts, const std::string& node) {
    const json reply = ask_daemon(opts, op_request(proto::Op::Nodes));
    for (const json& n : reply.value("nodes", json::array()))
        if (n.value("node", std::string()) == node)
            return {n.value("gpus", 0), n.value("slots_per_gpu", 0), n.value("jobs", 0)};
    throw std::runtime_error("colocd does not know node '" + node + "' (colocctl nodes lists those it does)");
}

std::string job_script(const Target& t, const Job& job, const std::string& barrier, int together,
                       const std::string& nvml_file) {
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# colocctl probe: job " << job.name << ". Starts once the run's " << together
      << " job(s) run, so that they overlap; stops after " << t.seconds << " s.\n"
      << "barrier=" << shell_quoted(barrier) << "\n"
      << "mkdir -p \"$barrier\" && touch \"$barrier/$SLURM_JOB_ID\" || exit 3\n"
      << "# Cancelled (scancel's TERM) or not, nothing of the run stays on the node.\n"
      << "trap '[ -z \"${smi:-}\" ] || kill \"$smi\" 2>/dev/null; rm -f \"$barrier/$SLURM_JOB_ID\"; "
         "rmdir \"$barrier\" 2>/dev/null' EXIT\n"
      << "trap 'exit 143' TERM INT\n"
      << "end=$((SECONDS + " << kBarrierS << "))\n"
      << "until [ \"$(ls \"$barrier\" | wc -l)\" -ge " << together << " ]; do\n"
      << "    [ $SECONDS -lt $end ] || { echo \"coloc: probe: the run's other jobs did not start within " << kBarrierS
      << " s\" >&2; exit 3; }\n"
      << "    sleep 0.1\n"
      << "done\n"
      << "# Reports often enough to leave out the first ones and those without the neighbour.\n"
      << "export COLOC_REPORT_INTERVAL_S=" << t.report_interval_s << "\n";
    if (!nvml_file.empty())
        s << "nvml=" << shell_quoted(nvml_file) << "\n"
          << "if command -v nvidia-smi >/dev/null 2>&1 && [ -n \"${CUDA_VISIBLE_DEVICES:-}\" ]; then\n"
          << "    nvidia-smi --query-gpu=utilization.gpu,utilization.memory --format=csv,noheader,nounits \\\n"
          << "        -i \"$CUDA_VISIBLE_DEVICES\" -lms 500 >\"$nvml\" 2>&1 &\n"
          << "    smi=$!\n"
          << "else\n"
          << "    echo \"nvidia-smi not found on $SLURMD_NODENAME, or no GPU given\" >\"$nvml\"\n"
          << "fi\n";
    s << "timeout -k 10 " << t.seconds << " bash -c " << shell_quoted(job.command) << "\n"
      << "rc=$?\n"
      << "# Stopped at the budget: the run ended as planned.\n"
      << "[ $rc = 124 ] && rc=0\n"
      << "exit $rc\n";
    return s.str();
}

RunResult execute(const CtlOptions& opts, const Target& t, const std::vector<Job>& jobs, const Run& run, int index) {
    RunResult r;
    const std::string dir = t.out_dir + "/runs";
    const std::string tag = std::to_string(index) + "-" + (run.pair ? "pair" : "solo");
    const std::string barrier = "/tmp/coloc-probe-" + std::to_string(::getpid()) + "-" + tag;
    RunJobs slurm(t, dir);
    try {
        wait_node_idle(opts, t.node);
        const NodeShape shape = node_shape(opts, t.node);
        const Job& a = jobs.at(static_cast<std::size_t>(run.a));
        if (!run.pair) {
            r.copies = 1;
            const std::string nvml = dir + "/" + tag + "-" + a.name + ".nvml";
            const std::int64_t id = slurm.submit(a.name, job_script(t, a, barrier, 1, nvml));
            wait_placed(opts, slurm, {id});
            wait_ended(slurm, t.seconds);
            collect(opts, {id}, t.warmup, false, r.a, dir);
            r.nvml = read_text(nvml);
            return r;
        }
        const Job& b = jobs.at(static_cast<std::size_t>(run.b));
        r.copies = shape.gpus;
        const std::string sa = job_script(t, a, barrier, 2 * shape.gpus, "");
        const std::string sb = job_script(t, b, barrier, 2 * shape.gpus, "");
        std::vector<std::int64_t> ids_a, ids_b;
        for (int i = 0; i < shape.gpus; ++i) ids_a.push_back(slurm.submit(a.name, sa));
        const std::vector<int> gpus_a = wait_placed(opts, slurm, ids_a);
        for (int i = 0; i < shape.gpus; ++i) ids_b.push_back(slurm.submit(b.name, sb));
        const std::vector<int> gpus_b = wait_placed(opts, slurm, ids_b);
        // Each GPU one of each: otherwise the speeds would mix other neighbours in.
        std::multiset<int> sa_set(gpus_a.begin(), gpus_a.end()), sb_set(gpus_b.begin(), gpus_b.end());
        if (sa_set != sb_set || std::set<int>(gpus_a.begin(), gpus_a.end()).size() != gpus_a.size()) {
            std::string where;
            for (std::size_t i = 0; i < gpus_a.size(); ++i) where += " " + a.name + ":" + std::to_string(gpus_a[i]);
            for (std::size_t i = 0; i < gpus_b.size(); ++i) where += " " + b.name + ":" + std::to_string(gpus_b[i]);
            throw std::runtime_error("the GPUs did not get one " + a.name + " and one " + b.name + " each (GPUs" +
                                     where + "): does another job run on " + t.node + "?");
        }
        wait_ended(slurm, t.seconds);
        collect(opts, ids_a, t.warmup, true, r.a, dir);
        collect(opts, ids_b, t.warmup, true, r.b, dir);
        return r;
    } catch (const Interrupted&) {
        throw;  // the destructor cancels the run's jobs; the caller stops
    } catch (const std::exception& e) {
        r.error = e.what();
        return r;
    }
}

}  // namespace coloc::ctl::probe
