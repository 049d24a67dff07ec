package io.spraynic.datapath.nic;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Set;

/**
 * Reads a spray pre-shared key (docs/PROTOCOL.md S12.2) from a file that only its owner can read: a regular
 * file (not a link) of this user or root, mode 0600 or 0400, holding at least 32 random bytes, either raw or as hex digits (64 or
 * more, whitespace around them ignored). Anything else is refused with a sentence that says what to fix.
 */
public final class PreSharedKeyFile
{
    /** Fewest key bytes. */
    public static final int MIN_BYTES = 32;
    private static final int MAX_FILE_BYTES = 4096;
    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(PosixFilePermission.GROUP_READ,
        PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
        PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private PreSharedKeyFile()
    {
    }

    /**
     * @param file the key file.
     * @return the key's bytes.
     * @throws IllegalArgumentException with a sentence naming the file and the fix when it is refused.
     */
    public static byte[] read(final Path file)
    {
        final String name = "pre-shared key file " + file;
        try
        {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS))
            {
                throw new IllegalArgumentException(name + " is " + (Files.exists(file, LinkOption.NOFOLLOW_LINKS) ?
                    "not a regular file (a link or a directory)" : "missing") + ": give a regular file of mode 0600");
            }
            final Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
            if (permissions.stream().anyMatch(OTHERS::contains))
            {
                throw new IllegalArgumentException(name + " can be read or written by others (" +
                    java.nio.file.attribute.PosixFilePermissions.toString(permissions) +
                    "): a key must be its owner's only: chmod 600 " + file);
            }
            final String ownerProblem = ownerProblem(file);
            if (null != ownerProblem)
            {
                throw new IllegalArgumentException(name + ownerProblem);
            }
            if (Files.size(file) > MAX_FILE_BYTES)
            {
                throw new IllegalArgumentException(name + " has " + Files.size(file) + " bytes: a key file holds 32 to " +
                    MAX_FILE_BYTES + " (e.g. head -c 32 /dev/urandom > " + file + ")");
            }
            return parse(Files.readAllBytes(file), name);
        }
        catch (final IOException | UnsupportedOperationException e)
        {
            throw new IllegalArgumentException(name + " cannot be read: " + e.getMessage(), e);
        }
    }

    /**
     * @return null when the file is this user's (or root's), else why not: its owner could change the key under the
     * NIC, or read it, whatever the mode says.
     */
    private static String ownerProblem(final Path file) throws IOException
    {
        if (!file.getFileSystem().supportedFileAttributeViews().contains("unix"))
        {
            return null;
        }
        final int owner = (Integer)Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        final int self = io.spraynic.datapath.telemetry.OwnedDirectory.currentUid();
        return owner == self || owner == 0 ? null : " belongs to another user (uid " + owner + "), who could change " +
            "the key: a key file must be the NIC's user's own (chown " + self + " " + file + ")";
    }

    static byte[] parse(final byte[] content, final String name)
    {
        final String text = new String(content, StandardCharsets.ISO_8859_1).strip();
        if (!text.isEmpty() && text.length() % 2 != 0 && text.chars().allMatch(PreSharedKeyFile::isHex))
        {
            // before, taken as a raw key of those characters: a peer that read the same file as hex has another key
            throw new IllegalArgumentException(name + " holds " + text.length() + " hex digits: an odd number, a digit " +
                "missing or extra; give an even number (e.g. openssl rand -hex 32 > FILE)");
        }
        final byte[] key;
        // text of hex digits only is hex (a raw random key that is all hex digits is vanishingly unlikely)
        if (!text.isEmpty() && text.length() % 2 == 0 && text.chars().allMatch(PreSharedKeyFile::isHex))
        {
            key = HexFormat.of().parseHex(text);
        }
        else
        {
            key = content;
        }
        if (key.length < MIN_BYTES)
        {
            throw new IllegalArgumentException(name + " holds " + key.length + " byte(s): a key needs at least " + MIN_BYTES +
                " random bytes, raw or as 64 hex digits (e.g. openssl rand -hex 32 > FILE; chmod 600 FILE)");
        }
        final long distinct = java.util.stream.IntStream.range(0, key.length).map(i -> key[i] & 0xFF).distinct().count();
        if (distinct < 16)
        {
            throw new IllegalArgumentException(name + " does not look random (" + distinct + " distinct byte values in " +
                key.length + "): make one with openssl rand -hex 32");
        }
        return key;
    }

    private static boolean isHex(final int c)
    {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}
