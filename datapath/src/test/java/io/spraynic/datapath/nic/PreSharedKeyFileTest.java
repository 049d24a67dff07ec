package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** S12.2 key files: owner-only, 32+ random bytes, raw or hex; everything else refused with a sentence. */
@Timeout(10)
class PreSharedKeyFileTest
{
    private static Path write(final Path dir, final String name, final byte[] content, final String mode) throws Exception
    {
        final Path file = dir.resolve(name);
        Files.write(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private static String refusal(final Path file)
    {
        return assertThrows(IllegalArgumentException.class, () -> PreSharedKeyFile.read(file)).getMessage();
    }

    @Test
    void shouldReadRawAndHexKeysOfTheOwnerOnly(@TempDir final Path dir) throws Exception
    {
        final byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        assertArrayEquals(key, PreSharedKeyFile.read(write(dir, "raw", key, "rw-------")));
        final byte[] hex = (HexFormat.of().formatHex(key) + "\n").getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(key, PreSharedKeyFile.read(write(dir, "hex", hex, "r--------")));
    }

    @Test
    void shouldRefuseKeysOthersCanReadShortWeakMissingOrLinkedWithTheFix(@TempDir final Path dir) throws Exception
    {
        final byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        final Path open = write(dir, "open", key, "rw-r--r--");
        assertTrue(refusal(open).contains("chmod 600 " + open), refusal(open));
        assertTrue(refusal(write(dir, "group", key, "rw-rw----")).contains("others"));
        assertTrue(refusal(write(dir, "short", new byte[31], "rw-------")).contains("at least 32"));
        final byte[] shortHex = HexFormat.of().formatHex(key, 0, 16).getBytes(StandardCharsets.US_ASCII);
        assertTrue(refusal(write(dir, "shorthex", shortHex, "rw-------")).contains("16 byte(s)"), "32 hex digits are 16 bytes");
        assertTrue(refusal(write(dir, "zeros", new byte[64], "rw-------")).contains("does not look random"));
        assertTrue(refusal(dir.resolve("missing")).contains("missing"));
        final Path link = Files.createSymbolicLink(dir.resolve("link"), write(dir, "target", key, "rw-------"));
        assertTrue(refusal(link).contains("not a regular file"));
        assertTrue(refusal(dir).contains("not a regular file"));
        // one hex digit too many (a typo): before, taken as 65 raw bytes of text, a key no peer reading hex shares
        final byte[] oddHex = (HexFormat.of().formatHex(key) + "a").getBytes(StandardCharsets.US_ASCII);
        assertTrue(refusal(write(dir, "oddhex", oddHex, "rw-------")).contains("holds 65 hex digits: an odd number"));
        // mode 0600, but another user's: they could change (or read) the key under the NIC
        final Path others = write(dir, "others", key, "rw-------");
        assertTrue(new ProcessBuilder("chown", "65534", others.toString()).start().waitFor() == 0);
        assertTrue(refusal(others).contains("belongs to another user (uid 65534)"), refusal(others));
    }
}
