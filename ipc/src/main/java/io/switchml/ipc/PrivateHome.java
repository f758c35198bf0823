package io.switchml.ipc;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Set;

/**
 * This user's own directory under a shared base such as /dev/shm: {@code switchml-<user>}, mode 0700, owned by the
 * user, never a link. Nobody else can create, rename or swap anything in it, so names in it may be predictable (the
 * switch's clean-up of dead switches' directories, a host's agent that the host's ranks find by the job's name)
 * without another local user steering them to files of theirs (docs/security.md).
 *
 * @param path    the directory, made if missing
 * @param refused why it cannot be trusted (it belongs to someone else, is a link, or has another mode); null when it can
 */
public record PrivateHome(Path path, String refused) {
    /** Owner read, write and search; nothing for the group or others. */
    public static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final String PREFIX = "switchml-";

    /** Whether the directory can be trusted. */
    public boolean trusted() {
        return refused == null;
    }

    /**
     * Makes (where missing) and checks this user's home under {@code base}.
     *
     * @throws IOException when it can be neither made nor read
     */
    public static PrivateHome under(Path base) throws IOException {
        String user = System.getProperty("user.name", "");
        Path home = base.resolve(PREFIX + user.replaceAll("[^A-Za-z0-9._-]", "_"));
        try {
            Files.createDirectory(home, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } catch (FileAlreadyExistsException existing) {
            // checked below like one this call made
        }
        PosixFileAttributes attributes = Files.readAttributes(home, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        UserPrincipal self = home.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(user);
        String refused = !attributes.isDirectory() ? "it is not a directory (a link?)"
                : !attributes.owner().equals(self) ? "it belongs to " + attributes.owner().getName() + ", not " + user
                : !attributes.permissions().equals(OWNER_ONLY)
                ? "its mode is " + PosixFilePermissions.toString(attributes.permissions()) + ", not rwx------" : null;
        return new PrivateHome(home, refused);
    }
}
