# Sourced by the switchml scripts: which java runs the project's own JVMs, and the options its kernels need.
# SWITCHML_JAVA (a java command) where set; else the newest JDK 21+ among JAVA_HOME and the usual install folders,
# which runs the element loops faster than 17 (BENCHMARKS.md section 25); else the java of JAVA_HOME or PATH (17+).
# A command that runs Spark (train --spark-master) takes the newest JDK Spark supports (17 or 21) where one is there.
# The Vector API's module where SWITCHML_KERNELS=vector asks for its kernels (io.switchml.protocol.kernels.Kernels);
# on JDK 24+ the options that keep its libraries' native-access and Unsafe warnings out; on JDK 25+ the ahead-of-time
# cache of the long-running commands.

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

# Sets switchml_java (the command), switchml_java_feature (its version) and switchml_java_opts (its options) for a
# command line ("$@").
switchml_choose_java() {
  local highest=999 arg
  for arg in "$@"; do
    case "$arg" in
      --spark-master|--spark-master=*) highest=21 ;;
    esac
  done
  switchml_java="$(switchml_select_java 21 "$highest")"
  command -v "$switchml_java" >/dev/null || { echo "switchml: java not found: install a JDK 17+ (21+ runs faster) or set JAVA_HOME" >&2; exit 1; }
  switchml_java_feature="$(switchml_java_version "$(command -v "$switchml_java")")" || switchml_java_feature=""
  switchml_java_opts=()
  # The Vector API's module only where its kernels are asked for (SWITCHML_KERNELS=vector): the default kernels
  # do not need it, and a JVM given an incubator module prints a line about it ("WARNING: Using incubator modules").
  if [ "${SWITCHML_KERNELS:-}" = vector ]; then
    switchml_java_opts+=(--add-modules=jdk.incubator.vector)
  fi
  # JDK 24+ warns, once per library, where Netty, JNA, Agrona or protobuf call native code or sun.misc.Unsafe's memory
  # methods; they are this project's own libraries, allowed here as ChildJvm allows them for the JVMs it starts.
  if [ "${switchml_java_feature:-0}" -ge 24 ]; then
    switchml_java_opts+=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow)
  fi
}

# Sets switchml_aot_opts for a JVM of command $1 on class path $2: the JDK's ahead-of-time cache (JDK 25+) of the
# switch, worker and agent commands, trained by their first run and read by every later one; the same files and
# claims as io.switchml.launch.AotCache (docs/ARCHITECTURE.md section 18). SWITCHML_AOT=off: none.
switchml_aot() {
  local role="$1" classpath="$2" folder key base pid entry
  local -a entries
  switchml_aot_opts=()
  case "$role" in switch|worker|agent) ;; *) return 0 ;; esac
  case "${SWITCHML_AOT:-auto}" in
    auto) ;;
    off) return 0 ;;
    *) echo "switchml: SWITCHML_AOT must be auto or off, not '$SWITCHML_AOT'" >&2; exit 1 ;;
  esac
  [ "${switchml_java_feature:-0}" -ge 25 ] || return 0
  case " ${SWITCHML_JAVA_OPTS:-} " in
    *-XX:SharedArchiveFile=*|*-XX:ArchiveClassesAtExit=*|*-XX:AOTCache*) return 0 ;;   # the caller keeps its own
  esac
  folder="${SWITCHML_AOT_DIR:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/switchml/aot}"
  (umask 077 && mkdir -p "$folder") 2>/dev/null && [ -w "$folder" ] || return 0
  IFS=: read -r -a entries <<<"$classpath"
  for entry in "${entries[@]}"; do
    [ -f "$entry" ] || return 0   # the JDK's cache takes jars only, no folders
  done
  key="$({ printf '%s\n' "$role" "$(readlink -f "$(command -v "$switchml_java")")" "${switchml_java_opts[@]}"
    stat -L -c '%n %s %Y' "${entries[@]}"; } | sha256sum | cut -c1-16)" || return 0
  base="$folder/script-$role-$key"
  [ -e "$base.failed" ] && return 0
  if [ -e "$base.lock" ]; then
    pid="$(cat "$base.lock" 2>/dev/null || true)"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      return 0   # its first run is still writing it
    elif [ -z "$pid" ] && [ -n "$(find "$base.lock" -newermt '-1 minute' 2>/dev/null)" ]; then
      return 0
    elif [ -f "$base.aot" ] && [ ! -e "$base.aot.config" ]; then
      rm -f "$base.lock"
    else
      mv -f "$base.lock" "$base.failed" 2>/dev/null || true
      rm -f "$base.aot" "$base.aot.config"
      return 0
    fi
  fi
  if [ -f "$base.aot" ]; then
    switchml_aot_opts=(-XX:AOTCache="$base.aot" '-Xlog:aot*=off' '-Xlog:cds*=off')
  elif (set -o noclobber && echo "$$" >"$base.lock") 2>/dev/null; then
    # The caches of older builds go, past the four newest.
    { ls -t "$folder/script-$role-"*.aot 2>/dev/null || true; } | tail -n +5 | while read -r old; do
      rm -f "$old" "${old%.aot}.failed"
    done
    # This process becomes the JVM (exec), so the claim names it. The JDK prints what it does at exit on stderr, the
    # assembling JVM's whole class path included: left out, by a filter that outlives Ctrl-C to read to the end.
    switchml_aot_opts=(-XX:AOTCacheOutput="$base.aot" -XX:+DisplayVMOutputToStderr '-Xlog:aot*=off' '-Xlog:cds*=off')
    if command -v grep >/dev/null; then
      exec 2> >(trap '' INT TERM HUP; exec grep --line-buffered -v -E '^(Temporary AOTConfiguration recorded: |Launching child process .* AOT cache |Picked up JAVA_TOOL_OPTIONS: .*-XX:AOTMode=create|Reading AOTConfiguration |AOTCache creation is complete: |Removed temporary AOT configuration file )' >&2)
    fi
  fi
}
