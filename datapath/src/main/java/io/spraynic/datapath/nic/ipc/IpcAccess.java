package io.spraynic.datapath.nic.ipc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.Set;

/**
 * Who may use a NIC's IPC directory (I10.1): its owner alone (the default: directory 0700, announcement and socket
 * 0600), or its owner and the members of one group ({@code spraynic nic --ipc-group NAME}: the directory 0750, the
 * announcement 0640 and {@code nic.sock} 0660, all of that group). The NIC also checks each connection's peer
 * credentials against the same rule (I10.10), so a descriptor of {@code nic.sock} that reached another user is of
 * no use to it.
 */
public final class IpcAccess
{
    /** The owner alone. */
    public static final IpcAccess OWNER_ONLY = new IpcAccess(null);

    private static final Set<PosixFilePermission> OWNER_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> GROUP_DIRECTORY = PosixFilePermissions.fromString("rwxr-x---");
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> GROUP_READ_FILE = PosixFilePermissions.fromString("rw-r-----");
    private static final Set<PosixFilePermission> GROUP_SOCKET = PosixFilePermissions.fromString("rw-rw----");

    private final String group;

    private IpcAccess(final String group)
    {
        this.group = group;
    }

    /**
     * @param name a group of this host, by name (a number is refused: names compare unambiguously).
     * @return access for the owner and that group's members.
     * @throws IllegalArgumentException for an empty name or one with characters no group name has.
     */
    public static IpcAccess group(final String name)
    {
        if (null == name || name.isEmpty() || name.length() > 64 || !name.matches("[A-Za-z_][A-Za-z0-9_.-]*\\$?"))
        {
            throw new IllegalArgumentException("'" + name + "' is not a group name (a letter or _, then letters, digits, " +
                "_ . -; at most 64)");
        }
        return new IpcAccess(name);
    }

    /** @return the group that shares the directory, or null for the owner alone. */
    public String group()
    {
        return group;
    }

    /** @return the directory's mode: 0700, or 0750 with a group (members may enter and read, never add or remove). */
    Set<PosixFilePermission> directoryMode()
    {
        return null == group ? OWNER_DIRECTORY : GROUP_DIRECTORY;
    }

    /** @return the announcement's mode: 0600, or 0640 with a group. */
    Set<PosixFilePermission> announcementMode()
    {
        return null == group ? OWNER_FILE : GROUP_READ_FILE;
    }

    /** @return the socket's mode: 0600, or 0660 with a group (connecting needs write permission on it). */
    Set<PosixFilePermission> socketMode()
    {
        return null == group ? OWNER_FILE : GROUP_SOCKET;
    }

    /**
     * Gives {@code path} this access's group, when it has one, then {@code mode}: in that order, so the group never
     * gets bits on an object of another group.
     */
    void apply(final Path path, final Set<PosixFilePermission> mode) throws IOException
    {
        final PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class,
            LinkOption.NOFOLLOW_LINKS);
        if (null == view)
        {
            return; // no POSIX permissions here (not Linux): IpcFiles applies only the link check
        }
        if (null != group)
        {
            view.setGroup(principal(path)); // lchown: never the target of a link
        }
        // chmod by name, as before groups: a socket cannot be opened for the descriptor a no-follow chmod needs, and
        // only this user can add an entry to the directory (checked first), so no link can stand at this name
        Files.setPosixFilePermissions(path, mode);
    }

    /** @return the group as the file system of {@code path} names it. */
    GroupPrincipal principal(final Path path)
    {
        try
        {
            return path.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByGroupName(group);
        }
        catch (final UserPrincipalNotFoundException ex)
        {
            throw new IllegalStateException("there is no group '" + group + "' on this host: create it (groupadd " +
                group + ") or give --ipc-group an existing one", ex);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot look up the group '" + group + "': " + ex.getMessage(), ex);
        }
    }

    /** @return who may use the directory, in words. */
    public String describe()
    {
        return null == group ? "its owner" : "its owner and group " + group;
    }

    @Override
    public String toString()
    {
        return describe();
    }
}
