#include "slurm/release.hpp"

#include <cstdio>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_version.h>
}

namespace coloc::slurm {

namespace {

// libslurm's API_CURRENT per release (each release's META); it is the soname's number.
struct SonameOf {
    int major, minor, soname;
};
constexpr SonameOf kSonames[] = {
    {22, 5, 38}, {23, 2, 39}, {23, 11, 40}, {24, 5, 41}, {24, 11, 42}, {25, 5, 43}, {25, 11, 44},
};

std::string major_minor(const Release& r) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%d.%02d", r.major, r.minor);
    return buf;
}

}  // namespace

Release release_of(long version_number) {
    return {static_cast<int>(SLURM_VERSION_MAJOR(version_number)),
            static_cast<int>(SLURM_VERSION_MINOR(version_number)),
            static_cast<int>(SLURM_VERSION_MICRO(version_number))};
}

std::string to_string(const Release& r) {
    return r.micro < 0 ? major_minor(r) : major_minor(r) + "." + std::to_string(r.micro);
}

std::string package_tag(const Release& r) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "slurm%d%02d", r.major, r.minor);
    return buf;
}

std::optional<int> libslurm_soname(const Release& r) {
    for (const auto& s : kSonames)
        if (s.major == r.major && s.minor == r.minor) return s.soname;
    return std::nullopt;
}

std::optional<Release> release_of_libslurm(int soname) {
    for (const auto& s : kSonames)
        if (s.soname == soname) return Release{s.major, s.minor, -1};
    return std::nullopt;
}

Release built_for() { return release_of(SLURM_VERSION_NUMBER); }

// slurm_api_version() packs API_CURRENT, AGE and REVISION as SLURM_VERSION_NUM does major,
// minor and micro; the soname is CURRENT - AGE, and AGE is 0 in every release.
Libslurm libslurm_of_api(long api_version) {
    const int soname = static_cast<int>(SLURM_VERSION_MAJOR(api_version) - SLURM_VERSION_MINOR(api_version));
    return {soname, release_of_libslurm(soname)};
}

Libslurm running() { return libslurm_of_api(slurm_api_version()); }

std::string to_string(const Libslurm& l) {
    const std::string so = "libslurm.so." + std::to_string(l.soname);
    return l.release ? to_string(*l.release) + " (" + so + ")" : so;
}

std::string drift_line(const Release& built, const Libslurm& running) {
    const auto want = libslurm_soname(built);
    if (!want || *want == running.soname) return "";
    return "built for Slurm " + to_string(built) + " (libslurm.so." + std::to_string(*want) +
           ") but running with libslurm.so." + std::to_string(running.soname) +
           (running.release ? " (Slurm " + to_string(*running.release) + ")" : "") +
           ": Slurm refuses a plugin built for another release; install the coloc package built for " +
           (running.release ? "Slurm " + to_string(*running.release) : "this Slurm");
}

std::string version_banner(const std::string& program, const std::string& coloc_version, const Release& built,
                           const Libslurm& running) {
    std::string line = program + " (coloc) " + coloc_version + " (built for Slurm " + to_string(built);
    if (!drift_line(built, running).empty()) line += ", running with " + to_string(running);
    return line + ")";
}

}  // namespace coloc::slurm
