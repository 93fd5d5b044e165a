#!/usr/bin/env bash
# Packs the existing build with CPack's DEB generator, unpacks the .deb into a temporary root and
# checks what a user would get: the control fields, the installed files, the unpacked program run
# away from the source and build trees, and the desktop entry, AppStream metainfo and man page
# through Debian's validators. `cmake --install` into a prefix must give the same files. (The TGZ
# generator packs the same install tree; it is left out because every CPack generator re-runs make's
# preinstall over the whole build, which doubles the time.)
#   test-deb.sh BUILD_DIR SOURCE_DIR VERSION WORK_DIR
set -euo pipefail
build_dir="$1" source_dir="$2" version="$3" work="$4"
app_id=io.github.rankscope.RankScope
icon_sizes=(16 22 24 32 48 64 128 256 512)

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
need() { command -v "$1" >/dev/null || { echo "FAIL: $1 missing (scripts/bootstrap installs it)" >&2; exit 1; }; }
for tool in cpack dpkg-deb jq identify desktop-file-validate appstreamcli man strings readelf; do need "$tool"; done

rm -rf "$work"
mkdir -p "$work"
cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; exit 1; }

shopt -s nullglob
debs=("$work/out/rankscope_${version}_"*.deb)
((${#debs[@]} == 1)) || { fail "expected one rankscope_${version}_*.deb, got ${debs[*]:-none}"; exit 1; }
deb="${debs[0]}"
echo "package: $(basename "$deb") $(du -h "$deb" | cut -f1)"

# Control fields. Depends must come from shlibdeps (the Qt libraries we link) plus the plugins.
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = rankscope ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', project says $version"
[ "$(field Section)" = devel ] || fail "Section is '$(field Section)'"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
[ -n "$(field Homepage)" ] || fail "no Homepage"
[ "$(field Description | wc -l)" -gt 1 ] || fail "Description has no extended text"
depends="$(field Depends)"
for dep in libc6 libqt6core6 libqt6gui6 libqt6widgets6 qt6-qpa-plugins; do
  grep -Eq "(^|, )$dep( |,|$)" <<<"$depends" || fail "Depends lacks $dep: $depends"
done

# The files of an installed tree under PREFIX (usr/ in the .deb, a --prefix for cmake --install).
check_tree() {
  local root="$1" what="$2" f
  local files=(bin/rankscope "share/applications/$app_id.desktop" "share/metainfo/$app_id.metainfo.xml"
    share/man/man1/rankscope.1.gz share/icons/hicolor/scalable/apps/rankscope.svg)
  for size in "${icon_sizes[@]}"; do files+=("share/icons/hicolor/${size}x${size}/apps/rankscope.png"); done
  for f in "${files[@]}"; do [ -f "$root/$f" ] || fail "$what lacks $f"; done
  [ -x "$root/bin/rankscope" ] || fail "$what: bin/rankscope is not executable"
  for size in "${icon_sizes[@]}"; do
    f="$root/share/icons/hicolor/${size}x${size}/apps/rankscope.png"
    [ -f "$f" ] || continue
    [ "$(identify -format '%m %wx%h' "$f")" = "PNG ${size}x${size}" ] ||
      fail "$what: ${size}x${size} icon is $(identify -format '%m %wx%h' "$f")"
  done
}

root="$work/root"
dpkg-deb -x "$deb" "$root"
check_tree "$root/usr" ".deb"
cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" 2>&1 || fail "cmake --install failed"
check_tree "$work/prefix" "cmake --install"

# The program must need nothing from the trees it was built from: no path to them is compiled in,
# and it runs from a scratch directory with a clean environment on a copy of the example.
# (Tool output goes to files first: with pipefail, `grep -q` closing a pipe early reads as a failure.)
bin="$root/usr/bin/rankscope"
strings "$bin" >"$work/strings.txt"
for tree in "$source_dir" "$build_dir"; do
  tree="$(cd "$tree" && pwd -P)"
  if grep -qF "$tree" "$work/strings.txt"; then fail "the binary names $tree: $(grep -F "$tree" "$work/strings.txt" | head -3)"; fi
done
readelf -d "$bin" >"$work/dynamic.txt"
if grep -Eq '\((RPATH|RUNPATH)\)' "$work/dynamic.txt"; then fail "the binary has a custom library search path: $(grep -E 'R(UN)?PATH' "$work/dynamic.txt")"; fi
cp -r "$source_dir/examples/hang_timeout" "$work/hang_timeout"
run() { (cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work" LANG=C.UTF-8 "$bin" "$@"); }
out="$(run --version)" || fail "rankscope --version exited $?"
[ "$out" = "rankscope $version" ] || fail "--version printed '$out'"
json="$(run analyze hang_timeout --json)" || fail "rankscope analyze --json exited $?"
jq -e '.schema == "rankscope.analysis/1"' <<<"$json" >/dev/null || fail "analyze: schema is not rankscope.analysis/1"
jq -e '[.ranks[].rank] == [0, 1, 2]' <<<"$json" >/dev/null || fail "analyze: ranks are $(jq -c '[.ranks[]?.rank]' <<<"$json" 2>&1)"
jq -e '[.ranks[].sources[]] | length > 0' <<<"$json" >/dev/null || fail "analyze: no sources"
status=0; run analyze >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "analyze without a folder exited $status, not 2"
status=0; run analyze "$work/no-such-folder" >/dev/null 2>&1 || status=$?
[ "$status" -eq 3 ] || fail "analyze on a missing folder exited $status, not 3"

# Desktop integration, checked with Debian's own validators on the unpacked files.
desktop="$root/usr/share/applications/$app_id.desktop"
desktop-file-validate "$desktop" || fail "desktop-file-validate rejects $app_id.desktop"
grep -Eq '^MimeType=(.*;)?inode/directory;' "$desktop" || fail "the desktop entry does not open folders"
grep -Eq '^Exec=rankscope .*%[fFuU]' "$desktop" || fail "the desktop entry's Exec takes no file (%f/%U)"
grep -q "^Icon=rankscope$" "$desktop" || fail "the desktop entry's Icon is not rankscope"
metainfo="$root/usr/share/metainfo/$app_id.metainfo.xml"
appstreamcli validate --no-net "$metainfo" || fail "appstreamcli rejects the metainfo"
grep -q "<id>$app_id</id>" "$metainfo" || fail "the metainfo's component id is not $app_id"
grep -q "<launchable type=\"desktop-id\">$app_id.desktop</launchable>" "$metainfo" ||
  fail "the metainfo's launchable is not $app_id.desktop"
grep -q "<release version=\"$version\"" "$metainfo" || fail "the metainfo has no release $version"

# The man page renders without a groff warning and documents every command the binary offers.
manpage="$root/usr/share/man/man1/rankscope.1.gz"
warnings="$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$manpage" 2>&1 >/dev/null)" || fail "man cannot render the page"
[ -z "$warnings" ] || fail "man page warnings: $warnings"
zcat "$manpage" >"$work/rankscope.1"
grep -q "^\.TH RANKSCOPE 1 .*RankScope $version" "$work/rankscope.1" || fail "the man page's .TH does not name $version"
commands="$(run --help | sed -n '/^Commands:/,/^$/{/^  [a-z]/{s/^  \([a-z-]*\).*/\1/;p}}')"
[ -n "$commands" ] || fail "no command found in 'rankscope --help'"
for c in $commands; do
  grep -q "^\.SS \"${c}[ \"]" "$work/rankscope.1" || fail "the man page has no COMMANDS subsection for '$c' (add .SS \"$c ...\")"
  # Every long option the command's own --help lists, as groff writes it (\-\-json).
  run "$c" --help >"$work/help-$c.txt" || fail "rankscope $c --help exited $?"
  while read -r opt; do
    grep -qF -- "\\-\\-${opt//-/\\-}" "$work/rankscope.1" || fail "the man page lacks '$c --$opt'"
  done < <(sed -n 's/^ \{1,\}\(-[a-z], \)\{0,1\}--\([a-z][a-z0-9-]*\).*/\2/p' "$work/help-$c.txt")
done
for opt in --help --version; do grep -qF -- "\\-\\-${opt#--}" "$work/rankscope.1" || fail "the man page lacks $opt"; done

# rankscope-digest, built where CMake found MPI, is a package of its own: the desktop's does not
# carry it, and it runs under an MPI.
digests=("$work/out/rankscope-digest_${version}_"*.deb)
if [ -x "$build_dir/bin/rankscope-digest" ]; then
  if ((${#digests[@]} != 1)); then
    fail "expected one rankscope-digest_${version}_*.deb, got ${digests[*]:-none}"
  else
    d="${digests[0]}"
    [ "$(dpkg-deb -f "$d" Package)" = rankscope-digest ] || fail "the digest package is '$(dpkg-deb -f "$d" Package)'"
    [ "$(dpkg-deb -f "$d" Version)" = "$version" ] || fail "the digest package's Version is '$(dpkg-deb -f "$d" Version)'"
    grep -qF "openmpi-bin | mpich" <<<"$(dpkg-deb -f "$d" Depends)" || fail "the digest package's Depends lack an MPI: $(dpkg-deb -f "$d" Depends)"
    dpkg-deb -c "$d" >"$work/digest-files.txt"
    grep -q ' \./usr/bin/rankscope-digest$' "$work/digest-files.txt" || fail "the digest package lacks usr/bin/rankscope-digest"
  fi
  [ ! -e "$root/usr/bin/rankscope-digest" ] || fail "the desktop package carries rankscope-digest"
elif ((${#digests[@]})); then
  fail "a rankscope-digest package without rankscope-digest built"
fi

if ((failures)); then echo "$failures packaging check(s) failed" >&2; exit 1; fi
echo "packaging: all checks passed (commands documented: ${commands//$'\n'/ })"
