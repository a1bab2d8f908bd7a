#!/usr/bin/env bash
# Every page in man/ renders without a warning (`man --warnings -l`, at 80 and 120 columns),
# and the pages name what the sources define: colocctl's commands, options, output fields and
# status keys, colocd's options, colocd.yaml's keys and the plugin's plugstack arguments.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
command -v man >/dev/null || skip "man is not installed (apt-get install man-db)"

for page in colocctl.1 colocd.8 spank_coloc.8 colocd.yaml.5; do
    [ -f "man/$page" ] || fail "man/$page is missing"
done

for page in man/*.[1-8]; do
    for width in 80 120; do
        warnings=$(MANWIDTH=$width man --warnings -l "$page" 2>&1 >/dev/null) ||
            fail "$page does not render"
        [ -z "$warnings" ] || fail "$page at $width columns: $warnings"
    done
    lexgrog "$page" >/dev/null || fail "$page: its NAME section cannot be read by mandb"
done

# names SOURCE_REGEX FILES...: the first capture group of each match, one per line.
names() {
    local re=$1; shift
    RE=$re perl -0777 -ne 'while (/$ENV{RE}/g) { print "$1\n" }' "$@" | sort -u
}
# documented PAGE WORD: the page shows WORD in bold (troff writes '-' as '\-').
documented() {
    local word=${2//-/\\-}
    grep -qF "\\fB$word\\fR" "$1"
}
missing=()
check() { # PAGE WHAT NAMES...
    local page=$1 what=$2; shift 2
    local n
    for n in "$@"; do documented "$page" "$n" || missing+=("$page: $what $n"); done
}

ctl_sources=(ctl/*.cpp)
mapfile -t commands < <(names 'add_subcommand\("([a-z-]+)"' "${ctl_sources[@]}")
mapfile -t ctl_options < <(names 'add_(?:option|flag)\("(?:-[a-zA-Z],)?(--[a-z0-9-]+)' "${ctl_sources[@]}")
mapfile -t fields < <(names '\{"([a-z_]+)", "[A-Z_/]+"' "${ctl_sources[@]}")
mapfile -t colocd_options < <(names 'add_(?:option|flag)\("(?:-[a-zA-Z],)?(--[a-z0-9-]+)' daemon/colocd_main.cpp)
mapfile -t config_keys < <(perl -0777 -ne 'while (/only_keys\(\w+, [^{;]*\{([^}]*)\}/g) { print "$_\n" for $1 =~ /"([^"]+)"/g }' \
    config/*.cpp | sort -u)
mapfile -t plugin_args < <(names 'key == "([a-z_]+)"' spank/plugin_args.cpp)
mapfile -t status_keys < <(perl -0777 -ne 'if (/on_status\(.*?json status = \{(.*?)\n\s*\};/s) { print "$_\n" for $1 =~ /\{"(\w+)",/g }' \
    daemon/service/queries.cpp | sort -u)
if [ ${#commands[@]} -lt 5 ] || [ ${#fields[@]} -lt 20 ] || [ ${#config_keys[@]} -lt 20 ] ||
    [ ${#plugin_args[@]} -lt 7 ] || [ ${#status_keys[@]} -lt 10 ]; then
    fail "could not read the names from the sources"
fi

check man/colocctl.1 command "${commands[@]}"
check man/colocctl.1 option "${ctl_options[@]}"
check man/colocctl.1 field "${fields[@]}"
check man/colocctl.1 "status key" "${status_keys[@]}"
check man/colocd.8 option "${colocd_options[@]}"
check man/colocd.yaml.5 key "${config_keys[@]}"
check man/spank_coloc.8 argument "${plugin_args[@]}"
[ ${#missing[@]} -eq 0 ] || fail "not documented: $(printf '\n  %s' "${missing[@]}")"
pages=(man/*.[1-8])
echo "ok: ${#pages[@]} pages; ${#commands[@]} commands, ${#fields[@]} fields, ${#config_keys[@]} keys"
