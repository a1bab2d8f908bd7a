#include "tests/support/place_reference.hpp"

#include <utility>

#include "place/ranking.hpp"

namespace coloc::place {

namespace {

std::size_t choose(std::size_t n, std::size_t k) {
    if (k > n) return 0;
    std::size_t r = 1;
    for (std::size_t i = 1; i <= k; ++i) {
        r = r * (n - k + i) / i;
        if (r > 1'000'000) return r;
    }
    return r;
}

}  // namespace

bool better(const Candidate& a, const Candidate& b) {
    return ranks_before(a.loss, b.loss, [&] {
        std::vector<std::pair<int, std::vector<int>>> ka, kb;
        for (const auto& p : a.where) ka.emplace_back(p.node, p.gpus);
        for (const auto& p : b.where) kb.emplace_back(p.node, p.gpus);
        return ka < kb;
    });
}

std::vector<std::vector<int>> gpu_subsets(const std::vector<int>& gpus, int k, std::size_t limit) {
    std::vector<std::vector<int>> out;
    const int n = static_cast<int>(gpus.size());
    if (k <= 0 || k > n || choose(gpus.size(), static_cast<std::size_t>(k)) > limit) return out;
    std::vector<int> idx(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) idx[i] = i;
    while (true) {
        std::vector<int> set;
        for (int i : idx) set.push_back(gpus[i]);
        out.push_back(std::move(set));
        int i = k - 1;
        while (i >= 0 && idx[i] == n - k + i) --i;
        if (i < 0) break;
        ++idx[i];
        for (int j = i + 1; j < k; ++j) idx[j] = idx[j - 1] + 1;
    }
    return out;
}

}  // namespace coloc::place
