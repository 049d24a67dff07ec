package io.spraynic.datapath.telemetry;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Whether a directory is safe for this process to create files in by name (the counters directory, an exchange
 * directory): a real directory, not a link, of this user or root, that nobody else may write into unless it is
 * sticky (as /tmp: others can then neither remove nor rename this user's files). In a directory another user made or
 * may write into, that user could plant a link at a name this process is about to write, and have it write through
 * the link into a file of the attacker's choosing.
 */
public final class OwnedDirectory
{
    /** Mode bits that let others than the owner write into a directory. */
    public static final int GROUP_OR_OTHERS_WRITE = 0022;
    private static final int STICKY = 01000;

    private OwnedDirectory()
    {
    }

    /**
     * @return this process's uid, as Linux shows it: the owner of /proc/self.
     * @throws IOException when the file system cannot say (no unix attribute view).
     */
    public static int currentUid() throws IOException
    {
        try
        {
            return (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        }
        catch (final UnsupportedOperationException | IllegalArgumentException | ClassCastException ex)
        {
            throw new IOException("cannot read this process's uid: " + ex.getMessage(), ex);
        }
    }

    /**
     * @param directory the directory.
     * @param what      what it is, for the message ("the counters directory").
     * @return null when it is safe, else why not, in one sentence that names it.
     */
    public static String problem(final Path directory, final String what)
    {
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS))
        {
            return what + " " + directory + " is not a directory (a symbolic link, which another user may have " +
                "planted, or a file)";
        }
        if (!directory.getFileSystem().supportedFileAttributeViews().contains("unix"))
        {
            return null;
        }
        try
        {
            final int owner = (Integer)Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            final int mode = (Integer)Files.getAttribute(directory, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            if (owner != 0 && owner != currentUid())
            {
                return what + " " + directory + " belongs to another user (uid " + owner + ")";
            }
            if ((mode & GROUP_OR_OTHERS_WRITE) != 0 && (mode & STICKY) == 0)
            {
                return what + " " + directory + " has mode " + Integer.toOctalString(mode & 07777) +
                    ": others may replace the files in it (chmod go-w, or +t as /tmp)";
            }
            return null;
        }
        catch (final IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException ex)
        {
            return "cannot check the owner and mode of " + what + " " + directory + ": " + ex.getMessage();
        }
    }
}
