package io.spraynic.dpdk;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What {@link Eal#close} removes of EAL's runtime directory: its own, never what a link planted at the name points to. */
class EalRuntimeDirectoryTest
{
    @TempDir
    Path dir;

    /**
     * Without a runtime directory of its own a user's EAL uses {@code /tmp/dpdk/<prefix>}: before, a link another
     * user planted there had {@code close} delete every file of the directory it named.
     */
    @Test
    void shouldRemoveItsOwnRuntimeDirectoryAndNeverFollowALink() throws Exception
    {
        final Path victim = Files.createDirectory(dir.resolve("victim"));
        Files.writeString(victim.resolve("keys"), "precious");
        final Path planted = Files.createSymbolicLink(dir.resolve("rte"), victim);
        Eal.removeRuntimeDirectory(planted);
        assertEquals("precious", Files.readString(victim.resolve("keys")), "nothing behind the link removed");
        assertTrue(Files.isSymbolicLink(planted));

        final Path own = Files.createDirectory(dir.resolve("own"));
        Files.writeString(own.resolve("config"), "x");
        Eal.removeRuntimeDirectory(own);
        assertFalse(Files.exists(own), "its own directory, and the files in it, removed");

        if ("root".equals(System.getProperty("user.name")))
        {
            final Path theirs = Files.createDirectory(dir.resolve("theirs"));
            Files.writeString(theirs.resolve("config"), "x");
            assertEquals(0, new ProcessBuilder("chown", "-R", "65534", theirs.toString()).start().waitFor());
            Eal.removeRuntimeDirectory(theirs);
            assertTrue(Files.exists(theirs.resolve("config")), "another user's directory left as it is");
        }
    }
}
