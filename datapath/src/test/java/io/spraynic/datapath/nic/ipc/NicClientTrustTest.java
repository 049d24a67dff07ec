package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.WorkCompletion;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a client trusts (docs/IPC.md I10.8, I10.12), against a directory another user made or may write into, a socket
 * another user answers on, and a completion ring the NIC fills with what no NIC writes.
 */
class NicClientTrustTest
{
    /** A uid that is neither root nor, on a test host, the user running the tests. */
    private static final int OTHER_UID = 65534;

    @TempDir
    Path base;

    private static void chown(final Path path, final int uid) throws Exception
    {
        assertEquals(0, new ProcessBuilder("chown", Integer.toString(uid), path.toString()).inheritIO().start().waitFor());
    }

    private static void requireRoot()
    {
        // only root gives a directory to another uid; CI runs as root
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "SKIPPED: needs root to chown");
    }

    /** A directory its group or others may write into: anyone could have planted its socket. */
    @Test
    void shouldRefuseADirectoryOthersMayWriteInto() throws Exception
    {
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5)))
        {
            Files.setPosixFilePermissions(bed.dir, PosixFilePermissions.fromString("rwxrwxrwx"));
            final long start = System.nanoTime();
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> NicClient.connect(bed.dir, Duration.ofSeconds(5)));
            assertTrue(refused.getMessage().contains("may be written by others than its owner"), refused.getMessage());
            assertTrue(System.nanoTime() - start < 2_000_000_000L, "at once: waiting won't help");
            Files.setPosixFilePermissions(bed.dir, PosixFilePermissions.fromString("rwx------"));
            try (NicClient _ = NicClient.connect(bed.dir, Duration.ofSeconds(5)))
            {
                // its own directory again: served
            }
        }
    }

    /**
     * Another user made the directory first where anyone may (the default lies in {@code /dev/shm}), with an
     * announcement of this version in it: before, the client read it and connected to whatever listened there.
     */
    @Test
    void shouldRefuseADirectoryAnotherUserMadeWhereAnyoneMay() throws Exception
    {
        requireRoot();
        final Path shared = Files.createDirectory(base.resolve("shm"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertEquals(0, new ProcessBuilder("chmod", "1777", shared.toString()).start().waitFor());
        final Path squatted = Files.createDirectory(shared.resolve("spraynic-victim"));
        final UnsafeBuffer announcement = new UnsafeBuffer(new byte[IpcFileDescriptor.HEADER_LENGTH]);
        announcement.putInt(IpcFileDescriptor.MAGIC_OFFSET, IpcFileDescriptor.MAGIC, IpcMessages.ORDER);
        announcement.putInt(IpcFileDescriptor.VERSION_OFFSET, IpcFileDescriptor.VERSION, IpcMessages.ORDER);
        Files.write(squatted.resolve(IpcFileDescriptor.CONTROL_FILE), announcement.byteArray());
        Files.setPosixFilePermissions(squatted, PosixFilePermissions.fromString("rwxr-xr-x"));
        chown(squatted, OTHER_UID);
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> NicClient.connect(squatted, Duration.ofSeconds(5)));
        assertTrue(refused.getMessage().contains("belongs to uid " + OTHER_UID + ", not to this user or root"),
            refused.getMessage());
    }

    /**
     * The directory is another user's, where only its owners create entries (a NIC of a service user), but the process
     * answering on its socket is not that user's: not that directory's NIC. Here the NIC runs as root and the
     * directory is given to another uid after it started.
     */
    @Test
    void shouldRefuseASocketAnsweredByAnotherUserThanTheDirectorysOwner() throws Exception
    {
        requireRoot();
        // under /run (root's, 0755): every directory above the NIC's is one only root can have made
        final Path protectedBase = Files.createTempDirectory(Path.of("/run"), "spraynic-trust-");
        try (IpcTestBed bed = new IpcTestBed(protectedBase, NicConnection.Kind.SPRAY, Duration.ofSeconds(5)))
        {
            chown(bed.dir, OTHER_UID);
            try
            {
                final IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> NicClient.connect(bed.dir, Duration.ofSeconds(5)));
                assertTrue(refused.getMessage().contains("runs as uid 0, not as uid " + OTHER_UID), refused.getMessage());
            }
            finally
            {
                chown(bed.dir, 0);
            }
        }
        finally
        {
            assertEquals(0, new ProcessBuilder("rm", "-rf", protectedBase.toString()).start().waitFor());
        }
    }

    /**
     * Another user's directory whose parent is not world-writable but belongs to a third user: that user could have
     * made the path, and the directory with it. Every directory above must be root's or the owner's.
     */
    @Test
    void shouldRefuseADirectoryOfAnotherUserUnderADirectoryOfAThird() throws Exception
    {
        requireRoot();
        final Path theirs = Files.createDirectory(base.resolve("theirs"));
        Files.setPosixFilePermissions(theirs, PosixFilePermissions.fromString("rwxr-xr-x"));
        chown(theirs, OTHER_UID - 1);
        final Path dir = Files.createDirectory(theirs.resolve("ipc"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        chown(dir, OTHER_UID);
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> NicClient.connect(dir, Duration.ofSeconds(5)));
        assertTrue(refused.getMessage().contains("lies under " + theirs.toRealPath() + " (uid " + (OTHER_UID - 1)),
            refused.getMessage());
    }

    /**
     * A completion ring whose head record claims 0x7FFFFFF9 bytes: before, {@code poll} threw
     * IndexOutOfBoundsException (a padding record) or handed the same completion out for ever. Now the queue breaks,
     * says why, and hands out nothing; records that are not completions are skipped on the way.
     */
    @Test
    void shouldBreakACompletionQueueWhoseRingHoldsWhatNoNicWrites()
    {
        final OneToOneRingBuffer ring = new OneToOneRingBuffer(new UnsafeBuffer(ByteBuffer.allocateDirect(
            4096 + org.agrona.concurrent.ringbuffer.RingBufferDescriptor.TRAILER_LENGTH)));
        final ClientCompletionQueue queue = new ClientCompletionQueue(ring);
        final UnsafeBuffer record = new UnsafeBuffer(new byte[ConnectionRings.WC_LENGTH]);
        record.putLong(ConnectionRings.WC_ID_OFFSET, 11, IpcMessages.ORDER);
        assertTrue(ring.write(ConnectionRings.COMPLETION + 1, record, 0, record.capacity()), "not a completion");
        assertTrue(ring.write(ConnectionRings.COMPLETION, record, 0, record.capacity()));
        record.putLong(ConnectionRings.WC_ID_OFFSET, 12, IpcMessages.ORDER);
        assertTrue(ring.write(ConnectionRings.COMPLETION, record, 0, record.capacity()));
        final WorkCompletion[] into = {new WorkCompletion(), new WorkCompletion()};
        assertFalse(queue.isEmpty());
        assertEquals(2, queue.poll(into), "the record that is not a completion is skipped, not handed out");
        assertEquals(11, into[0].wrId());
        assertEquals(12, into[1].wrId());
        assertTrue(queue.isEmpty());

        final int head = (int)(ring.consumerPosition() & (4096 - 1));
        ring.buffer().putInt(head + 4, -1); // a padding record...
        ring.buffer().putIntOrdered(head, 0x7FFF_FFF9); // ...whose length is past the ring's end
        final WorkCompletion one = new WorkCompletion();
        assertFalse(queue.poll(one));
        assertEquals(0, queue.poll(into));
        assertTrue(queue.isEmpty());
        assertTrue(queue.failure().contains("B at " + head), queue.failure());
    }

    /** A completion queue that works says so. */
    @Test
    void shouldHaveNoFailureWhileItsRingIsSound()
    {
        final OneToOneRingBuffer ring = new OneToOneRingBuffer(new UnsafeBuffer(ByteBuffer.allocateDirect(
            4096 + org.agrona.concurrent.ringbuffer.RingBufferDescriptor.TRAILER_LENGTH)));
        final ClientCompletionQueue queue = new ClientCompletionQueue(ring);
        assertFalse(queue.poll(new WorkCompletion()));
        assertNull(queue.failure());
    }
}
