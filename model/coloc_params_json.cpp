// ColocModel <-> JSON: the daemon persists this in SQLite, `colocctl fit` writes the
// hyper-parameters into the catalogue. Pair residuals are stored by profile name, since ids
// are only stable within one catalogue.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "model/coloc_model.hpp"

namespace coloc::model {

namespace {
using nlohmann::json;

template <class T>
void read(const json& j, const char* key, T& out) {
    if (j.contains(key)) out = j.at(key).get<T>();
}

json gpu_json(const GpuShareParams& g) {
    return json{{"bandwidth", g.bandwidth},
                {"family_penalty", g.family_penalty},
                {"ridge", g.ridge},
                {"prior_weight", g.prior_weight},
                {"slice_overhead", g.slice_overhead},
                {"gpu_mem_capacity_gb", g.gpu_mem_capacity_gb},
                {"min_speed", g.min_speed}};
}

void gpu_from(const json& j, GpuShareParams& g) {
    read(j, "bandwidth", g.bandwidth);
    read(j, "family_penalty", g.family_penalty);
    read(j, "ridge", g.ridge);
    read(j, "prior_weight", g.prior_weight);
    read(j, "slice_overhead", g.slice_overhead);
    read(j, "gpu_mem_capacity_gb", g.gpu_mem_capacity_gb);
    read(j, "min_speed", g.min_speed);
    for (double b : g.bandwidth)
        if (!(b > 0)) throw std::invalid_argument("coloc params: gpu.bandwidth entries must be > 0");
}
}  // namespace

json ColocModel::params_json() const {
    const TermVector& th = calibration_.theta();
    const TermMatrix& P = calibration_.covariance();
    json cov = json::array();
    for (int i = 0; i < kNumTerms; ++i) {
        json row = json::array();
        for (int k = 0; k < kNumTerms; ++k) row.push_back(P(i, k));
        cov.push_back(row);
    }
    json residuals = json::array();
    std::vector<std::pair<std::uint64_t, Residual>> sorted(residuals_.all().begin(), residuals_.all().end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [key, r] : sorted) {
        int a, b, t;
        PairResiduals::unkey(key, a, b, t);
        if (a >= catalogue_.size() || b >= catalogue_.size()) continue;
        residuals.push_back({{"job", catalogue_.at(a).name},
                             {"neighbour", catalogue_.at(b).name},
                             {"term", term_name(t)},
                             {"value", r.value},
                             {"n", r.n}});
    }
    auto pairs_json = [](const ObservedPairs& pairs) {
        json out = json::array();
        for (const auto& [key, seen] : pairs.all()) {
            const auto& [gpu, job, neighbour] = key;
            out.push_back(
                {{"gpu_type", gpu}, {"job", job}, {"neighbour", neighbour}, {"speed", seen.speed}, {"n", seen.n}});
        }
        return out;
    };
    return json{
        {"model", "coloc"},
        {"version", 1},
        {"gpu_type", params_.gpu_type},
        {"gpu", gpu_json(params_.gpu)},
        {"node", {{"host", params_.node.host}, {"pcie", params_.node.pcie}, {"nvlink", params_.node.nvlink}}},
        {"learning",
         {{"rls_prior_var", params_.rls_prior_var},
          {"rls_noise_var", params_.rls_noise_var},
          {"rls_forgetting", params_.rls_forgetting},
          {"residual_min_rate", params_.residual_min_rate}}},
        {"calibration", {{"theta", {th[0], th[1], th[2]}}, {"covariance", cov}, {"updates", calibration_.updates()}}},
        {"residuals", residuals},
        {"observed_pairs", pairs_json(observed_)},
        {"elapsed_pairs", pairs_json(elapsed_)}};
}

void ColocModel::load_params_json(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("coloc params: expected a JSON object");
    if (j.contains("model") && j.at("model") != "coloc")
        throw std::invalid_argument("coloc params: written by model '" + j.at("model").dump() + "'");
    ColocParams p = params_;
    read(j, "gpu_type", p.gpu_type);
    if (j.contains("gpu")) gpu_from(j.at("gpu"), p.gpu);
    if (j.contains("node")) {
        const json& n = j.at("node");
        read(n, "host", p.node.host);
        read(n, "pcie", p.node.pcie);
        read(n, "nvlink", p.node.nvlink);
    }
    if (j.contains("learning")) {
        const json& l = j.at("learning");
        read(l, "rls_prior_var", p.rls_prior_var);
        read(l, "rls_noise_var", p.rls_noise_var);
        read(l, "rls_forgetting", p.rls_forgetting);
        read(l, "residual_min_rate", p.residual_min_rate);
        if (!(p.rls_prior_var > 0) || !(p.rls_noise_var > 0) || !(p.rls_forgetting > 0 && p.rls_forgetting <= 1))
            throw std::invalid_argument(
                "coloc params: learning needs rls_prior_var, rls_noise_var > 0 and 0 < rls_forgetting <= 1");
    }
    TermVector th = calibration_.theta();
    TermMatrix P = calibration_.covariance();
    long updates = calibration_.updates();
    if (j.contains("calibration")) {
        const json& c = j.at("calibration");
        if (c.contains("theta")) {
            const auto v = c.at("theta").get<std::vector<double>>();
            if (v.size() != kNumTerms) throw std::invalid_argument("coloc params: calibration.theta needs 3 values");
            for (int i = 0; i < kNumTerms; ++i) th[i] = v[static_cast<std::size_t>(i)];
        }
        if (c.contains("covariance")) {
            const auto m = c.at("covariance").get<std::vector<std::vector<double>>>();
            if (m.size() != kNumTerms) throw std::invalid_argument("coloc params: calibration.covariance must be 3x3");
            for (int i = 0; i < kNumTerms; ++i) {
                if (m[static_cast<std::size_t>(i)].size() != kNumTerms)
                    throw std::invalid_argument("coloc params: calibration.covariance must be 3x3");
                for (int k = 0; k < kNumTerms; ++k)
                    P(i, k) = m[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)];
            }
        }
        read(c, "updates", updates);
    }
    std::vector<std::tuple<int, int, int, Residual>> residuals;
    const bool has_residuals = j.contains("residuals");
    if (has_residuals) {
        for (const json& r : j.at("residuals")) {
            const JobProfile* a = catalogue_.find(r.at("job").get<std::string>());
            const JobProfile* b = catalogue_.find(r.at("neighbour").get<std::string>());
            if (!a || !b) continue;  // a profile no longer in the catalogue: forget its pairs
            const std::string t = r.at("term").get<std::string>();
            int term = -1;
            for (int k = 0; k < kNumTerms; ++k)
                if (t == term_name(k)) term = k;
            if (term < 0) throw std::invalid_argument("coloc params: unknown residual term '" + t + "'");
            residuals.emplace_back(a->id, b->id, term, Residual{r.at("value").get<double>(), r.value("n", 1L)});
        }
    }
    auto pairs_from = [&](const char* key, const char* what, ObservedPairs& pairs) {
        if (!j.contains(key)) return false;
        for (const json& o : j.at(key)) {
            const ObservedSpeed s{o.at("speed").get<double>(), o.value("n", 1L)};
            if (!pair_speed_problem(s.speed).empty() || s.n < 1)
                throw std::invalid_argument(std::string("coloc params: ") + what + " " + o.dump() + ": " +
                                            (s.n < 1 ? "n must be at least 1" : pair_speed_problem(s.speed)));
            pairs.set(o.at("gpu_type").get<std::string>(), o.at("job").get<std::string>(),
                      o.at("neighbour").get<std::string>(), s);
        }
        return true;
    };
    ObservedPairs observed, elapsed;
    const bool has_observed = pairs_from("observed_pairs", "observed pair", observed);
    const bool has_elapsed = pairs_from("elapsed_pairs", "pair learned from elapsed times", elapsed);
    // Everything parsed: only now change the model, so a bad file leaves it as it was.
    if (has_observed) observed_ = std::move(observed);
    if (has_elapsed) elapsed_ = std::move(elapsed);
    set_params(p);
    calibration_.set_state(th, P, updates);
    if (has_residuals) {
        residuals_.clear();
        for (const auto& [a, b, t, r] : residuals) residuals_.set(a, b, t, r);
    }
}

}  // namespace coloc::model
