#!/usr/bin/env bash
# `make install` into a temporary DESTDIR with PREFIX and libdir puts every file where it
# belongs, with the paths inside the unit and the plugstack snippet following them; a second
# install keeps a changed configuration; `make uninstall` removes everything it installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "FAIL: $*" >&2; exit 1; }
make=${MAKE:-make}
build=${BUILD:-build}
dest=$(mktemp -d /tmp/coloc-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT

prefix=/opt/coloc
libdir=$prefix/lib64
# SLURM= : the generic layout, also for a build against another Slurm (whose plugin directory
# make deb and deb.sh check).
vars=(BUILD="$build" SLURM= DESTDIR="$dest" PREFIX="$prefix" libdir="$libdir")
$make -s install "${vars[@]}" >/dev/null

expect_file() { # PATH MODE
    [ -f "$dest$1" ] || fail "$1 was not installed"
    [ "$(stat -c %a "$dest$1")" = "$2" ] || fail "$1 has mode $(stat -c %a "$dest$1"), not $2"
}
expect_file $prefix/sbin/colocd 755
expect_file $prefix/bin/colocctl 755
expect_file $libdir/slurm/spank_coloc.so 755
expect_file $libdir/slurm/spank_coloc_net.so 755
expect_file $prefix/lib/systemd/system/colocd.service 644
expect_file /etc/coloc/colocd.yaml 644
expect_file /etc/coloc/profiles.yaml 644
expect_file $prefix/share/doc/coloc/GAVEL-LICENSE 644
expect_file $prefix/share/doc/coloc/job_submit.lua 644
expect_file /etc/slurm/plugstack.conf.d/coloc.conf 644
expect_file $libdir/libcoloc_report.so 644
expect_file $libdir/libcoloc_report.a 644
expect_file $prefix/include/coloc_report.h 644
expect_file $prefix/lib/python3/dist-packages/coloc_report.py 644
for page in man/*.[1-8]; do
    expect_file "$prefix/share/man/man${page##*.}/$(basename "$page")" 644
done

version=$("$dest$prefix/bin/colocctl" --version) || fail "the installed colocctl does not run"
grep -q '^colocctl (coloc) ' <<<"$version" || fail "the installed colocctl prints no version: $version"
grep -qx "ExecStart=$prefix/sbin/colocd --foreground --config /etc/coloc/colocd.yaml" \
    "$dest$prefix/lib/systemd/system/colocd.service" || fail "the unit does not start $prefix/sbin/colocd"
grep -q "^optional $libdir/slurm/spank_coloc.so " "$dest/etc/slurm/plugstack.conf.d/coloc.conf" ||
    fail "the plugstack snippet does not name $libdir/slurm/spank_coloc.so"
cmp -s etc/colocd.yaml "$dest/etc/coloc/colocd.yaml" || fail "colocd.yaml differs from etc/colocd.yaml"

# A job's reports: the C API builds and links against the installed header and library, and
# the Python module imports from where it was put; outside a coloc job both stay quiet.
cat >"$dest/report.c" <<'C'
#include <coloc_report.h>
int main(void) {
    if (coloc_report_init()) return 1;
    coloc_report_iteration(0.5);
    coloc_report_close();
    return 0;
}
C
cc -Wall -Werror -I"$dest$prefix/include" -o "$dest/report" "$dest/report.c" -L"$dest$libdir" -lcoloc_report ||
    fail "a C program does not build against the installed coloc_report.h and libcoloc_report.so"
out=$(env -u SLURM_JOB_ID -u COLOC_DECISION LD_LIBRARY_PATH="$dest$libdir" "$dest/report" 2>&1) ||
    fail "the C program failed outside a job: $out"
[ -z "$out" ] || fail "the C program printed outside a job: $out"
cc -Wall -Werror -I"$dest$prefix/include" -o "$dest/report" "$dest/report.c" "$dest$libdir/libcoloc_report.a" \
    -lzmq -lmunge -lsodium -lstdc++ -lm -pthread || fail "a C program does not link the installed libcoloc_report.a"
out=$(env -u SLURM_JOB_ID -u COLOC_DECISION "$dest/report" 2>&1) || fail "the statically linked C program failed: $out"
rm -f "$dest/report" "$dest/report.c"
out=$(env -u SLURM_JOB_ID PYTHONPATH="$dest$prefix/lib/python3/dist-packages" python3 -c \
    'import coloc_report; assert not coloc_report.init(); coloc_report.iteration(1.0); coloc_report.close(); print(coloc_report.__file__)') ||
    fail "the installed coloc_report.py does not import: $out"
[[ $out == "$dest"* ]] || fail "python3 imported coloc_report from $out, not the installed one"
find "$dest$prefix/lib/python3" -name __pycache__ -exec rm -rf {} +

# An admin's changes survive a reinstall and an uninstall.
echo "# changed" >>"$dest/etc/coloc/colocd.yaml"
$make -s install "${vars[@]}" >/dev/null
grep -q '^# changed' "$dest/etc/coloc/colocd.yaml" || fail "install overwrote a changed colocd.yaml"
$make -s uninstall "${vars[@]}" >/dev/null
left=$(cd "$dest" && find . -type f)
[ "$left" = ./etc/coloc/colocd.yaml ] || fail "uninstall left (or removed) the wrong files: ${left:-nothing}"

# Unchanged, it goes too, and nothing is left.
cp etc/colocd.yaml "$dest/etc/coloc/colocd.yaml"
$make -s uninstall "${vars[@]}" >/dev/null
left=$(cd "$dest" && find . -type f)
[ -z "$left" ] || fail "uninstall left: $left"
[ ! -e "$dest/etc/coloc" ] || fail "uninstall left /etc/coloc"
echo "ok: install and uninstall under DESTDIR with PREFIX=$prefix libdir=$libdir"
