// model-learning MEASUREMENTS.csv
// How fast the model learns a GPU type it has never seen. For each unseen type (v100, then
// p100, then k80) the model starts from the other two types' measured pairs; the unseen type's
// pairs then arrive one at a time in a seeded random order through the learner colocd's
// observe op drives. After 0, 10, 25, 50, 100 and 200 observations it prints the mean absolute
// error of the speed on the unseen type's pairs not yet observed, beside `colocctl fit`'s batch
// fit on the same observations (catalogue_from + ColocModel) and the simple rules measured on
// the same pairs. Last line: "targets: met" or "targets: missed: <which>".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/elapsed_learning.hpp"
#include "bench/targets.hpp"
#include "model/coloc_model.hpp"
#include "model/io/measurements_csv.hpp"
#include "model/measurements.hpp"
#include "model/validation.hpp"

using namespace coloc::model;

namespace {
constexpr int kCheckpoints[] = {0, 10, 25, 50, 100, 200};
constexpr double kMaeAfter100 = 0.06;
constexpr double kOnlineVsBatch = 1.10;
constexpr unsigned kSeed = 16;

struct Truth {
    PairMeasurement row;
    double speed;
};

struct Scores {
    double mae = 0, none = 0, util = NAN, uncertainty = 0;
};

Scores score(const ColocModel& model, const std::vector<Truth>& pairs, std::size_t from) {
    Scores s;
    double util_sum = 0;
    int util_n = 0;
    const std::size_t n = pairs.size() - from;
    for (std::size_t k = from; k < pairs.size(); ++k) {
        const Truth& t = pairs[k];
        const JobProfile* job = model.catalogue().find(t.row.job);
        const JobProfile* other = model.catalogue().find(t.row.neighbour);
        const Neighbour nb{other, Sharing::Gpu, std::nullopt};
        const Prediction p = model.predict(*job, std::span(&nb, 1));
        s.mae += std::abs(p.speed - t.speed);
        s.uncertainty += p.uncertainty;
        s.none += std::abs(1.0 - t.speed);
        if (job->has("sm_util") && other->has("sm_util")) {
            util_sum += std::abs(std::min(1.0, 1.0 / (job->sm_util + other->sm_util)) - t.speed);
            ++util_n;
        }
    }
    s.mae /= static_cast<double>(n);
    s.uncertainty /= static_cast<double>(n);
    s.none /= static_cast<double>(n);
    if (util_n == static_cast<int>(n)) s.util = util_sum / util_n;
    return s;
}

}  // namespace

namespace {
void unseen_type(const Measurements& m, const std::string& gpu, std::vector<std::string>& missed) {
    Measurements base = m;
    base.pairs.clear();
    std::vector<Truth> truth;
    for (const PairMeasurement& p : m.pairs) {
        if (p.gpu_type != gpu) {
            base.pairs.push_back(p);
            continue;
        }
        const double s = normalised_speed(m, p);
        if (p.where == Sharing::Gpu && s > 0) truth.push_back({p, s});
    }
    std::mt19937 rng(kSeed);
    std::shuffle(truth.begin(), truth.end(), rng);
    ColocParams params;
    params.gpu_type = gpu;
    ColocModel online(catalogue_from(base), params);
    Learner& learner = *online.learner();

    // What this model reaches on the type with every other pair of it measured (leave one pair
    // out): no number of observations can be expected to do better.
    const double floor = leave_one_pair_out(gpu_pair_data(catalogue_from(m), gpu), params.gpu).coloc.value();
    std::printf("\nunseen GPU type %s: %zu measured pairs; the model starts from the other types' %zu\n", gpu.c_str(),
                truth.size(), base.pairs.size());
    std::printf("floor: MAE %.4f with every other pair of %s measured (leave one pair out)\n", floor, gpu.c_str());
    std::printf("%6s %8s %8s %8s %8s %8s %8s\n", "obs", "online", "batch", "ratio", "none", "util", "unc");
    std::size_t done = 0;
    for (int k : kCheckpoints) {
        if (static_cast<std::size_t>(k) >= truth.size()) break;
        for (; done < static_cast<std::size_t>(k); ++done) {
            const Truth& t = truth[done];
            const Neighbour n{online.catalogue().find(t.row.neighbour), Sharing::Gpu, std::nullopt};
            learner.observe(*online.catalogue().find(t.row.job), std::span(&n, 1), 1.0 / t.speed);
        }
        Measurements fitted = base;
        for (std::size_t i = 0; i < done; ++i) fitted.pairs.push_back(truth[i].row);
        const ColocModel batch(catalogue_from(fitted), params);
        const Scores on = score(online, truth, done), off = score(batch, truth, done);
        const double ratio = on.mae / off.mae;
        char util[16] = "n/a";
        if (!std::isnan(on.util)) std::snprintf(util, sizeof util, "%.4f", on.util);
        std::printf("%6d %8.4f %8.4f %8.2f %8.4f %8s %8.4f\n", k, on.mae, off.mae, ratio, on.none, util,
                    on.uncertainty);
        if (k == 0) {
            const double rule = std::isnan(on.util) ? on.none : std::min(on.none, on.util);
            if (on.mae > rule) missed.push_back(gpu + " at 0 observations worse than the simple rules");
        }
        if (k == 100 && on.mae > kMaeAfter100) {
            char why[96] = "";
            if (floor > kMaeAfter100)
                std::snprintf(why, sizeof why, " (its floor, every other pair measured, is %.4f)", floor);
            missed.push_back(gpu + " above 0.06 after 100 observations" + why);
        }
        if (ratio > kOnlineVsBatch) missed.push_back(gpu + " online above 1.1x batch at " + std::to_string(k));
    }
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: model-learning MEASUREMENTS.csv\n");
        return 2;
    }
    std::vector<std::string> missed;
    try {
        const Measurements m = coloc::model::io::read_measurements_csv(argv[1]);
        std::printf(
            "Learning an unseen GPU type, one observed pair at a time (seed %u). MAE of the speed on the\n"
            "pairs not yet observed: online (the learner behind colocd's observe op) and batch (colocctl fit\n"
            "on the same observations); none = speed 1; util = 1 / (sum of SM utilisations), where known;\n"
            "unc = the mean uncertainty the model gives those predictions.\n",
            kSeed);
        for (const char* gpu : {"v100", "p100", "k80"}) unseen_type(m, gpu, missed);
        bench::elapsed_learning(m, kSeed, missed);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "model-learning: %s\n", e.what());
        return 1;
    }
    return coloc::bench::print_targets(missed);
}
