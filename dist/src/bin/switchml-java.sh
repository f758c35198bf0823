# Sourced by the switchml scripts: which java runs the project's own JVMs, and the options its kernels need.
# SWITCHML_JAVA (a java command) where set; else the newest JDK 21+ among JAVA_HOME and the usual install folders,
# which runs the element loops faster than 17 (BENCHMARKS.md section 25); else the java of JAVA_HOME or PATH (17+).
# A command that runs Spark (train --spark-master) takes the newest JDK Spark supports (17 or 21) where one is there.
# The Vector API's module where SWITCHML_KERNELS=vector asks for its kernels (io.switchml.protocol.kernels.Kernels).

# The feature version of a java command (17, 21, 25), from its JDK's release file; empty where unknown.
switchml_java_version() {
  local home release
  home="$(dirname "$(dirname "$(readlink -f "$1")")")"
  release="$home/release"
  [ -f "$release" ] || return 0
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release"
}

# Prints the java command to run: newest of the candidates whose version is in [$1, $2], else the fallback.
switchml_select_java() {
  local lowest="$1" highest="$2" best="" best_version=0 candidate version
  local candidates=()
  if [ -n "${SWITCHML_JAVA:-}" ]; then
    printf '%s\n' "$SWITCHML_JAVA"
    return
  fi
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME/bin/java")
  for candidate in /usr/lib/jvm/*/bin/java /opt/java/*/bin/java /opt/jdk*/bin/java; do
    [ -x "$candidate" ] && candidates+=("$candidate")
  done
  for candidate in "${candidates[@]}"; do
    [ -x "$(command -v "$candidate" 2>/dev/null)" ] || continue
    version="$(switchml_java_version "$(command -v "$candidate")")"
    [ -n "$version" ] && [ "$version" -ge "$lowest" ] && [ "$version" -le "$highest" ] || continue
    if [ "$version" -gt "$best_version" ]; then
      best="$candidate"
      best_version="$version"
    fi
  done
  if [ -z "$best" ]; then
    best="${JAVA_HOME:+$JAVA_HOME/bin/}java"
  fi
  printf '%s\n' "$best"
}

# Sets switchml_java (the command) and switchml_kernel_opts (its options) for a command line ("$@").
switchml_choose_java() {
  local highest=999 arg
  for arg in "$@"; do
    case "$arg" in
      --spark-master|--spark-master=*) highest=21 ;;
    esac
  done
  switchml_java="$(switchml_select_java 21 "$highest")"
  command -v "$switchml_java" >/dev/null || { echo "switchml: java not found: install a JDK 17+ (21+ runs faster) or set JAVA_HOME" >&2; exit 1; }
  # The Vector API's module only where its kernels are asked for (SWITCHML_KERNELS=vector): the default kernels
  # do not need it, and a JVM given an incubator module prints a line about it ("WARNING: Using incubator modules").
  switchml_kernel_opts=()
  if [ "${SWITCHML_KERNELS:-}" = vector ]; then
    switchml_kernel_opts=(--add-modules=jdk.incubator.vector)
  fi
}
