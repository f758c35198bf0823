package io.switchml.agent;

import com.sun.security.auth.module.UnixSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The agent's shared memory holds a rank's gradients: another local user must not read or change them. */
class SharedTensorsTest {
    @TempDir
    Path dir;

    @Test
    void theFileIsCreatedOwnerOnlyEvenUnderAPermissiveUmask() throws Exception {
        Path file = dir.resolve("shm");
        // The JVM cannot change its own umask: a child JVM under umask 000 creates the file, as an agent would.
        Process child = new ProcessBuilder("sh", "-c", "umask 000 && exec \"$0\" -cp \"$1\" " + SharedTensorsTest.class.getName()
                + " \"$2\"", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                System.getProperty("java.class.path"), file.toString())
                .redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            assertThat(line).as("the child's first line").isEqualTo("created");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
            assertThat(Files.size(file)).isEqualTo(4096);
        } finally {
            child.getOutputStream().close();
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("the child exits once its stdin closes").isTrue();
        }
        assertThat(child.exitValue()).isZero();
        assertThat(file).as("removed when the agent exits").doesNotExist();
    }

    /** The child of {@link #theFileIsCreatedOwnerOnlyEvenUnderAPermissiveUmask}: creates the file, waits for stdin's end. */
    public static void main(String[] args) throws Exception {
        try (SharedTensors shared = SharedTensors.create(Path.of(args[0]), 4096, 1)) {
            System.out.println("created");
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the parent to close our stdin
            }
        }
    }

    @Test
    void anExistingPrivateFileOfThisUserIsEmptiedAndReused() throws Exception {
        Path file = Files.createFile(dir.resolve("shm"), PosixFilePermissions.asFileAttribute(SharedTensors.PRIVATE));
        Files.write(file, new byte[]{1, 2, 3, 4, 5, 6, 7, 8});
        try (SharedTensors shared = SharedTensors.create(file, 1024, 1)) {
            assertThat(shared.bytes()).isEqualTo(1024);
            assertThat(shared.ints(0, 0, 2).get(0)).as("emptied").isZero();
            assertThat(Files.getPosixFilePermissions(file)).isEqualTo(SharedTensors.PRIVATE);
        }
    }

    @Test
    void anExistingFileOthersMayOpenIsRefusedAndLeftAlone() throws Exception {
        for (String mode : List.of("rw-r--r--", "rw-rw----", "rw----r--")) {
            Path file = Files.createFile(dir.resolve("shm-" + mode), PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString(mode)));
            // createFile's mode passes through the umask; set it exactly.
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
            Files.write(file, new byte[]{42});
            assertThatThrownBy(() -> SharedTensors.create(file, 1024, 1))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasMessageContaining("cannot create the shared memory file " + file)
                    .hasMessageContaining("exists with mode " + mode + ", which lets others open it")
                    .hasMessageContaining("must be this user's alone (mode 0600)");
            assertThat(Files.readAllBytes(file)).as("not truncated").containsExactly(42);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).as("not repaired").isEqualTo(mode);
        }
    }

    @Test
    void aSymbolicLinkIsRefused() throws Exception {
        Path target = Files.createFile(dir.resolve("target"), PosixFilePermissions.asFileAttribute(SharedTensors.PRIVATE));
        Path link = Files.createSymbolicLink(dir.resolve("shm"), target);
        assertThatThrownBy(() -> SharedTensors.create(link, 1024, 1))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("cannot create the shared memory file " + link)
                .hasMessageContaining("it exists and is not a regular file");
        assertThat(Files.size(target)).as("the link's target is untouched").isZero();
    }

    @Test
    void anotherUsersFileIsRefused() throws Exception {
        assumeTrue(new UnixSystem().getUid() == 0, "only root can give a file to another user");
        Path file = Files.createFile(dir.resolve("shm"), PosixFilePermissions.asFileAttribute(SharedTensors.PRIVATE));
        Files.setAttribute(file, "unix:uid", 65534);
        assertThatThrownBy(() -> SharedTensors.create(file, 1024, 1))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("belongs to user 65534, not to this user (0)");
    }
}
