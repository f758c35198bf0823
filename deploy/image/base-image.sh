#!/usr/bin/env bash
# Builds the images' base here, from what is installed, with no registry and no daemon: a root file system of
# a JRE linked (jlink) from the newest JDK 21+ on this host, bash and the few tools bin/switchml calls, and the
# shared libraries they load, all files of this host's Debian packages; written as a `docker save` archive, which
# Jib takes as a base (`tar://PATH`, the image profile of deploy/pom.xml). Reproducible: the same JDK and
# packages give the same bytes (sorted entries, owner 0, every time the epoch).
#
#   deploy/image/base-image.sh OUT.tar switch|full
#
# switch: the modules the lean switch distribution's jars use (jdeps), for the switchml-switch image; full: Java SE
# and the JDK modules the full distribution's libraries use, for the switchml image. The JDK is SWITCHML_IMAGE_JDK,
# else the newest 21+ under /usr/lib/jvm: one whose jlink can link its own runtime (a JDK with jmods/, or one
# built with --enable-linkable-runtime, as Temurin 25 is).
set -euo pipefail
out="${1:?usage: base-image.sh OUT.tar switch|full}"
flavour="${2:?usage: base-image.sh OUT.tar switch|full}"
case "$flavour" in
  # java.logging comes with java.sql; the Vector API for SWITCHML_KERNELS=vector.
  switch) modules=java.base,java.compiler,java.naming,java.sql,jdk.jfr,jdk.management,jdk.unsupported,jdk.incubator.vector,jdk.zipfs ;;
  full) modules=java.se,jdk.unsupported,jdk.management,jdk.management.agent,jdk.incubator.vector,jdk.zipfs,jdk.jfr,jdk.net,jdk.naming.dns,jdk.crypto.cryptoki ;;
  *) echo "base-image.sh: the flavour is switch or full, not '$flavour'" >&2; exit 1 ;;
esac
jdk="${SWITCHML_IMAGE_JDK:-}"
if [ -z "$jdk" ]; then
  best=0
  for release in /usr/lib/jvm/*/release; do
    version="$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release")"
    home="$(dirname "$release")"
    if [ -n "$version" ] && [ "$version" -ge 21 ] && [ "$version" -gt "$best" ] && [ -x "$home/bin/jlink" ]; then
      best="$version"
      jdk="$home"
    fi
  done
fi
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/jlink" ]; then
  echo "base-image.sh: no JDK 21+ with jlink found under /usr/lib/jvm: install one (Temurin 25) or set SWITCHML_IMAGE_JDK" >&2
  exit 1
fi
# Before JDK 22 the EC algorithms (TLS with switchml certs' keys) are a module of their own.
if [ "$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$jdk/release")" -lt 22 ]; then
  modules="$modules,jdk.crypto.ec"
fi
for tool in tar sha256sum ldd dpkg; do
  command -v "$tool" >/dev/null || { echo "base-image.sh: $tool is missing" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
mkdir -p "$root/usr/bin" "$root/usr/lib/x86_64-linux-gnu" "$root/usr/lib64" "$root/usr/sbin" "$root/etc" \
  "$root/tmp" "$root/opt/java" "$root/home/switchml"
# Debian 12's merged /usr.
ln -s usr/bin "$root/bin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
ln -s usr/sbin "$root/sbin"
chmod 1777 "$root/tmp"

# The JRE, without debug symbols (native ones too where objcopy is there), headers or man pages.
strip=(--strip-debug)
if command -v objcopy >/dev/null; then
  strip=(--strip-java-debug-attributes --strip-native-debug-symbols "objcopy=$(command -v objcopy)")
fi
"$jdk/bin/jlink" --add-modules "$modules" "${strip[@]}" --no-header-files --no-man-pages \
  --compress=zip-6 --output "$root/opt/java/openjdk" 2>&1 | { grep -v 'incubator modules' || true; }

# bash and what bin/switchml and switchml-java.sh call, and sh for `podman exec`/`kubectl exec` users.
tools=(bash env dirname readlink mkdir id cat sed ls rm sleep)
for t in "${tools[@]}"; do
  cp -L "$(command -v "$t")" "$root/usr/bin/$t"
done
ln -s bash "$root/usr/bin/sh"
# The shared libraries of those tools and of the JVM (not of AWT's, X11's and sound's: the JVM runs headless),
# and the C++ runtime that native libraries of the full distribution (PyTorch's, TensorFlow's) load.
libs_of() {
  ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}
natives=("$root"/usr/bin/*)
for f in "$root"/opt/java/openjdk/bin/java "$root"/opt/java/openjdk/lib/server/libjvm.so "$root"/opt/java/openjdk/lib/*.so; do
  case "$f" in
    *awt*|*jsound*|*splashscreen*|*fontmanager*|*freetype*|*lcms*|*mlib_image*|*javajpeg*) ;;
    *) natives+=("$f") ;;
  esac
done
{
  libs_of "${natives[@]}"
  for lib in libstdc++.so.6 libgcc_s.so.1; do
    ls /usr/lib/x86_64-linux-gnu/$lib
  done
} | sort -u | while read -r lib; do
  case "$lib" in "$root"/*) continue ;; esac
  real="$(readlink -f "$lib")"
  dpkg -S "$real" >/dev/null 2>&1 || dpkg -S "${real#/usr}" >/dev/null 2>&1 \
    || { echo "base-image.sh: $real belongs to no Debian package" >&2; exit 1; }
  name="$(basename "$lib")"
  case "$lib" in
    /lib64/*|/usr/lib64/*) cp -L "$lib" "$root/usr/lib64/$name" ;;
    *) cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/$name" ;;
  esac
done
# Users: root, and switchml (10001), whom the images run as.
cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/usr/sbin/nologin
switchml:x:10001:10001:switchml:/home/switchml:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
switchml:x:10001:
nogroup:x:65534:
GROUP
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
printf 'debian\n' > "$root/etc/hostname"
: > "$root/etc/hosts"
: > "$root/etc/resolv.conf"
cp /etc/os-release "$root/etc/os-release"

# One layer, byte for byte the same for the same inputs.
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu -C "$root" -cf "$work/layer.tar" .
diff_id="sha256:$(sha256sum "$work/layer.tar" | cut -d' ' -f1)"
jdk_version="$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$root/opt/java/openjdk/release")"
cat > "$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Env":["PATH=/opt/java/openjdk/bin:/usr/local/bin:/usr/bin:/bin","JAVA_HOME=/opt/java/openjdk","JAVA_VERSION=$jdk_version","LANG=C.UTF-8"],"Labels":{"org.opencontainers.image.description":"switchml's JRE base ($flavour): jlink of JDK $jdk_version, bash and its libraries from Debian $(. /etc/os-release; echo "$VERSION_ID") packages"}},"rootfs":{"type":"layers","diff_ids":["$diff_id"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"deploy/image/base-image.sh"}]}
JSON
printf '[{"Config":"config.json","RepoTags":["localhost/switchml-jre-base:%s"],"Layers":["layer.tar"]}]\n' "$flavour" \
  > "$work/manifest.json"
mkdir -p "$(dirname "$out")"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu -C "$work" \
  -cf "$out.tmp" manifest.json config.json layer.tar
mv "$out.tmp" "$out"
echo "base-image.sh: $out ($flavour, $(du -m "$work/layer.tar" | cut -f1) MiB unpacked, JDK $jdk_version from $jdk)"
