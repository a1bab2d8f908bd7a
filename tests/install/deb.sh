#!/usr/bin/env bash
# `make deb` builds a package that `apt install ./build/coloc_*.deb` installs on Debian 12:
# the files where Slurm and systemd look, the coloc user, a working colocctl; purging it
# removes it all again. Installs a package: root only, and never over an installed coloc.
# SLURM=DIR (make install-test SLURM=DIR): the package for the Slurm release under DIR, with
# that release's libslurm dependency and its plugin directory. When that release's libslurm
# comes from no installed package (a Slurm built by scripts/slurm-build), dpkg installs it
# over its dependencies (the binaries find libslurm in DIR) and purges it again.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "installing a package needs root (run as root to test the .deb)"
command -v apt >/dev/null || skip "not a Debian system (no apt)"
# Outputs are read whole, then matched: `cmd | grep -q` under pipefail fails when grep exits at its
# match and cmd dies of SIGPIPE on a long output (ld.so's cache, say).
if [[ $(dpkg-query -W -f='${db:Status-Abbrev}' coloc 2>/dev/null) == ?i* ]]; then
    skip "a coloc package is installed here already; not replacing it"
fi

build=${BUILD:-build}
slurm_prefix=${SLURM:-/usr}
slurm=$(awk '/define SLURM_VERSION_NUMBER/ {print $3}' "$slurm_prefix/include/slurm/slurm_version.h") ||
    fail "no $slurm_prefix/include/slurm/slurm_version.h"
release=$(printf '%d.%02d' $((slurm >> 16)) $(((slurm >> 8) & 255)))
# Each release's libslurm soname (its META's API_CURRENT).
case $release in
    22.05) soname=38 ;; 23.02) soname=39 ;; 23.11) soname=40 ;; 24.05) soname=41 ;; 24.11) soname=42 ;;
    25.05) soname=43 ;; 25.11) soname=44 ;;
    *) fail "Slurm $release: its libslurm soname is not known to this test" ;;
esac
deb=$(${MAKE:-make} -s --no-print-directory deb BUILD="$build" ${SLURM:+SLURM="$SLURM"} | grep '\.deb$' | tail -n 1 || true)
[ -f "$deb" ] || fail "make deb did not report the package it built (got '$deb')"
case $(basename "$deb") in coloc_*_"$(dpkg --print-architecture)".deb) ;; *) fail "odd package name $deb" ;; esac

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
if [ -n "${SLURM:-}" ]; then
    libslurm=
    for f in "$SLURM"/lib64/libslurm.so "$SLURM/lib/$multiarch/libslurm.so" "$SLURM"/lib/libslurm.so; do
        if [ -e "$f" ]; then libslurm=$f; break; fi
    done
    [ -n "$libslurm" ] || fail "no libslurm.so under $SLURM"
    plugin=$(dirname "$libslurm")/slurm/spank_coloc.so
else
    plugin=/usr/lib/$multiarch/slurm-wlm/spank_coloc.so
fi
depends=$(dpkg-deb -f "$deb" Depends)
for p in libzmq5 libsqlite3-0 libyaml-cpp0.7 libmunge2 "libslurm$soname" munge; do
    [[ ", $depends," == *", $p "* || ", $depends," == *", $p,"* || ", $depends," == *", $p |"* ]] ||
        fail "Depends lacks $p: $depends"
done
breaks=$(dpkg-deb -f "$deb" Breaks)
[[ $breaks == *"slurmd (<< $release)"* ]] || fail "Breaks does not keep other releases' slurmd out: $breaks"
coloc_version=$("$build/colocctl" --version | awk '{print $3}')
[ "$(dpkg-deb -f "$deb" Version)" = "$coloc_version-1+slurm${release/./}" ] ||
    fail "the package version $(dpkg-deb -f "$deb" Version) is not colocctl's $coloc_version for Slurm $release"
contents=$(dpkg-deb -c "$deb")
grep -q " \.$plugin\$" <<<"$contents" || fail "the plugin is not in $plugin (Slurm $release's plugin directory)"
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles)
[ "$conffiles" = $'/etc/coloc/colocd.yaml\n/etc/coloc/profiles.yaml\n/etc/slurm/plugstack.conf.d/coloc.conf' ] ||
    fail "conffiles: $conffiles"

purge() { DEBIAN_FRONTEND=noninteractive dpkg --purge coloc >/dev/null 2>&1 || true; }
trap purge EXIT
case $deb in /*) local_deb=$deb ;; *) local_deb=./$deb ;; esac  # apt takes a path, not a name
if dpkg -S "libslurm.so.$soname" >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt -q -y install "$local_deb" >"$build/deb-install.log" 2>&1 ||
        { cat "$build/deb-install.log" >&2; fail "apt install $local_deb failed"; }
else
    DEBIAN_FRONTEND=noninteractive dpkg --force-depends --force-breaks -i "$local_deb" >"$build/deb-install.log" 2>&1 ||
        { cat "$build/deb-install.log" >&2; fail "dpkg -i $local_deb failed"; }
fi

version=$(colocctl --version) || fail "colocctl --version failed after install"
[ "$version" = "colocctl (coloc) $coloc_version (built for Slurm $release.$((slurm & 255)))" ] ||
    fail "colocctl --version says '$version'"
for f in /usr/sbin/colocd /usr/bin/colocctl "$plugin" /lib/systemd/system/colocd.service \
    /etc/coloc/colocd.yaml /etc/coloc/profiles.yaml /etc/slurm/plugstack.conf.d/coloc.conf \
    /usr/share/doc/coloc/GAVEL-LICENSE /usr/share/doc/coloc/job_submit.lua /usr/share/man/man1/colocctl.1.gz /usr/share/man/man8/colocd.8.gz \
    /usr/share/man/man8/spank_coloc.8.gz /usr/share/man/man5/colocd.yaml.5.gz \
    "/usr/lib/$multiarch/libcoloc_report.so" "/usr/lib/$multiarch/libcoloc_report.a" /usr/include/coloc_report.h \
    /usr/lib/python3/dist-packages/coloc_report.py /usr/share/man/man3/coloc_report.3.gz; do
    [ -f "$f" ] || fail "$f is not installed"
done
grep -q "^optional $plugin " /etc/slurm/plugstack.conf.d/coloc.conf || fail "the snippet does not name $plugin"
libs=$(ldd "$plugin")
[[ $libs != *'not found'* ]] || fail "the plugin's libraries are missing: $libs"
libs=$(ldd "/usr/lib/$multiarch/libcoloc_report.so")
[[ $libs != *'not found'* ]] || fail "libcoloc_report's libraries are missing: $libs"
ld_cache=$(ldconfig -p)
grep -q 'libcoloc_report\.so ' <<<"$ld_cache" || fail "ld.so's cache does not know libcoloc_report.so"
(cd / && env -u SLURM_JOB_ID /usr/bin/python3 -c 'import coloc_report; assert not coloc_report.init()') ||
    fail "python3 cannot import the installed coloc_report"
getent passwd coloc >/dev/null || fail "the package did not create the user coloc"
if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify --man=no /lib/systemd/system/colocd.service || fail "systemd rejects colocd.service"
fi

purge
trap - EXIT
for f in /usr/sbin/colocd /usr/bin/colocctl "$plugin" /etc/coloc/colocd.yaml /etc/slurm/plugstack.conf.d/coloc.conf \
    "/usr/lib/$multiarch/libcoloc_report.so" /usr/lib/python3/dist-packages/coloc_report.py; do
    [ ! -e "$f" ] || fail "$f is still there after purge"
done
echo "ok: $(basename "$deb") installed, ran and purged"
