package io.switchml.launch;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What a child JVM is given, by the parent's JDK, and which of its lines are the JDK's own notices. */
class ChildJvmTest {
    @Test
    void jdk24AndLaterAllowTheLibrariesNativeAccessAndUnsafeSoTheyPrintNoWarnings() {
        assertThat(ChildJvm.options(false, 21)).isEmpty();
        assertThat(ChildJvm.options(true, 21)).containsExactly("--add-modules=jdk.incubator.vector");
        assertThat(ChildJvm.options(false, 24)).containsExactly("--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow");
        assertThat(ChildJvm.options(true, 25)).containsExactly("--add-modules=jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow");
    }

    @Test
    void theJdksNoticesAboutTheModuleAndTheCacheAreKnownAndNothingElseIs() {
        assertThat(ChildJvm.jvmNotice("WARNING: Using incubator modules: jdk.incubator.vector")).isTrue();
        assertThat(ChildJvm.jvmNotice("AOTCache creation is complete: /x/worker-1.aot 47087616 bytes")).isTrue();
        assertThat(ChildJvm.jvmNotice("Launching child process /j/bin/java to assemble AOT cache /x/a.aot using configuration /x/a.aot.config"))
                .isTrue();
        assertThat(ChildJvm.jvmNotice("Picked up JAVA_TOOL_OPTIONS: -Djava.class.path=a.jar -XX:AOTMode=create")).isTrue();
        assertThat(ChildJvm.jvmNotice("Picked up JAVA_TOOL_OPTIONS: -Xmx1g")).isFalse();
        assertThat(ChildJvm.jvmNotice("Launching child process failed")).isFalse();
        assertThat(ChildJvm.jvmNotice("WARNING: A restricted method in java.lang.System has been called")).isFalse();
        assertThat(ChildJvm.jvmNotice("rank 0 joined")).isFalse();
    }
}
