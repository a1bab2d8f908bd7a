#include "spank/local_state.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

namespace coloc::spank {

using json = nlohmann::json;

namespace {

constexpr std::pair<HoldingMode, proto::GpuMode> kHeldModes[] = {
    {HoldingMode::Bind, proto::GpuMode::Bind},
    {HoldingMode::Narrow, proto::GpuMode::Narrow},
    {HoldingMode::Observe, proto::GpuMode::Observe},
};
constexpr const char* kNoneName = "none";

}  // namespace

const char* holding_mode_name(HoldingMode mode) {
    for (const auto& [held, gpu_mode] : kHeldModes)
        if (held == mode) return proto::mode_name(gpu_mode);
    return kNoneName;
}

std::optional<HoldingMode> parse_holding_mode(std::string_view name) {
    if (name == kNoneName) return HoldingMode::None;
    if (const auto gpu_mode = proto::parse_mode(name))
        for (const auto& [held, m] : kHeldModes)
            if (m == *gpu_mode) return held;
    return std::nullopt;
}

const Holding* NodeState::find(std::int64_t job_id) const {
    for (const auto& h : holdings)
        if (h.job_id == job_id && h.active()) return &h;
    return nullptr;
}

std::vector<int> slot_use(const NodeState& state, int gpus) {
    std::vector<int> use(static_cast<std::size_t>(std::max(gpus, 0)), 0);
    for (const auto& h : state.holdings) {
        if (h.mode != HoldingMode::Bind || !h.active()) continue;
        for (int g : h.gpus)
            if (g >= 0 && g < gpus) ++use[static_cast<std::size_t>(g)];
    }
    return use;
}

std::vector<int> full_gpus(const NodeState& state, const std::vector<int>& chosen, int gpus, int slots_per_gpu) {
    std::vector<int> full;
    if (slots_per_gpu <= 0) return full;
    const std::vector<int> use = slot_use(state, gpus);
    for (int g : chosen)
        if (g >= 0 && g < gpus && use[static_cast<std::size_t>(g)] >= slots_per_gpu) full.push_back(g);
    return full;
}

LocalChoice choose_local(const NodeState& state, int gpus, int slots_per_gpu, int want) {
    LocalChoice choice;
    if (gpus <= 0 || slots_per_gpu <= 0 || want <= 0) return choice;
    std::vector<int> use = slot_use(state, gpus);
    std::vector<int> order(static_cast<std::size_t>(gpus));
    for (int g = 0; g < gpus; ++g) order[static_cast<std::size_t>(g)] = g;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return use[static_cast<std::size_t>(a)] < use[static_cast<std::size_t>(b)]; });
    for (int g : order) {
        if (static_cast<int>(choice.gpus.size()) == want) break;
        if (use[static_cast<std::size_t>(g)] < slots_per_gpu) choice.gpus.push_back(g);
    }
    if (choice.gpus.empty()) {
        choice.gpus.push_back(order.front());
        choice.over_capacity = true;
    }
    choice.fewer = static_cast<int>(choice.gpus.size()) < want;
    std::sort(choice.gpus.begin(), choice.gpus.end());
    return choice;
}

std::vector<proto::LocalPlacement> unreported(const NodeState& state) {
    std::vector<proto::LocalPlacement> out;
    for (const auto& h : state.holdings) {
        if (h.reported && h.active()) continue;
        if (out.size() == kMaxUnreported) break;
        out.push_back({.job_id = h.job_id,
                       .gpus = h.gpus,
                       .since = h.since,
                       .ended = h.ended,
                       .exit_status = h.exit_status,
                       .elapsed_s = h.elapsed_s});
    }
    return out;
}

void mark_reported(NodeState& state, const std::vector<proto::LocalPlacement>& sent) {
    auto& v = state.holdings;
    for (const auto& u : sent) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (it->job_id != u.job_id || it->ended != u.ended) continue;
            if (it->active())
                it->reported = true;
            else
                v.erase(it);
            break;
        }
    }
}

Holding record(NodeState& state, Holding h) {
    if (const Holding* existing = state.find(h.job_id)) return *existing;
    state.holdings.push_back(h);
    return h;
}

std::optional<Holding> end_job(NodeState& state, std::int64_t job_id, std::int64_t now, int exit_status) {
    auto& v = state.holdings;
    auto it = std::find_if(v.begin(), v.end(), [&](const Holding& h) { return h.job_id == job_id && h.active(); });
    if (it == v.end()) return std::nullopt;
    if (it->mode == HoldingMode::None) {
        v.erase(it);
        return std::nullopt;
    }
    it->ended = std::max<std::int64_t>(now, 1);
    it->exit_status = exit_status;
    it->elapsed_s = static_cast<double>(std::max<std::int64_t>(now - it->since, 0));
    Holding ended = *it;
    // Keep at most kMaxEnded ended holdings: the oldest undelivered ends go first.
    std::size_t n =
        static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](const Holding& h) { return !h.active(); }));
    for (auto e = v.begin(); n > kMaxEnded && e != v.end();) {
        if (!e->active() && !(e->job_id == ended.job_id && e->ended == ended.ended)) {
            e = v.erase(e);
            --n;
        } else {
            ++e;
        }
    }
    return ended;
}

json state_to_json(const NodeState& state) {
    json holdings = json::array();
    for (const auto& h : state.holdings) {
        json e = {{"job_id", h.job_id},     {"mode", holding_mode_name(h.mode)}, {"gpus", h.gpus},
                  {"decision", h.decision}, {"keep_slurm", h.keep_slurm},        {"reported", h.reported},
                  {"since", h.since}};
        if (!h.active()) {
            e["ended"] = h.ended;
            e["exit_status"] = h.exit_status;
            e["elapsed_s"] = h.elapsed_s;
        }
        holdings.push_back(std::move(e));
    }
    return {{"v", 1}, {"holdings", holdings}};
}

NodeState state_from_json(const json& j, int& skipped) {
    NodeState state;
    skipped = 0;
    if (!j.is_object()) {
        ++skipped;
        return state;
    }
    if (auto it = j.find("holdings"); it != j.end() && it->is_array()) {
        for (const json& e : *it) {
            try {
                Holding h;
                h.job_id = e.at("job_id").get<std::int64_t>();
                const auto mode = parse_holding_mode(e.at("mode").get<std::string>());
                if (!mode) throw std::runtime_error("bad mode");
                h.mode = *mode;
                h.gpus = e.at("gpus").get<std::vector<int>>();
                h.decision = e.value("decision", std::int64_t{0});
                h.keep_slurm = e.value("keep_slurm", false);
                h.reported = e.value("reported", true);
                h.since = e.value("since", std::int64_t{0});
                h.ended = e.value("ended", std::int64_t{0});
                h.exit_status = e.value("exit_status", 0);
                h.elapsed_s = e.value("elapsed_s", 0.0);
                if (h.job_id <= 0 || h.ended < 0 || (h.active() && state.find(h.job_id)))
                    throw std::runtime_error("bad entry");
                state.holdings.push_back(std::move(h));
            } catch (const std::exception&) {
                ++skipped;
            }
        }
    }
    return state;
}

namespace {

std::string file_name_for(const std::string& node) {
    std::string s = node.empty() ? "_" : node;
    for (char& c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
    if (s == "." || s == "..") s = "_";
    return s;
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    int release() {
        int f = fd_;
        fd_ = -1;
        return f;
    }

private:
    int fd_;
};

std::string errno_text(const std::string& what, const std::string& path) {
    return what + " " + path + ": " + std::strerror(errno);
}

// Waits for the exclusive lock by polling: flock() itself has no timeout, and a job launch must
// not wait on a stuck peer for longer than the deadline.
void lock_within(int fd, const std::string& path, int wait_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return;
        if (errno != EWOULDBLOCK && errno != EINTR) throw StateError(errno_text("cannot lock", path));
        if (std::chrono::steady_clock::now() >= deadline)
            throw StateError("lock " + path + " still held by another step after " + std::to_string(wait_ms) + " ms");
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

bool read_file(const std::string& path, std::string& out) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) return false;
        throw StateError(errno_text("cannot open", path));
    }
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw StateError(errno_text("cannot read", path));
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

void write_file_atomically(const std::string& path, const std::string& text, const std::string& tmp) {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw StateError(errno_text("cannot create", tmp));
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw StateError(errno_text("cannot write", tmp));
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd.release()) != 0) throw StateError(errno_text("cannot write", tmp));
    if (::rename(tmp.c_str(), path.c_str()) != 0) throw StateError(errno_text("cannot replace", path));
}

// Merges the notes in `dir` into `state`: running holdings first, then ends, so that a job
// whose placement and end were both left as notes ends up ended. Returns the merged files.
std::vector<std::string> merge_notes(const std::string& dir, NodeState& state) {
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        std::string name = e.path().filename().string();
        if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    std::vector<Holding> running, ends;
    for (const std::string& path : files) {
        std::string text;
        try {
            if (!read_file(path, text)) continue;
        } catch (const StateError&) {
            continue;
        }
        int skipped = 0;
        NodeState one = state_from_json(json::parse(text, nullptr, false), skipped);
        for (Holding& h : one.holdings) (h.active() ? running : ends).push_back(std::move(h));
    }
    for (const Holding& h : running) record(state, h);
    for (const Holding& h : ends) end_job(state, h.job_id, h.ended, h.exit_status);
    return files;
}

}  // namespace

StateFile::StateFile(std::string dir, const std::string& node) : dir_(std::move(dir)) {
    std::string base = dir_ + "/" + file_name_for(node);
    lock_path_ = base + ".lock";
    data_path_ = base + ".json";
    notes_dir_ = base + ".notes";
}

NodeState StateFile::peek() const {
    std::string text;
    try {
        if (!read_file(data_path_, text)) return {};
    } catch (const StateError&) {
        return {};
    }
    int skipped = 0;
    return state_from_json(json::parse(text, nullptr, false), skipped);
}

void StateFile::leave_note(const Holding& h) const {
    std::error_code ec;
    std::filesystem::create_directories(notes_dir_, ec);
    if (ec) throw StateError("cannot create " + notes_dir_ + ": " + ec.message());
    // One file per job, kind and process: notes never overwrite each other. The name is
    // complete only after the rename, so a merge never reads half a note.
    std::string path = notes_dir_ + "/" + std::to_string(h.job_id) + (h.active() ? ".run." : ".end.") +
                       std::to_string(::getpid()) + ".json";
    NodeState one;
    one.holdings.push_back(h);
    write_file_atomically(path, state_to_json(one).dump() + "\n", path + ".part");
}

std::string StateFile::update(int wait_ms, const std::function<bool(NodeState&)>& fn) const {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw StateError("cannot create " + dir_ + ": " + ec.message());
    Fd lock(::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (lock.get() < 0) throw StateError(errno_text("cannot open", lock_path_));
    lock_within(lock.get(), lock_path_, wait_ms);  // released when `lock` closes

    std::string warning;
    NodeState state;
    std::string text;
    if (read_file(data_path_, text)) {
        json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
        int skipped = 0;
        if (j.is_discarded()) {
            warning = data_path_ + " is not valid JSON; starting afresh";
        } else {
            state = state_from_json(j, skipped);
            if (skipped > 0) warning = data_path_ + ": skipped " + std::to_string(skipped) + " unreadable entries";
        }
    }
    std::vector<std::string> merged = merge_notes(notes_dir_, state);
    // Only the lock holder writes the state, so one temporary name is enough.
    if (fn(state) || !merged.empty())
        write_file_atomically(data_path_, state_to_json(state).dump() + "\n", data_path_ + ".tmp");
    for (const std::string& note : merged) ::unlink(note.c_str());
    return warning;
}

}  // namespace coloc::spank
