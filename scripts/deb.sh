#!/usr/bin/env bash
# make deb: a Debian package of this tree, BUILD/heapprof_VERSION_ARCH.deb.
#   scripts/deb.sh BUILD
# Stages `make install PREFIX=/usr` in BUILD/deb/root, compresses the man
# pages as Debian does, writes DEBIAN/control and builds it with dpkg-deb
# (owned by root, without fakeroot). The version is the binary's own
# (heapprof --version), the maintainer $DEBFULLNAME <$DEBEMAIL> as Debian's
# tools take it; Depends names the packages that hold the shared
# libraries the binary and the recorder load, as ldd finds them here.
set -euo pipefail

build=${1:-build}
bin=$build/heapprof
stage=$build/deb
root=$stage/root

for tool in dpkg-deb dpkg ldd readelf; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "heapprof: make deb needs $tool (Debian's dpkg, libc-bin, binutils)" >&2
		exit 1
	fi
done

version=$("$bin" --version)
version=${version#heapprof }
arch=$(dpkg --print-architecture)
out=$build/heapprof_${version}_${arch}.deb

rm -rf "$stage"
mkdir -p "$root/DEBIAN"
root=$(cd "$root" && pwd)
make --no-print-directory -s install BUILD="$build" PREFIX=/usr DESTDIR="$root" >/dev/null
gzip -9n "$root"/usr/share/man/man1/*.1

# The README under share/doc, as Debian lays out a package's documents.
doc=$root/usr/share/doc/heapprof
mkdir -p "$doc"
install -m 644 README.md "$doc/README.md"

# Depends: the package of each shared library ldd resolves, as
# "pkg (>= installed upstream version)". A library under a merged /usr is
# known to dpkg by either of its two paths.
pkg_of() {
	local p=$1 q
	for q in "$p" "$(readlink -f "$p")" "${p#/usr}" "/usr$p"; do
		if dpkg -S "$q" 2>/dev/null | head -n 1 | cut -d: -f1; then
			return
		fi
	done
}
depends=""
# Only the libraries each file names itself (DT_NEEDED), where ldd finds them.
libs=$(for f in "$bin" "$root/usr/lib/heapprof/libheapprof.so"; do
	needed=$(readelf -d "$f" | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $5); print $5 }')
	ldd "$f" | awk -v needed=" $(echo $needed) " \
		'$2 == "=>" && $3 ~ /^\// && index(needed, " " $1 " ") { print $3 }'
done | sort -u)
pkgs=$(for l in $libs; do pkg_of "$l"; done | sort -u)
for p in $pkgs; do
	v=$(dpkg-query -W -f='${Version}' "$p" | head -n 1)
	v=${v%%-*}
	depends="$depends${depends:+, }$p (>= $v)"
done

size_kib=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: heapprof
Version: $version
Architecture: $arch
Maintainer: ${DEBFULLNAME:-heapprof maintainers} <${DEBEMAIL:-heapprof@localhost}>
Installed-Size: $size_kib
Depends: $depends
Section: devel
Priority: optional
Description: heap profiler for native Linux programs
 heapprof run records every allocation of a C, C++ or Rust program with its
 call stack (or a Poisson sample of them) through an LD_PRELOAD recorder, and
 heapprof report, export, flamegraph and diff answer who holds the memory at
 the peak, what leaks and where the churn is, in the terminal, as pprof and
 gperftools profiles, folded stacks and flame graphs.
EOF
(cd "$root" && find usr -type f -exec md5sum {} + | sort -k2) >"$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 755 {} +
find "$root" -type f -exec chmod go-w {} +
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
echo "heapprof: wrote $out"
