// Same-GPU pairs observed live: a job's measured speed beside one neighbour on one GPU of a
// type, averaged over its sightings. The model merges them into that type's reference table
// (beside the catalogue's measured pairs), so what is learned online is exactly what a batch
// fit on the same pairs gives, and every unobserved pair of similar jobs moves with them.
#pragma once

#include <map>
#include <string>
#include <tuple>

namespace coloc::model {

struct ObservedSpeed {
    double speed = 1;  // mean of the observed speeds (relative to solo)
    long n = 0;        // sightings averaged into it
};

class ObservedPairs {
public:
    using Key = std::tuple<std::string, std::string, std::string>;  // gpu type, job, neighbour

    // Averages one more sighting in; returns by how much the mean moved (the first sighting
    // moves it by its full value).
    double add(const std::string& gpu_type, const std::string& job, const std::string& neighbour, double speed);
    void set(const std::string& gpu_type, const std::string& job, const std::string& neighbour, ObservedSpeed s);
    const std::map<Key, ObservedSpeed>& all() const { return pairs_; }
    bool empty() const { return pairs_.empty(); }
    void clear() { pairs_.clear(); }

private:
    std::map<Key, ObservedSpeed> pairs_;
};

}  // namespace coloc::model
