package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The start-up clean-up of the shared-memory port's directories (docs/security.md, "the switch's
 * start-up clean-up"): it removes what dead switches of this user left in this user's own home, and
 * cannot be steered by another local user to delete anything else.
 */
class IpcDirectoryTest {
    private Path base;
    private Path victim;

    @BeforeEach
    void layOut() throws IOException {
        // A base like /dev/shm: everyone may create in it, sticky. Under /tmp, so that another user can reach it.
        base = Files.createTempDirectory(Path.of("/tmp"), "ipc-base-");
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxrwxrwx"));
        new ProcessBuilder("chmod", "+t", base.toString()).start().onExit().join();
        // What an attacker would like the switch to delete: a directory only its owner may change.
        victim = Files.createTempDirectory(Path.of("/tmp"), "ipc-victim-");
        for (int i = 0; i < 20; i++) {
            Files.writeString(victim.resolve("file-" + i), "precious");
        }
    }

    @AfterEach
    void cleanUp() throws IOException {
        for (Path root : List.of(base, victim)) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    @Test
    void removesWhatDeadSwitchesOfThisUserLeftAndKeepsTheLiveOnes() throws IOException {
        Path home = IpcDirectory.trustedHome(base);
        assertThat(home).isNotNull();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(home))).isEqualTo("rwx------");
        Path dead = home.resolve("switchml-ipc-" + deadPid() + "-0011223344556677");
        Files.createDirectories(dead.resolve("sub"));
        Files.writeString(dead.resolve("sub").resolve("port-0.requests"), "x");
        // A link inside an abandoned directory is removed as a link: its target stays.
        Files.createSymbolicLink(dead.resolve("sub").resolve("link"), victim);
        Path live = home.resolve("switchml-ipc-" + ProcessHandle.current().pid() + "-8899aabbccddeeff");
        Files.createDirectory(live);

        try (IpcDirectory created = IpcDirectory.create(base.toString(), 1)) {
            assertThat(created.path().getParent()).isEqualTo(home);
            assertThat(dead).doesNotExist();
            assertThat(live).isDirectory();
            assertThat(victim).isDirectoryContaining(p -> p.getFileName().toString().equals("file-0"));
            Path own = created.path();
            Files.writeString(own.resolve("job-1-00.results"), "results");
            created.close();
            assertThat(own).doesNotExist();
        }
        try (Stream<Path> files = Files.list(victim)) {
            assertThat(files.count()).isEqualTo(20);
        }
    }

    @Test
    void leavesDirectoriesOutsideItsHomeAlone() throws IOException {
        // What switches before this rule, or another user, put straight under the base is not this switch's to remove.
        Path planted = base.resolve("switchml-ipc-" + deadPid() + "-0011223344556677");
        Files.createDirectories(planted.resolve("sub"));
        try (IpcDirectory created = IpcDirectory.create(base.toString(), 1)) {
            assertThat(planted.resolve("sub")).isDirectory();
            assertThat(created.path().getParent().getFileName().toString()).startsWith("switchml-");
        }
    }

    @Test
    void aHomeThatIsALinkIsNotUsed() throws IOException {
        Path home = base.resolve("switchml-" + System.getProperty("user.name"));
        Files.createSymbolicLink(home, victim);
        Path plantedInVictim = victim.resolve("switchml-ipc-" + deadPid() + "-00");
        Files.createDirectory(plantedInVictim);

        assertThat(IpcDirectory.trustedHome(base)).isNull();
        try (IpcDirectory created = IpcDirectory.create(base.toString(), 1)) {
            assertThat(created.path().getParent()).isEqualTo(base);
            assertThat(plantedInVictim).isDirectory();
        }
    }

    @Test
    void aHomeWithLooserModesIsNotUsed() throws IOException {
        Path home = base.resolve("switchml-" + System.getProperty("user.name"));
        Files.createDirectory(home);
        Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path planted = home.resolve("switchml-ipc-" + deadPid() + "-00");
        Files.createDirectory(planted);

        assertThat(IpcDirectory.trustedHome(base)).isNull();
        IpcDirectory.create(base.toString(), 1).close();
        assertThat(planted).isDirectory();
    }

    /**
     * The attack of security round 4, finding 1, as an unprivileged user: plant directories that look like a dead
     * switch's, each holding a subdirectory that a loop keeps swapping for a link to the victim, while switches start.
     */
    @Test
    void anUnprivilegedUserCannotSteerTheCleanUp() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root, to run the attacker as the unprivileged user nobody (setpriv)");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")), "needs setpriv (util-linux) to run as nobody");
        Path home = IpcDirectory.trustedHome(base);
        assertThat(home).isNotNull();
        long dead = deadPid();
        String script = String.join("\n",
                "cd " + base,
                // An attempt to plant in the switch user's home: refused by its mode.
                "mkdir " + home + "/switchml-ipc-" + dead + "-ff 2>/dev/null && echo PLANTED-IN-HOME",
                "end=$(( $(date +%s) + 30 ))",
                "i=0",
                "while [ $(date +%s) -lt $end ] && [ ! -e stop ]; do",
                "  d=switchml-ipc-" + dead + "-$i; mkdir -p $d/sub; touch $d/sub/a $d/sub/b",
                "  mv $d/sub $d/old 2>/dev/null; ln -s " + victim + " $d/sub 2>/dev/null",
                "  rm -f $d/sub; mv $d/old $d/sub 2>/dev/null",
                "  i=$(( (i + 1) % 50 ))",
                "done",
                "echo ATTACKER-DONE");
        Process attacker = new ProcessBuilder("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                "/bin/sh", "-c", script).redirectErrorStream(true).start();
        List<Path> made = new ArrayList<>();
        try {
            for (int start = 0; start < 40; start++) {
                IpcDirectory created = IpcDirectory.create(base.toString(), 1);
                made.add(created.path());
                created.close();
            }
        } finally {
            Files.createFile(base.resolve("stop"));
            assertThat(attacker.waitFor(60, TimeUnit.SECONDS)).as("the attacker's loop stops within 60 s").isTrue();
        }
        String said = new String(attacker.getInputStream().readAllBytes());
        System.out.println("attacker said: " + said.strip() + "; switches started: " + made.size());
        assertThat(said).contains("ATTACKER-DONE").doesNotContain("PLANTED-IN-HOME");
        try (Stream<Path> files = Files.list(victim)) {
            assertThat(files.count()).as("the victim's files").isEqualTo(20);
        }
        assertThat(made).allSatisfy(p -> assertThat(p.getParent()).isEqualTo(home));
        assertThat(Files.isSymbolicLink(home)).isFalse();
        assertThat(Files.getOwner(home, LinkOption.NOFOLLOW_LINKS).getName()).isEqualTo("root");
    }

    private static long deadPid() {
        return LongStream.range(30_000, 4_000_000).filter(p -> ProcessHandle.of(p).isEmpty()).findFirst().orElseThrow();
    }
}
