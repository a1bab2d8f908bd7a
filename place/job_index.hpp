// The running jobs by id, for ClusterState::find: a flat table (open addressing, linear probing)
// beside the state's own map, so that a lookup reads one or two neighbouring slots rather than a
// bucket and then a list node. The replay's sharing rule looks jobs up for every held job at
// every change near it, and the map's lookups were a tenth of a deep queue's replay.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace coloc::place {

struct RunningJob;

class JobIndex {
public:
    const RunningJob* find(std::uint64_t id) const {
        if (slots_.empty()) return nullptr;
        for (std::size_t i = home(id);; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (!s.job) return nullptr;
            if (s.id == id) return s.job;
        }
    }

    // `id` is not in the index yet.
    void insert(std::uint64_t id, const RunningJob* job) {
        if (2 * (size_ + 1) > slots_.size()) grow();
        place(id, job);
        ++size_;
    }

    void erase(std::uint64_t id) {
        if (slots_.empty()) return;
        std::size_t i = home(id);
        while (slots_[i].job && slots_[i].id != id) i = (i + 1) & mask_;
        if (!slots_[i].job) return;
        // Backward shift: each later entry of the run moves into the hole when its home allows,
        // so that no lookup meets an empty slot before its entry.
        for (std::size_t j = (i + 1) & mask_; slots_[j].job; j = (j + 1) & mask_) {
            const std::size_t h = home(slots_[j].id);
            if (((j - h) & mask_) >= ((j - i) & mask_)) {
                slots_[i] = slots_[j];
                i = j;
            }
        }
        slots_[i] = {};
        --size_;
    }

    void clear() {
        slots_.clear();
        size_ = 0;
        mask_ = 0;
    }

private:
    struct Slot {
        std::uint64_t id = 0;
        const RunningJob* job = nullptr;  // null: empty
    };

    std::size_t home(std::uint64_t id) const {
        return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
    }
    void place(std::uint64_t id, const RunningJob* job) {
        std::size_t i = home(id);
        while (slots_[i].job) i = (i + 1) & mask_;
        slots_[i] = {id, job};
    }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
        mask_ = slots_.size() - 1;
        for (const Slot& s : old)
            if (s.job) place(s.id, s.job);
    }

    std::vector<Slot> slots_;
    std::size_t size_ = 0;
    std::size_t mask_ = 0;
};

}  // namespace coloc::place
