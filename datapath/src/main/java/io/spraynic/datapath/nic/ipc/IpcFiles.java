package io.spraynic.datapath.nic.ipc;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The files of an IPC directory: the directory only its user may enter (0700), every file only its user may read or
 * write (0600), created exclusively (never through a link someone else planted), and the checks that refuse a
 * directory or file another user could reach. Where the file system has no POSIX permissions (not Linux), files are
 * created with the defaults and only the link check applies.
 */
final class IpcFiles
{
    static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
    static final Set<PosixFilePermission> OWNER_ONLY_DIRECTORY = PosixFilePermissions.fromString("rwx------");

    private IpcFiles()
    {
    }

    /** Creates {@code path} (mode 0600, failing if anything is there, a link included) of {@code length} zero bytes and maps it. */
    static MappedByteBuffer createMapped(final Path path, final long length)
    {
        try
        {
            createOwnerOnly(path);
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS))
            {
                return channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot create " + path + ": " + ex, ex);
        }
    }

    /**
     * Creates {@code path} (mode 0600, failing if anything is there, a link included) holding {@code bytes}, written
     * and never mapped: a process that truncates it costs the writer nothing.
     */
    static void createWritten(final Path path, final byte[] bytes)
    {
        try
        {
            createOwnerOnly(path);
            Files.write(path, bytes, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot create " + path + ": " + ex, ex);
        }
    }

    /** Creates an empty file of mode 0600; throws {@link FileAlreadyExistsException} when anything has that name. */
    static void createOwnerOnly(final Path path) throws IOException
    {
        if (isPosix(path.getParent()))
        {
            final FileAttribute<Set<PosixFilePermission>> mode = PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE);
            Files.createFile(path, mode);
            Files.setPosixFilePermissions(path, OWNER_ONLY_FILE); // the umask may only have removed bits; say it once
        }
        else
        {
            Files.createFile(path);
        }
    }

    /**
     * Creates the directory 0700 if missing; refuses one that another user owns or whose group or others may enter.
     *
     * @throws IllegalStateException with one sentence that names the fix.
     */
    static void prepareDirectory(final Path directory)
    {
        prepareDirectory(directory, IpcAccess.OWNER_ONLY);
    }

    /**
     * Creates the directory if missing, 0700 then (with a group) of that group and 0750; refuses one that another user
     * owns, or whose mode or group lets anyone reach it that {@code access} does not name.
     *
     * @throws IllegalStateException with one sentence that names the fix.
     */
    static void prepareDirectory(final Path directory, final IpcAccess access)
    {
        try
        {
            if (!Files.exists(directory, LinkOption.NOFOLLOW_LINKS))
            {
                if (isPosix(existingAncestor(directory)))
                {
                    Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIRECTORY));
                    access.apply(directory, access.directoryMode());
                }
                else
                {
                    Files.createDirectories(directory);
                }
                // checked as one found there: another user who made it between the look and the make gets no pass
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot create the IPC directory " + directory + ": " + ex.getMessage(), ex);
        }
        final String problem = directoryProblem(directory, access);
        if (null != problem)
        {
            throw new IllegalStateException(problem);
        }
        if (null != access.group())
        {
            try
            {
                access.apply(directory, access.directoryMode()); // ours and of the group: let its members enter
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException("cannot set the mode of the IPC directory " + directory + ": " + ex.getMessage(), ex);
            }
        }
    }

    /** @return null when {@code directory} is a directory of this user that nobody else may enter, else why not and the fix. */
    static String directoryProblem(final Path directory)
    {
        return directoryProblem(directory, IpcAccess.OWNER_ONLY);
    }

    /**
     * @return null when {@code directory} is a directory of this user that nobody but {@code access} names may enter
     * (with a group: of that group, which may enter and read but not write), else why not and the fix.
     */
    static String directoryProblem(final Path directory, final IpcAccess access)
    {
        if (Files.isSymbolicLink(directory))
        {
            return "the IPC directory " + directory + " is a symbolic link, which another user may have planted: " +
                "remove it or give --ipc-dir a real directory of yours";
        }
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS))
        {
            return "the IPC directory " + directory + " exists and is not a directory: remove it or give another --ipc-dir";
        }
        if (!isPosix(directory))
        {
            return null;
        }
        try
        {
            final PosixFileAttributes attributes = Files.readAttributes(directory, PosixFileAttributes.class,
                LinkOption.NOFOLLOW_LINKS);
            final Object uid = Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            final Object myUid = currentUid();
            if (null != myUid ? !myUid.equals(uid) :
                !attributes.owner().getName().equals(System.getProperty("user.name")))
            {
                return "the IPC directory " + directory + " belongs to " + attributes.owner().getName() + " (uid " + uid +
                    "), not to the user running this NIC: remove it or give another --ipc-dir";
            }
            final Set<PosixFilePermission> mode = attributes.permissions();
            if (!access.directoryMode().containsAll(mode))
            {
                return "the IPC directory " + directory + " has mode " + PosixFilePermissions.toString(mode) +
                    (null == access.group() ? ", so other users may reach the NIC's memory: run chmod 700 " :
                    ", so others than " + access.describe() + " may reach the NIC's memory or replace its socket: " +
                    "run chmod 750 ") + directory + " or give another --ipc-dir";
            }
            if (null != access.group() && !attributes.group().getName().equals(access.principal(directory).getName()))
            {
                return "the IPC directory " + directory + " belongs to group " + attributes.group().getName() + ", not " +
                    access.group() + ": run chgrp " + access.group() + " " + directory + " or give another --ipc-dir";
            }
            return null;
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            return "cannot check the owner and mode of the IPC directory " + directory + ": " + ex.getMessage();
        }
    }

    /**
     * @return null when {@code file} is a regular file (not a link) of this user, mode 0600 at most, of exactly
     * {@code length} bytes; else why not.
     */
    static String ownFileProblem(final Path file, final long length)
    {
        try
        {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS))
            {
                return file.getFileName() + " is not a regular file";
            }
            if (isPosix(file))
            {
                final PosixFileAttributes attributes = Files.readAttributes(file, PosixFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
                if (!OWNER_ONLY_FILE.containsAll(attributes.permissions()))
                {
                    return file.getFileName() + " has mode " + PosixFilePermissions.toString(attributes.permissions()) +
                        ", not rw-------";
                }
                final Object myUid = currentUid();
                if (null != myUid && !myUid.equals(Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS)))
                {
                    return file.getFileName() + " belongs to another user";
                }
            }
            final long size = Files.size(file);
            if (size != length)
            {
                return file.getFileName() + " is " + size + " B, not " + length + " B";
            }
            return null;
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            return "cannot check " + file.getFileName() + ": " + ex.getMessage();
        }
    }

    /** Removes the announcement and socket a NIC leaves in {@code directory}, and the files of older versions. */
    static void removeNicFiles(final Path directory)
    {
        try (Stream<Path> files = Files.list(directory))
        {
            files.filter(p ->
            {
                final String name = p.getFileName().toString();
                return name.equals(IpcFileDescriptor.CONTROL_FILE) || name.equals(CommandSocket.SOCKET_FILE) || name.startsWith("mr-") || name.startsWith("conn-") ||
                    name.startsWith(IpcFileDescriptor.OLD_ANSWER_FILE_PREFIX);
            }).forEach(IpcFiles::delete);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot list the IPC directory " + directory + ": " + ex.getMessage(), ex);
        }
    }

    static void delete(final Path file)
    {
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            System.err.println("spraynic ipc: could not remove " + file + ": " + ex.getMessage());
        }
    }

    /** @return this process's uid where the file system tells it (Linux: the owner of /proc/self), else null. */
    static Object currentUid()
    {
        try
        {
            return io.spraynic.datapath.telemetry.OwnedDirectory.currentUid();
        }
        catch (final IOException ex)
        {
            return null;
        }
    }

    private static boolean isPosix(final Path path)
    {
        return null != path && path.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    private static Path existingAncestor(final Path path)
    {
        Path p = path.toAbsolutePath();
        while (null != p && !Files.exists(p))
        {
            p = p.getParent();
        }
        return p;
    }
}
