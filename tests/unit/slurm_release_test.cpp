#include <doctest/doctest.h>

extern "C" {
#include <slurm/slurm_version.h>
}

#include "slurm/release.hpp"

using namespace coloc::slurm;

TEST_CASE("Slurm version numbers read as releases") {
    const Release r = release_of(0x180b07);
    CHECK(r.major == 24);
    CHECK(r.minor == 11);
    CHECK(r.micro == 7);
    CHECK(to_string(r) == "24.11.7");
    CHECK(to_string(release_of(0x160508)) == "22.05.8");
    CHECK(to_string(release_of(SLURM_VERSION_NUM(25, 5, 12))) == "25.05.12");
    CHECK(to_string(Release{25, 5, -1}) == "25.05");
}

TEST_CASE("a release's package tag names major and minor") {
    CHECK(package_tag(release_of(0x180b07)) == "slurm2411");
    CHECK(package_tag(release_of(0x160508)) == "slurm2205");
    CHECK(package_tag(release_of(SLURM_VERSION_NUM(25, 5, 0))) == "slurm2505");
}

TEST_CASE("each release has its libslurm soname, and each soname its release") {
    const std::pair<Release, int> known[] = {{{22, 5}, 38},  {{23, 2}, 39}, {{23, 11}, 40}, {{24, 5}, 41},
                                             {{24, 11}, 42}, {{25, 5}, 43}, {{25, 11}, 44}};
    for (const auto& [release, soname] : known) {
        CAPTURE(to_string(release));
        CHECK(libslurm_soname(release) == soname);
        REQUIRE(release_of_libslurm(soname).has_value());
        CHECK(to_string(*release_of_libslurm(soname)) == to_string(release));
    }
    // The micro release does not change the soname.
    CHECK(libslurm_soname(release_of(SLURM_VERSION_NUM(24, 11, 7))) == 42);
    CHECK_FALSE(libslurm_soname(Release{21, 8}).has_value());
    CHECK_FALSE(release_of_libslurm(45).has_value());
}

TEST_CASE("libslurm's API number names its soname") {
    // 24.11: API_CURRENT 42, AGE 0, REVISION 0.
    const Libslurm l = libslurm_of_api(SLURM_VERSION_NUM(42, 0, 0));
    CHECK(l.soname == 42);
    REQUIRE(l.release.has_value());
    CHECK(to_string(l) == "24.11 (libslurm.so.42)");
    CHECK(to_string(libslurm_of_api(SLURM_VERSION_NUM(46, 1, 3))) == "libslurm.so.45");
}

TEST_CASE("the release built for is the headers' and the running libslurm is of the same release") {
    CHECK(to_string(built_for()) == to_string(release_of(SLURM_VERSION_NUMBER)));
    // The tests link the libslurm of the headers they were built with.
    CHECK(running().soname == libslurm_soname(built_for()));
    CHECK(drift_line(built_for(), running()).empty());
}

TEST_CASE("a libslurm of another release is named with what to do") {
    const Release built = release_of(SLURM_VERSION_NUM(22, 5, 8));
    CHECK(drift_line(built, libslurm_of_api(SLURM_VERSION_NUM(38, 0, 0))).empty());
    const std::string other = drift_line(built, libslurm_of_api(SLURM_VERSION_NUM(42, 0, 0)));
    CHECK(other.find("built for Slurm 22.05.8 (libslurm.so.38) but running with libslurm.so.42 (Slurm 24.11)") !=
          std::string::npos);
    CHECK(other.find("install the coloc package built for Slurm 24.11") != std::string::npos);
    const std::string unknown = drift_line(built, libslurm_of_api(SLURM_VERSION_NUM(45, 0, 0)));
    CHECK(unknown.find("running with libslurm.so.45:") != std::string::npos);
    // A release newer than the table: nothing to compare with.
    CHECK(drift_line(Release{26, 5, 1}, libslurm_of_api(SLURM_VERSION_NUM(45, 0, 0))).empty());
}

TEST_CASE("--version names the release built for, and the running one when it differs") {
    const Release built = release_of(SLURM_VERSION_NUM(22, 5, 8));
    CHECK(version_banner("colocd", "0.1", built, libslurm_of_api(SLURM_VERSION_NUM(38, 0, 0))) ==
          "colocd (coloc) 0.1 (built for Slurm 22.05.8)");
    CHECK(version_banner("colocctl", "0.1", built, libslurm_of_api(SLURM_VERSION_NUM(42, 0, 0))) ==
          "colocctl (coloc) 0.1 (built for Slurm 22.05.8, running with 24.11 (libslurm.so.42))");
}
