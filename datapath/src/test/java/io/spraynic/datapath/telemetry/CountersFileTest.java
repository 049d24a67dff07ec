package io.spraynic.datapath.telemetry;

import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CountersFileTest
{
    @Test
    void shouldPublishCountersThroughFile(@TempDir final Path dir)
    {
        final Path path;
        try (CountersFile file = CountersFile.create(dir, "unit", 8))
        {
            path = file.path();
            final AtomicCounter rx = file.newCounter("port ring0: rx packets");
            final AtomicCounter drops = file.newCounter("port ring0: drops (malformed)");
            rx.getAndAddRelease(1234);
            drops.incrementRelease();

            assertEquals(path, CountersFileReader.findLive(dir).orElseThrow());
            try (CountersFileReader reader = CountersFileReader.open(path))
            {
                assertEquals(ProcessHandle.current().pid(), reader.pid());
                assertEquals(List.of(
                    new CountersFileReader.Counter(rx.id(), 1234, "port ring0: rx packets"),
                    new CountersFileReader.Counter(drops.id(), 1, "port ring0: drops (malformed)")), reader.read());
                rx.incrementRelease();
                assertEquals(1235, reader.read().get(0).value(), "live, not a snapshot");
            }
        }
        assertFalse(Files.exists(path), "removed on close");
    }

    @Test
    void shouldNeverWriteThroughALinkPlantedAtItsName(@TempDir final Path dir) throws Exception
    {
        // another user's link at the name this process is about to create: the NIC would have truncated the target
        final Path victim = dir.resolve("victim");
        Files.writeString(victim, "precious");
        final Path planted = dir.resolve("nic-" + ProcessHandle.current().pid() + CountersFileDescriptor.SUFFIX);
        Files.createSymbolicLink(planted, victim);
        try (CountersFile file = CountersFile.create(dir, "nic", 8))
        {
            assertEquals(planted, file.path());
            assertFalse(Files.isSymbolicLink(planted), "the link was replaced by a file of the NIC's own");
            assertTrue(Files.isRegularFile(planted, java.nio.file.LinkOption.NOFOLLOW_LINKS));
            file.newCounter("port ring0: rx packets").incrementRelease();
        }
        assertEquals("precious", Files.readString(victim), "the link's target untouched");
    }

    @Test
    void shouldRefuseADirectoryOthersMayWriteIntoOrALink(@TempDir final Path dir) throws Exception
    {
        final Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        final IllegalStateException wide = assertThrows(IllegalStateException.class, () -> CountersFile.create(open, "nic", 8));
        assertTrue(wide.getMessage().contains("others may replace the files in it"), wide.getMessage());
        assertEquals(List.of(), listing(open), "nothing created there");

        // sticky, as /tmp and /dev/shm: others can neither remove nor rename this user's files
        final Path sticky = Files.createDirectory(dir.resolve("sticky"));
        assertEquals(0, new ProcessBuilder("chmod", "1777", sticky.toString()).start().waitFor());
        CountersFile.create(sticky, "nic", 8).close();

        final Path link = Files.createSymbolicLink(dir.resolve("link"), Files.createDirectory(dir.resolve("real")));
        final IllegalStateException linked = assertThrows(IllegalStateException.class, () -> CountersFile.create(link, "nic", 8));
        assertTrue(linked.getMessage().contains("symbolic link"), linked.getMessage());
    }

    @Test
    void shouldRefuseADirectoryOfAnotherUser(@TempDir final Path dir) throws Exception
    {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "only root can give a directory to another user");
        final Path theirs = Files.createDirectory(dir.resolve("theirs"));
        assertEquals(0, new ProcessBuilder("chown", "65534", theirs.toString()).start().waitFor());
        final IllegalStateException error = assertThrows(IllegalStateException.class, () -> CountersFile.create(theirs, "nic", 8));
        assertTrue(error.getMessage().contains("belongs to another user (uid 65534)"), error.getMessage());
    }

    private static List<Path> listing(final Path dir) throws Exception
    {
        try (var files = Files.list(dir))
        {
            return files.toList();
        }
    }

    @Test
    void shouldRefuseFilesThatAreNotCountersFiles(@TempDir final Path dir) throws Exception
    {
        final Path bogus = dir.resolve("bogus-2147483646.counters");
        Files.write(bogus, new byte[256]);
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class, () -> CountersFileReader.open(bogus));
        assertTrue(error.getMessage().endsWith("is not a SprayNIC counters file"), error.getMessage());
        assertTrue(CountersFileReader.findLive(dir).isEmpty(), "its owner is not alive");
    }

    @Test
    void shouldBeReadLiveByAnotherProcess(@TempDir final Path dir) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("--")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), CountersFileWriterMain.class.getName(), dir.toString()));
        final Process writer = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8));
            OutputStream in = writer.getOutputStream())
        {
            final Path path = Path.of(out.readLine());
            assertEquals(path, CountersFileReader.findLive(dir).orElseThrow());
            try (CountersFileReader reader = CountersFileReader.open(path))
            {
                assertEquals(writer.pid(), reader.pid());
                final List<CountersFileReader.Counter> counters = reader.read();
                assertEquals("writer: frames", counters.get(0).label());
                assertEquals(42, counters.get(0).value());
                in.write('\n');
                in.flush();
                assertEquals("incremented", out.readLine());
                assertEquals(43, reader.read().get(0).value());
            }
        }
        finally
        {
            assertTrue(writer.waitFor(30, TimeUnit.SECONDS));
            writer.destroyForcibly();
        }
    }
}
