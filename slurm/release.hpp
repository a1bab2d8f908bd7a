// Which Slurm release coloc was built for (the headers' SLURM_VERSION_NUMBER) and which one it
// runs with (the loaded libslurm). Slurm refuses a plugin built for another major.minor release,
// and each release's libslurm has its own soname, so a difference is worth one clear line
// wherever coloc starts.
#pragma once

#include <optional>
#include <string>

namespace coloc::slurm {

struct Release {
    int major = 0;
    int minor = 0;
    int micro = -1;  // -1: not known (libslurm reports only its release, by its API number)
};

// From Slurm's version number: 0xMMmmuu (SLURM_VERSION_NUM).
Release release_of(long version_number);

// "24.11.7", or "24.11" when the micro release is not known.
std::string to_string(const Release& r);

// The suffix that names the release in package versions: "slurm2411".
std::string package_tag(const Release& r);

// libslurm's soname number (its API_CURRENT) for a release, and the release for one: 24.11 has
// libslurm.so.42. nullopt for releases this table does not know.
std::optional<int> libslurm_soname(const Release& r);
std::optional<Release> release_of_libslurm(int soname);

// The release whose headers coloc was compiled with.
Release built_for();

// The loaded libslurm: its soname number (from slurm_api_version()) and its release.
struct Libslurm {
    int soname = 0;
    std::optional<Release> release;
};
Libslurm running();
Libslurm libslurm_of_api(long api_version);

// "24.11 (libslurm.so.42)", or "libslurm.so.45" for a release the table does not know.
std::string to_string(const Libslurm& l);

// One line saying that coloc was built for one release and runs with another's libslurm, and
// what to do about it; empty when they agree (or when the build's release is not in the table).
std::string drift_line(const Release& built, const Libslurm& running);

// "colocctl (coloc) 0.1 (built for Slurm 22.05.8)", with ", running with libslurm.so.42 (24.11)"
// when the loaded libslurm is another release's.
std::string version_banner(const std::string& program, const std::string& coloc_version, const Release& built,
                           const Libslurm& running);

}  // namespace coloc::slurm
