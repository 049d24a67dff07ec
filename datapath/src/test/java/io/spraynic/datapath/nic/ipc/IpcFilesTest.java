package io.spraynic.datapath.nic.ipc;

import org.agrona.IoUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.MappedByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class IpcFilesTest
{
    @TempDir
    Path base;

    @Test
    void shouldCreateFilesOwnerOnlyAndNeverThroughAPlantedLink() throws Exception
    {
        final Path dir = base.resolve("ipc");
        IpcFiles.prepareDirectory(dir);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        final MappedByteBuffer mapped = IpcFiles.createMapped(dir.resolve("mr-1-1"), 8192);
        IoUtil.unmap(mapped);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("mr-1-1"))));
        assertEquals(8192, Files.size(dir.resolve("mr-1-1")));
        assertNull(IpcFiles.ownFileProblem(dir.resolve("mr-1-1"), 8192));

        final Path victim = Files.writeString(base.resolve("victim"), "keep me");
        Files.createSymbolicLink(dir.resolve("conn-1-2"), victim);
        assertThrows(IllegalStateException.class, () -> IpcFiles.createMapped(dir.resolve("conn-1-2"), 8192));
        assertEquals("keep me", Files.readString(victim), "the link's target untouched");
    }

    @Test
    void shouldNameWhatIsWrongWithAFileOfAnotherShape() throws Exception
    {
        final Path file = Files.write(base.resolve("f"), new byte[100]);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        assertTrue(IpcFiles.ownFileProblem(file, 100).contains("has mode rw-r-----"));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertTrue(IpcFiles.ownFileProblem(file, 64).contains("is 100 B, not 64 B"));
        assertTrue(IpcFiles.ownFileProblem(Files.createSymbolicLink(base.resolve("l"), file), 100)
            .contains("not a regular file"));
        assertTrue(IpcFiles.ownFileProblem(base.resolve("missing"), 100).contains("not a regular file"));
    }

    @Test
    void shouldAcceptOnlyADirectoryOfThisUserThatNobodyElseMayEnter() throws Exception
    {
        final Path dir = Files.createDirectory(base.resolve("d"));
        for (final String mode : new String[]{"rwx------", "rwx--x--x", "rwxr-x---", "rwxrwxrwx"})
        {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
            final String problem = IpcFiles.directoryProblem(dir);
            if (mode.equals("rwx------"))
            {
                assertNull(problem);
            }
            else
            {
                assertEquals("the IPC directory " + dir + " has mode " + mode + ", so other users may reach the NIC's " +
                    "memory: run chmod 700 " + dir + " or give another --ipc-dir", problem);
            }
        }
        final Path file = Files.createFile(base.resolve("file"));
        assertTrue(IpcFiles.directoryProblem(file).contains("is not a directory"));
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> IpcFiles.prepareDirectory(Files.createSymbolicLink(base.resolve("link"), dir)));
        assertTrue(refused.getMessage().contains("is a symbolic link"), refused.getMessage());
    }
}
