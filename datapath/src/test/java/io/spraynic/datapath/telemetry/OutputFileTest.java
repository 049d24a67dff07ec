package io.spraynic.datapath.telemetry;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The files and directories commands write at paths their users name (reports, experiment outputs). */
class OutputFileTest
{
    @TempDir
    Path dir;

    /**
     * A report or a CSV at a name where another user planted a link (in a directory they can write): before, the
     * command truncated the link's target, a file of the user's own (or, under CI, root's); a pipe held it for good.
     */
    @Test
    void shouldReplaceOnlyARegularFile() throws Exception
    {
        final Path target = Files.writeString(dir.resolve("bashrc"), "precious");
        final Path report = Files.createSymbolicLink(dir.resolve("report.json"), target);
        assertThrows(IOException.class, () -> OutputFile.writeString(report, "{}"));
        assertEquals("precious", Files.readString(target));
        final Path fifo = dir.resolve("report.xml");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        assertThrows(IOException.class, () -> OutputFile.writeString(fifo, "<x/>"), "refused, not an open that blocks");
        final Path old = Files.writeString(dir.resolve("old.csv"), "a much longer earlier content");
        assertEquals(old, OutputFile.writeString(old, "new"));
        assertEquals("new", Files.readString(old), "a regular file replaced whole");
    }

    /** An output directory others may replace files in is refused; one made for it, or one of the user's, is taken. */
    @Test
    void shouldTakeOnlyAnOutputDirectoryOthersCannotReplaceFilesIn() throws Exception
    {
        final Path made = OutputFile.createDirectory(dir.resolve("results/trial"));
        assertTrue(Files.isDirectory(made));
        final Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> OutputFile.createDirectory(open));
        assertTrue(refused.getMessage().contains("others may replace the files in it"), refused.getMessage());
        final Path link = Files.createSymbolicLink(dir.resolve("link"), made);
        assertThrows(IllegalArgumentException.class, () -> OutputFile.createDirectory(link), "a link is not taken");
    }
}
