#include "model/validation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "model/features.hpp"

namespace coloc::model {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double median(std::vector<double> v) {
    if (v.empty()) return 0.5;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

ReferenceTable reference(const GpuPairData& d, int held_out) {
    ReferenceTable t(d.gpu);
    std::vector<int> ref(d.types.size(), -1);
    for (std::size_t i = 0; i < d.types.size(); ++i)
        if (static_cast<int>(i) != held_out) ref[i] = t.add_job(d.types[i]->name, solo_features(*d.types[i], d.gpu));
    for (std::size_t i = 0; i < d.types.size(); ++i)
        for (std::size_t j = 0; j < d.types.size(); ++j)
            if (ref[i] >= 0 && ref[j] >= 0 &&
                !std::isnan(d.S(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))))
                t.set_speed(ref[i], ref[j], d.S(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)));
    return t;
}

GpuQuery query(const GpuPairData& d, int i, const ReferenceTable& t) {
    GpuQuery q;
    q.profile = d.types[static_cast<std::size_t>(i)];
    q.features = solo_features(*q.profile, d.gpu);
    q.ref = t.index_of(q.profile->name);
    return q;
}

}  // namespace

int GpuPairData::observations() const {
    int n = 0;
    for (Eigen::Index k = 0; k < S.size(); ++k) n += !std::isnan(S.data()[k]);
    return n;
}

void Mae::add(double pred, double truth) {
    sum += std::abs(pred - truth);
    ++n;
}

double Mae::value() const { return n ? sum / n : kNaN; }

GpuPairData gpu_pair_data(const ProfileCatalogue& cat, const std::string& gpu) {
    GpuPairData d{gpu, {}, {}};
    std::map<std::string, int> index;
    for (const JobProfile& p : cat.profiles()) {
        auto it = p.solo_throughput.find(gpu);
        if (it == p.solo_throughput.end() || !(it->second > 0)) continue;
        index[p.name] = static_cast<int>(d.types.size());
        d.types.push_back(&p);
    }
    const auto n = static_cast<Eigen::Index>(d.types.size());
    d.S = Eigen::MatrixXd::Constant(n, n, kNaN);
    for (const MeasuredPair& m : cat.pairs())
        if (m.gpu_type == gpu && index.count(m.job) && index.count(m.neighbour))
            d.S(index[m.job], index[m.neighbour]) = m.speed;
    return d;
}

// (b) Leave one job type out: none of its pairs are known, only its solo facts.

CvScores leave_one_type_out(const GpuPairData& d, const GpuShareParams& params) {
    CvScores r;
    const int T = static_cast<int>(d.types.size());
    for (int t = 0; t < T; ++t) {
        std::vector<double> train;
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                if (i != t && j != t && !std::isnan(d.S(i, j))) train.push_back(d.S(i, j));
        const double med = median(train);
        // Nearest type of the same family by batch size (log scale), if any.
        int near = -1;
        const JobProfile& held = *d.types[static_cast<std::size_t>(t)];
        for (int k = 0; k < T; ++k) {
            const JobProfile& c = *d.types[static_cast<std::size_t>(k)];
            if (k == t || c.family != held.family) continue;
            auto dist = [&](const JobProfile& p) {
                return std::abs(std::log2(std::max(p.batch_size, 1.0)) - std::log2(std::max(held.batch_size, 1.0)));
            };
            if (near < 0 || dist(c) < dist(*d.types[static_cast<std::size_t>(near)])) near = k;
        }
        auto family_pred = [&](int i, int j) {
            if (near < 0) return med;
            const double v = d.S(i == t ? near : i, j == t ? near : j);
            return std::isnan(v) ? med : v;
        };
        const ReferenceTable table = reference(d, t);
        const GpuQuery qt = query(d, t, table);
        for (int x = 0; x < T; ++x) {
            const GpuQuery qx = query(d, x, table);
            if (x == t) {
                if (std::isnan(d.S(t, t))) continue;
                const double truth = d.S(t, t);
                r.coloc.add(predict_gpu_speed(table, qt, qt, true, params), truth);
                r.none.add(1.0, truth);
                r.median.add(med, truth);
                r.baseline.add(family_pred(t, t), truth);
                continue;
            }
            for (int dir = 0; dir < 2; ++dir) {
                const int a = dir ? x : t, b = dir ? t : x;
                if (std::isnan(d.S(a, b))) continue;
                const double truth = d.S(a, b);
                r.coloc.add(predict_gpu_speed(table, dir ? qx : qt, dir ? qt : qx, false, params), truth);
                r.none.add(1.0, truth);
                r.median.add(med, truth);
                r.baseline.add(family_pred(a, b), truth);
            }
        }
    }
    return r;
}

// (a) Leave one pair out: both directions of one unordered pair unknown, everything else known.

CvScores leave_one_pair_out(const GpuPairData& d, const GpuShareParams& params) {
    CvScores r;
    const int T = static_cast<int>(d.types.size());
    ReferenceTable table = reference(d, -1);
    Eigen::MatrixXd S = d.S;
    for (int a = 0; a < T; ++a) {
        for (int b = a; b < T; ++b) {
            const double sab = S(a, b), sba = S(b, a);
            if (std::isnan(sab) && std::isnan(sba)) continue;
            const int ra = table.index_of(d.types[static_cast<std::size_t>(a)]->name);
            const int rb = table.index_of(d.types[static_cast<std::size_t>(b)]->name);
            table.set_speed(ra, rb, kNaN);
            table.set_speed(rb, ra, kNaN);
            S(a, b) = S(b, a) = kNaN;
            std::vector<double> train, row(static_cast<std::size_t>(T), 0), col(static_cast<std::size_t>(T), 0);
            std::vector<int> nrow(static_cast<std::size_t>(T), 0), ncol(static_cast<std::size_t>(T), 0);
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j)
                    if (!std::isnan(S(i, j))) {
                        train.push_back(S(i, j));
                        row[static_cast<std::size_t>(i)] += S(i, j);
                        ++nrow[static_cast<std::size_t>(i)];
                        col[static_cast<std::size_t>(j)] += S(i, j);
                        ++ncol[static_cast<std::size_t>(j)];
                    }
            const double med = median(train);
            double mean = 0;
            for (double v : train) mean += v;
            mean /= std::max<std::size_t>(1, train.size());
            auto rowcol = [&](int i, int j) {
                const double ri = nrow[static_cast<std::size_t>(i)]
                                      ? row[static_cast<std::size_t>(i)] / nrow[static_cast<std::size_t>(i)]
                                      : mean;
                const double cj = ncol[static_cast<std::size_t>(j)]
                                      ? col[static_cast<std::size_t>(j)] / ncol[static_cast<std::size_t>(j)]
                                      : mean;
                return std::clamp(ri + cj - mean, 0.0, 1.0);
            };
            const GpuQuery qa = query(d, a, table), qb = query(d, b, table);
            auto score = [&](int i, int j, double truth, const GpuQuery& qi, const GpuQuery& qj) {
                if (std::isnan(truth)) return;
                r.coloc.add(predict_gpu_speed(table, qi, qj, i == j, params), truth);
                r.none.add(1.0, truth);
                r.median.add(med, truth);
                r.baseline.add(rowcol(i, j), truth);
            };
            score(a, b, sab, qa, qb);
            if (a != b) score(b, a, sba, qb, qa);
            table.set_speed(ra, rb, sab);
            table.set_speed(rb, ra, sba);
            S(a, b) = sab;
            S(b, a) = sba;
        }
    }
    return r;
}

}  // namespace coloc::model
