package io.spraynic.datapath.telemetry;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file a command writes at a path its user names (a capture, a report, an experiment's CSV and charts): replaced
 * whole, never through a link and never anything but a regular file. Such paths are often in shared directories
 * ({@code /tmp}), where a link planted at the name would have the command truncate its target (a file of the user's
 * own, or root's), and a pipe would block the open for good.
 */
public final class OutputFile
{
    private OutputFile()
    {
    }

    /**
     * @return {@code file} opened to be written anew (created, or truncated when it is a regular file).
     * @throws IOException when it exists and is not a regular file, or cannot be opened.
     */
    public static FileChannel openReplacing(final Path file) throws IOException
    {
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS))
        {
            throw new IOException(file + " exists and is not a regular file (a link, a directory, a pipe or a " +
                "device): only a regular file is replaced");
        }
        // a link planted between the check and the open fails the open (O_NOFOLLOW), never followed
        return FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS);
    }

    /** @return a stream over {@link #openReplacing}; closing it closes the file. */
    public static OutputStream newOutputStream(final Path file) throws IOException
    {
        return Channels.newOutputStream(openReplacing(file));
    }

    /**
     * Writes {@code text} (UTF-8) as the whole of {@code file}, as {@link #openReplacing} opens it.
     *
     * @return {@code file}.
     */
    public static Path writeString(final Path file, final CharSequence text) throws IOException
    {
        try (OutputStream out = newOutputStream(file))
        {
            out.write(text.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return file;
    }

    /**
     * Makes the directory a command writes its outputs into (with its parents), or takes the one there, when it is a
     * real directory of this user or root that others cannot replace files in ({@link OwnedDirectory}).
     *
     * @throws IllegalArgumentException naming the problem and the fix.
     */
    public static Path createDirectory(final Path directory) throws IOException
    {
        if (!Files.exists(directory, LinkOption.NOFOLLOW_LINKS) &&
            directory.getFileSystem().supportedFileAttributeViews().contains("posix"))
        {
            // 0755 whatever the umask (002 would make it group-writable, which the check below refuses)
            Files.createDirectories(directory);
            Files.setPosixFilePermissions(directory, java.nio.file.attribute.PosixFilePermissions.fromString(
                "rwxr-xr-x"));
        }
        Files.createDirectories(directory);
        final String problem = OwnedDirectory.problem(directory, "the output directory");
        if (null != problem)
        {
            throw new IllegalArgumentException(problem + ": give a directory of your own");
        }
        return directory;
    }
}
